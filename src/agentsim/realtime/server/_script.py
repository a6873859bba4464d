"""What the simulated server answers: scripted steps."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..._kernel.errors import SimulationConfigError


@dataclass(frozen=True)
class Reply:
    """An assistant answer: ``transcript`` spoken in ``audio_seconds`` of audio
    (default: ``seconds_per_word`` of the server per word)."""

    transcript: str
    audio_seconds: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.transcript, str):
            raise SimulationConfigError("Reply.transcript", self.transcript, "the words of the answer, a str")
        if self.audio_seconds is not None and not (isinstance(self.audio_seconds, int | float) and self.audio_seconds >= 0):
            raise SimulationConfigError("Reply.audio_seconds", self.audio_seconds, "seconds of audio >= 0, or None for seconds_per_word per word")


@dataclass(frozen=True)
class CallTool:
    """A response that calls tool ``name`` with ``arguments`` (a dict or JSON text)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    call_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SimulationConfigError("CallTool.name", self.name, "the name of one of the agent's tools")
        if isinstance(self.arguments, str):
            try:
                json.loads(self.arguments)
            except ValueError:
                raise SimulationConfigError("CallTool.arguments", self.arguments, "a dict, or JSON text of one") from None
        elif not isinstance(self.arguments, dict):
            raise SimulationConfigError("CallTool.arguments", self.arguments, "a dict, or JSON text of one")

    @property
    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


Step = Reply | CallTool
