"""Thirty simulated minutes of a voice call through the server simulator.

``examples/long_call.py`` (speech after 8-40 s silences, tool calls, one turn
in four barging in) on the real adapter, under FIFO and random seed 3. The
wall time is reported by ``benchmarks/long_call.py``, not asserted here.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

import agentsim

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "strategy"), [(0, "fifo"), (3, "random")])
def test_thirty_minute_call_breaks_no_server_rule(seed: int, strategy: str) -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        long_call = importlib.import_module("long_call")
    finally:
        sys.path.remove(str(EXAMPLES))
    summary = agentsim.run(long_call.long_call, 30.0, seed=seed, strategy=strategy, wall_timeout=300)
    assert summary.violations == []
    assert summary.minutes == pytest.approx(30.0)
    # The call really had the traffic it claims: many turns, tools, barge-ins
    # that the server cancelled, and truncations at what was heard.
    assert summary.turns >= 60 and summary.tool_calls >= 10 and summary.barge_ins >= 10
    assert summary.responses >= summary.turns  # every turn answered (tool turns twice)
    assert summary.cancelled >= summary.barge_ins * 0.8
    assert summary.truncations >= summary.playback_interrupted > 0
    # The caller heard most, never more, of what the server sent.
    assert 0.5 * summary.sent_seconds < summary.heard_seconds <= summary.sent_seconds


@pytest.mark.slow
def test_the_benchmark_floor_replays_what_the_sdk_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/long_call.py's timed floor is honest only if it gives the SDK
    what the simulated call gave it: every frame, and every playback report
    of the simulated player to the session's tracker, at its instant."""
    import asyncio
    import importlib.util
    import json
    import subprocess

    from agents.realtime.model import RealtimePlaybackTracker

    benchmarks = EXAMPLES.parent / "benchmarks"
    recorded_path = tmp_path / "recorded.json"
    # (record_case patches the SDK's classes: a process of its own.)
    subprocess.run([sys.executable, str(benchmarks / "long_call.py"), "--case", "1.5,0,fifo,", "--record", str(recorded_path)], check=True, timeout=120)
    recorded = json.loads(recorded_path.read_text())
    assert len(recorded["frames"]) > 100 and len(recorded["plays"]) > 100  # a call with audio played

    monkeypatch.syspath_prepend(str(benchmarks))
    spec = importlib.util.spec_from_file_location("long_call_benchmark", benchmarks / "long_call.py")
    assert spec is not None and spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    from minimal_loop import run_minimal

    replayed: list[list[object]] = []
    on_play_ms = RealtimePlaybackTracker.on_play_ms

    def counting_on_play_ms(self: RealtimePlaybackTracker, item_id: str, item_content_index: int, ms: float) -> None:
        replayed.append([asyncio.get_running_loop().time(), item_id, item_content_index, ms])
        on_play_ms(self, item_id, item_content_index, ms)

    monkeypatch.setattr(RealtimePlaybackTracker, "on_play_ms", counting_on_play_ms)
    seen = run_minimal(lambda: benchmark.sdk_floor(recorded, timed=True), tuned=True)
    assert seen == len(recorded["frames"])
    assert [play[1:] for play in replayed] == [play[1:] for play in recorded["plays"]]
    assert [play[0] for play in replayed] == pytest.approx([play[0] for play in recorded["plays"]], abs=1e-6)
