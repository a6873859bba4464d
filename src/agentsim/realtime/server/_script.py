"""What the simulated server answers: scripted steps."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reply:
    """An assistant answer: ``transcript`` spoken in ``audio_seconds`` of audio
    (default: ``seconds_per_word`` of the server per word)."""

    transcript: str
    audio_seconds: float | None = None


@dataclass(frozen=True)
class CallTool:
    """A response that calls tool ``name`` with ``arguments`` (a dict or JSON text)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    call_id: str | None = None

    @property
    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


Step = Reply | CallTool
