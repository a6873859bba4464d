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
