"""The benchmarks' floors are honest: the SDK in a floor gets what it got in
the simulation it stands beside.

A floor that gives the SDK less work than the simulated run did flatters
nothing but makes the simulation's ratio to it look worse; one that gives it
more hides the simulation's cost. ``benchmarks/long_call.py`` replays what
it recorded; ``benchmarks/long_session.py`` rebuilds the same traffic by
hand. Both are checked here against the simulation on short calls (FIFO:
the floors replay one schedule). Speed itself is never asserted.
"""

from __future__ import annotations

import asyncio
import collections
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import agentsim
from tests.conftest import sdk_at_least

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _benchmark(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (a name of its own: examples/ has
    a ``long_call`` too), with ``benchmarks/`` importable for its helpers."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_long_call_floor_replays_what_the_sdk_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every frame, and every playback report of the simulated player to the
    session's tracker, at its instant."""
    from agents.realtime.model import RealtimePlaybackTracker

    recorded_path = tmp_path / "recorded.json"
    # (record_case patches the SDK's classes: a process of its own.)
    subprocess.run([sys.executable, str(BENCHMARKS / "long_call.py"), "--case", "1.5,0,fifo,", "--record", str(recorded_path)], check=True, timeout=120)
    recorded = json.loads(recorded_path.read_text())
    assert len(recorded["frames"]) > 100 and len(recorded["plays"]) > 100  # a call with audio played

    benchmark = _benchmark("long_call", monkeypatch)
    from minimal_loop import run_minimal

    replayed: list[list[Any]] = []
    on_play_ms = RealtimePlaybackTracker.on_play_ms

    def counting_on_play_ms(self: RealtimePlaybackTracker, item_id: str, item_content_index: int, ms: float) -> None:
        replayed.append([asyncio.get_running_loop().time(), item_id, item_content_index, ms])
        on_play_ms(self, item_id, item_content_index, ms)

    monkeypatch.setattr(RealtimePlaybackTracker, "on_play_ms", counting_on_play_ms)
    seen = run_minimal(lambda: benchmark.sdk_floor(recorded, timed=True), tuned=True)
    assert seen == len(recorded["frames"])
    assert [play[1:] for play in replayed] == [play[1:] for play in recorded["plays"]]
    assert [play[0] for play in replayed] == pytest.approx([play[0] for play in recorded["plays"]], abs=1e-6)


def test_the_realtime_session_timed_floor_gives_the_sdk_the_same_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same session events by kind, and the same calls on the model, as
    the simulated session: answers that end (``audio_end``), one cut by the
    application's interrupt (``audio_interrupted``), tool calls."""
    benchmark = _benchmark("long_session", monkeypatch)
    from minimal_loop import run_minimal

    application = benchmark.realtime_application
    kinds: collections.Counter[str] = collections.Counter()

    class CountingSession:
        """The session, counting the kinds of event the application reads."""

        def __init__(self, session: Any) -> None:
            self._session = session

        def __getattr__(self, name: str) -> Any:
            return getattr(self._session, name)

        async def _events(self) -> Any:
            async for event in self._session:
                kinds[event.type] += 1
                yield event

        def __aiter__(self) -> Any:
            return self._events()

    async def counting_application(session: Any, minutes: int) -> int:
        return int(await application(CountingSession(session), minutes))

    monkeypatch.setattr(benchmark, "realtime_application", counting_application)
    minutes = 5  # the fifth minute's answer is interrupted
    simulated = agentsim.simulate(benchmark.realtime_simulated, minutes, wall_timeout=60)
    assert simulated.ok, simulated.exception
    simulated_kinds, kinds = kinds.copy(), collections.Counter()
    floor = run_minimal(lambda: benchmark.realtime_timed_floor(minutes), tuned=True)
    assert kinds == simulated_kinds
    assert floor == simulated.value
    assert kinds["audio_end"] == minutes - 1 and kinds["audio_interrupted"] == 1 and kinds["tool_end"] == minutes


@pytest.mark.skipif(not sdk_at_least("0.21.0"), reason="the voice session composes with agents.voice.testing, new in openai-agents 0.21")
def test_the_voice_session_timed_floor_gives_the_sdk_the_same_traffic(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same pipeline events and microphone frames as the simulated session."""
    benchmark = _benchmark("long_session", monkeypatch)
    from minimal_loop import run_minimal

    simulated = agentsim.simulate(benchmark.voice_session, 2, True, wall_timeout=60)
    assert simulated.ok, simulated.exception
    floor = run_minimal(lambda: benchmark.voice_timed_floor(2), tuned=True)
    assert floor == simulated.value
    assert floor["session_events"] > 100
