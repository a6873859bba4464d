"""Loading the example programs of one ``examples/`` folder by module name."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import sdk_at_least

EXAMPLES_ROOT = Path(__file__).resolve().parents[2] / "examples"


def names(folder: str) -> list[str]:
    """The example modules in ``examples/<folder>``, sorted."""
    return sorted(path.stem for path in (EXAMPLES_ROOT / folder).glob("*.py") if not path.stem.startswith("_"))


#: Examples whose race exists only from some openai-agents release on (CI
#: runs the suite on 0.13.6, 0.21.1 and the newest).
SDK_MINIMUM = {
    "timeout_vs_late_result": ("0.21", "its model is agents.testing's ScriptedModel"),
    "tool_timeout_through_runner": ("0.21", "its model is agents.testing's ScriptedModel"),
    # On 0.13.6 the session's close cancels tool tasks without awaiting them
    # (0.21.1 awaits them): 200 runs of the racy app find no failure there.
    "close_vs_inflight_tool": ("0.21", "the SDK's session shows this race from 0.21 on (checked on 0.21.1)"),
    "hang_up_vs_tool_report": ("0.21", "the SDK's session shows this race from 0.21 on (checked on 0.21.1)"),
    "slow_model_vs_turn_deadline": ("0.21", "its model is agents.testing's ScriptedModel"),
    # On 0.13.6 no schedule shows it (60 runs each of timed and jitter find
    # nothing: the old session does not surface the late answer's audio).
    "server_latency_vs_apology": ("0.21", "the SDK's session shows this race from 0.21 on (checked on 0.21.1)"),
}


def load(folder: str, name: str) -> Any:
    """Import ``examples/<folder>/<name>.py`` (its folder goes on ``sys.path``);
    skip the test on an SDK release older than the example needs."""
    if name in SDK_MINIMUM and not sdk_at_least(SDK_MINIMUM[name][0]):
        minimum, why = SDK_MINIMUM[name]
        pytest.skip(f"{name} needs openai-agents >= {minimum}: {why}")
    directory = str(EXAMPLES_ROOT / folder)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return importlib.import_module(name)
