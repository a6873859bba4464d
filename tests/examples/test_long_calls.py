"""Long-call races (``examples/long_calls/``): a coincidence late in a
30-minute call. The stock schedule passes; a sweep focused on the race's
window finds it in a few dozen runs (base seeds 0 and 1000) and the
failure replays from scratch; the fixed twin passes a focused sweep.
(``benchmarks/long_calls.py`` sets the whole-run default beside it.)"""

from __future__ import annotations

from typing import Any

import pytest

import agentsim

from . import examples_dir

EXAMPLES = examples_dir.names("long_calls")


def load(name: str) -> Any:
    return examples_dir.load("long_calls", name)


def _leaf(error: BaseException | None) -> BaseException | None:
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def test_there_are_long_call_races_on_the_app_the_sdk_and_the_simulated_server() -> None:
    assert {"transfer_at_session_limit", "transfer_across_sdk_sessions", "transfer_on_simulated_server"} <= set(EXAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLES)
def test_the_stock_call_passes_and_the_race_is_late(name: str) -> None:
    example = load(name)
    result = agentsim.simulate(example.racy, wall_timeout=300)
    assert result.ok and result.end_time >= 29 * 60
    assert 20 * 60 < example.TRANSFER_AT < example.WINDOW_END < result.end_time


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1000])
@pytest.mark.parametrize("name", EXAMPLES)
def test_a_focused_sweep_finds_the_race_and_it_replays(name: str, seed: int) -> None:
    example = load(name)
    window = (example.WINDOW_START, example.WINDOW_END)
    report = agentsim.explore(example.racy, runs=150, seed=seed, focus=window, database=None, shrink_failures=False, wall_timeout=300)
    assert report.failures, f"no failure in {report.runs_executed} focused runs"
    failure = report.failures[0]
    replayed = agentsim.replay(example.racy, schedule=failure.schedule, wall_timeout=300)
    assert type(_leaf(replayed.exception)) is type(failure.error)
    assert replayed.trace.digest() == failure.trace.digest()


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLES)
def test_the_fixed_twin_passes_a_focused_sweep(name: str) -> None:
    example = load(name)
    report = agentsim.explore(example.fixed, runs=40, focus=(example.WINDOW_START, example.WINDOW_END), database=None, wall_timeout=300)
    assert report.ok and report.runs_executed == 40 and report.distinct_timings > 20
