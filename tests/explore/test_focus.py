"""Focused sweeps: deviations kept inside a window, runs branched from checkpoints.

The race (tests/explore/focus_programs.py) needs a coincidence in the last
minute of a two-minute call; its twin is fixed. Scheduling-dependent
assertions run over base seeds 0, 100 and 200 (each seed a different sweep).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import agentsim
from agentsim import Focus, FocusNotReachedError, SimulationConfigError
from agentsim._kernel.clock import TICKS_PER_SECOND
from agentsim._kernel.scheduling import PCTPolicy, TimedPolicy
from agentsim._kernel.scheduling.focus import FocusedPolicy
from agentsim.explore._branched import FocusedSweep
from agentsim.explore._focus import seconds_to_ticks
from agentsim.explore._runner import Runner

from . import focus_programs as programs

ROOT = Path(__file__).resolve().parents[2]
WINDOW = programs.WINDOW


def _deviation_seconds(trace: agentsim.Trace) -> list[float]:
    return [event.ticks / TICKS_PER_SECOND for event in trace.events if event.kind == "choice"]


def _runner(fn: object, backend: str = "asyncio") -> Runner:
    return Runner(fn, (), backend, {"max_virtual_time": None, "wall_timeout": 60.0, "allow_escapes": ()})  # type: ignore[arg-type]


# -- the focus itself ------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "window", "moments"),
    [
        ((90, 93.5), (90.0, 93.5), ()),
        ([90, 93.5], (90.0, 93.5), ()),
        ("90:93.5", (90.0, 93.5), ()),
        ("barge-in", None, ("barge-in",)),
        (["barge-in", "disconnect"], None, ("barge-in", "disconnect")),
        ({"window": [1, 2], "margin": 0.5}, (1.0, 2.0), ()),
        (Focus(moments=("x",), margin=2.0), None, ("x",)),
    ],
)
def test_a_focus_is_given_as_a_window_labels_or_a_focus(given: object, window: object, moments: object) -> None:
    focus = Focus.of(given)
    assert focus is not None and focus.window == window and focus.moments == moments
    assert agentsim.ExploreOptions(focus=given).focus == focus


@pytest.mark.parametrize(
    ("given", "parameter"),
    [
        ((5, 5), "focus.window"),
        ((-1, 5), "focus.window"),
        ((1, 2, 3), "focus"),
        (42, "focus"),
        ({"windw": [1, 2]}, "focus"),
        (Focus.__new__(Focus), None),
    ],
)
def test_a_bad_focus_is_a_typed_error_naming_the_field(given: object, parameter: str | None) -> None:
    if parameter is None:
        with pytest.raises(SimulationConfigError, match="margin"):
            Focus(moments=("x",), margin=0)
        return
    with pytest.raises(SimulationConfigError) as raised:
        agentsim.ExploreOptions(focus=given)
    assert raised.value.parameter == parameter


@pytest.mark.parametrize("strategy", ["fifo", "jitter", "exhaustive"])
def test_a_focus_needs_a_strategy_that_explores_windows(strategy: str) -> None:
    with pytest.raises(SimulationConfigError) as raised:
        agentsim.explore(programs.racy, focus=WINDOW, strategy=strategy, runs=2, database=None)
    assert raised.value.parameter == "strategy" and "focus" in raised.value.expected


# -- the kernel's part: deviations inside the window ----------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_every_deviation_falls_inside_the_window(seed: int) -> None:
    start, end = (seconds_to_ticks(WINDOW[0]), seconds_to_ticks(WINDOW[1]))
    inner = TimedPolicy(seed) if seed % 2 else PCTPolicy(seed, steps=32)
    result = agentsim.simulate(programs.racy, strategy=FocusedPolicy(inner, (start, end)))
    seconds = _deviation_seconds(result.trace)
    assert seconds, "the window has choices to deviate at"
    assert all(WINDOW[0] <= each < WINDOW[1] for each in seconds)
    # The same run as a replay schedule, from scratch: the same digest.
    replayed = agentsim.replay(programs.racy, schedule=f"0:timed+{','.join(f'{k}={v}' for k, v in sorted(result.trace.deviations.items()))}")
    assert replayed.trace.digest() == result.trace.digest()


# -- the sweep ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 100, 200])
def test_a_focused_sweep_finds_the_late_race_and_the_fixed_twin_passes(seed: int) -> None:
    report = agentsim.explore(programs.racy, runs=80, seed=seed, focus=WINDOW, database=None, shrink_failures=False)
    assert len(report.failures) == 1 and isinstance(report.failures[0].error, programs.LostAnswer)
    assert report.runs_executed <= 80
    failing = report.failures[0]
    assert "branched at 90 s" in failing.strategy
    assert all(WINDOW[0] <= each < WINDOW[1] for each in _deviation_seconds(failing.trace))
    fixed = agentsim.explore(programs.fixed, runs=80, seed=seed, focus=WINDOW, database=None)
    assert fixed.ok and fixed.runs_executed == 80 and fixed.distinct_timings > 40


def test_forked_and_resimulated_sweeps_make_the_same_report() -> None:
    reports = [
        agentsim.explore(programs.racy, runs=40, seed=300, focus=Focus(window=WINDOW, fork=fork), database=None, stop_on_first=False, shrink_failures=False)
        for fork in (True, False)
    ]
    forked, resimulated = reports
    assert forked.branching is not None and forked.branching.forked
    assert resimulated.branching is not None and not resimulated.branching.forked
    assert forked.failures, "seeds 300-339 hold failures"
    for name in ("runs_executed", "distinct_schedules", "distinct_timings", "choice_points", "windowed_timers"):
        assert getattr(forked, name) == getattr(resimulated, name), name
    assert [failure.schedule.encode() for failure in forked.failures] == [failure.schedule.encode() for failure in resimulated.failures]
    assert [failure.strategy for failure in forked.failures] == [failure.strategy for failure in resimulated.failures]


def test_each_branch_replays_from_scratch_with_the_same_digest() -> None:
    runner = _runner(programs.racy)
    sweep = FocusedSweep(Focus(window=WINDOW), "portfolio", range(10), pct_depth=3, at_once=2)
    candidates = list(sweep.candidates(runner))
    assert len(candidates) == 10 and sweep.branching.branches == 9
    for candidate in candidates:
        assert candidate.outcome is not None
        assert runner.run(candidate.ran).trace.digest() == candidate.outcome.digest


def test_the_report_says_what_branching_did() -> None:
    report = agentsim.explore(programs.fixed, runs=30, focus=WINDOW, database=None)
    branching = report.branching
    assert branching is not None
    assert branching.checkpoints == [WINDOW[0]] and branching.branches == 29 and branching.forked
    assert 0 < branching.cpu_seconds and 0 < branching.whole_run_cpu_seconds
    summary = report.format().splitlines()
    assert any(line.startswith("focus window 90-93.5 s: 29 branch(es) from 1 checkpoint(s) at 90 s, forked") for line in summary)
    assert report.runs_executed == 30 and report.stock_choice_points is None  # run 0 counted with the others


@pytest.mark.parametrize("seed", [0, 100])
def test_a_focused_failure_shrinks_inside_the_window_and_replays(seed: int) -> None:
    report = agentsim.explore(programs.racy, runs=80, seed=seed, focus=WINDOW, database=None)
    failure = report.failures[0]
    assert failure.minimal is not None and failure.minimal.deviations
    assert all(WINDOW[0] <= each < WINDOW[1] for each in _deviation_seconds(failure.minimal.trace))
    replayed = agentsim.replay(programs.racy, schedule=failure.minimal.schedule)
    assert isinstance(replayed.exception, programs.LostAnswer)


@pytest.mark.slow
def test_a_focused_failure_replays_in_a_fresh_process() -> None:
    report = agentsim.explore(programs.racy, runs=80, seed=100, focus=WINDOW, database=None, shrink_failures=False)
    schedule = report.failures[0].schedule.encode()
    code = (
        "import agentsim\nfrom tests.explore import focus_programs as p\n"
        f"result = agentsim.replay(p.racy, schedule={schedule!r})\n"
        "print(type(result.exception).__name__, result.trace.digest())"
    )
    completed = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert completed.stdout.split() == ["LostAnswer", report.failures[0].trace.digest()]


def test_a_focus_on_moments_branches_around_each_instant() -> None:
    report = agentsim.explore(programs.moments, runs=12, focus=Focus(moments=("barge-in",), margin=0.5), database=None)
    assert report.branching is not None
    # 10 s and 10.4 s merge into one window; 30 s is another.
    assert report.branching.checkpoints == [9.5, 29.5]
    assert report.branching.branches == 11 and report.runs_executed == 12


def test_a_focus_on_a_moment_never_evaluated_is_a_typed_error() -> None:
    with pytest.raises(FocusNotReachedError) as raised:
        agentsim.explore(programs.moments, runs=5, focus="disconnect", database=None)
    assert raised.value.moments == ("disconnect",) and raised.value.evaluated == ("barge-in",)
    assert "barge-in" in str(raised.value)


def test_several_bases_explore_a_drifted_prefix() -> None:
    runner = _runner(programs.racy)
    sweep = FocusedSweep(Focus(window=WINDOW, bases=2), "portfolio", range(12), pct_depth=3)
    candidates = list(sweep.candidates(runner))
    assert len(candidates) == 12 and sweep.branching.checkpoints == [WINDOW[0], WINDOW[0]]
    drifted = [candidate for candidate in candidates if candidate.label.startswith("focus base 1") or "branched" in candidate.label][6:]
    before_window = [each for candidate in drifted if candidate.ran.deviations for each in candidate.ran.deviations]
    assert before_window, "the second base's runs deviate before the window"
    for candidate in candidates[-3:]:
        assert candidate.outcome is not None
        assert runner.run(candidate.ran).trace.digest() == candidate.outcome.digest


def test_trio_re_simulates_each_prefix_and_finds_the_order_race() -> None:
    # Trio's epoll set would be shared with forked children: trio branches by re-simulating.
    report = agentsim.explore(programs.trio_race, runs=16, focus=(69.0, 72.0), backend="trio", database=None, stop_on_first=False, shrink_failures=False)
    assert report.branching is not None and not report.branching.forked and report.branching.branches == 15
    assert report.failures and len(report.failures) < 16
    for failure in report.failures:
        assert all(69.0 <= each < 72.0 for each in _deviation_seconds(failure.trace))
        assert isinstance(agentsim.replay(programs.trio_race, schedule=failure.schedule, backend="trio").exception, AssertionError)


def test_a_focused_sweep_takes_no_executor() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool, pytest.raises(SimulationConfigError) as raised:
        agentsim.explore(programs.fixed, runs=3, focus=WINDOW, executor=pool, database=None)
    assert raised.value.parameter == "executor"


def test_a_holder_that_dies_falls_back_to_re_simulating_with_the_same_report(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from agentsim.explore import _forking

    def dies(self: object, index: int, chooser: object) -> None:
        os._exit(3)  # the holder process is killed at its checkpoint

    resimulated = agentsim.explore(programs.racy, runs=20, seed=300, focus=Focus(window=WINDOW, fork=False), database=None, stop_on_first=False, shrink_failures=False)
    monkeypatch.setattr(_forking._Holder, "_park", dies)
    forked = agentsim.explore(programs.racy, runs=20, seed=300, focus=WINDOW, database=None, stop_on_first=False, shrink_failures=False)
    assert forked.branching is not None and "ended without answering" in forked.branching.fallback
    assert "until the holder process ended" in forked.format()
    assert forked.runs_executed == resimulated.runs_executed == 20
    assert forked.distinct_timings == resimulated.distinct_timings
    assert [failure.schedule.encode() for failure in forked.failures] == [failure.schedule.encode() for failure in resimulated.failures]
