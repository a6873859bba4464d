"""The explorer: find by seed, shrink, replay, remember, and check determinism."""

from __future__ import annotations

import asyncio
import re
import itertools
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import agentsim
from agentsim import ReplayPolicy, Schedule
import agentsim.timing
from agentsim.explore import FailureDatabase, SingleScheduleWarning
from agentsim.timing import DelaySource, uniform


class DoubleBooking(Exception):
    pass


async def booking_race(fixed: bool = False) -> None:
    """Two requests for the last seat. A checks at 1.00 s and writes its booking
    after a 50 ms database round trip; B checks at 1.05 s, the instant A's write
    lands. In stock order A's write (scheduled first) wins; if B's check comes
    first, both book the seat - unless the check and the write hold a lock."""
    seats = {"left": 1}
    lock = asyncio.Lock()

    async def book(check_after: float) -> None:
        await asyncio.sleep(1.0)
        if check_after:
            await asyncio.sleep(check_after)
        async with lock if fixed else _nothing():
            if seats["left"] > 0:
                await asyncio.sleep(0.05)  # the database round trip
                seats["left"] -= 1
        if seats["left"] < 0:
            raise DoubleBooking(f"seats left: {seats['left']}")

    await asyncio.gather(book(0.0), book(0.05))


class _nothing:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


def test_explore_finds_shrinks_and_replays_the_race(tmp_path: Path) -> None:
    report = agentsim.explore(booking_race, runs=100, seed=0, database=tmp_path)
    assert report.runs_executed >= 1 and len(report.failures) == 1
    failure = report.failures[0]
    assert isinstance(failure.error, DoubleBooking)
    assert failure.strategy == "portfolio" and failure.seed == report.runs_executed - 1  # the default; stops at the first
    # The seed replays the same schedule exactly...
    again = agentsim.replay(booking_race, seed=failure.seed, strategy=failure.strategy)
    assert again.trace.digest() == failure.trace.digest()
    # ...and the repro line's (shrunk) schedule fails the same way.
    assert failure.minimal is not None
    assert "schedule=" in failure.repro and failure.minimal.schedule.encode() in failure.repro
    minimal = agentsim.replay(booking_race, schedule=failure.minimal.schedule.encode())
    assert isinstance(minimal.exception, DoubleBooking)
    assert len(failure.minimal.deviations) <= len(failure.trace.deviations)
    assert len(failure.minimal.deviations) >= 1  # FIFO order alone does not fail
    assert "seats left: -1" in failure.format()


def test_the_fixed_twin_never_fails_and_fifo_is_one_schedule(tmp_path: Path) -> None:
    report = agentsim.explore(booking_race, True, runs=60, database=tmp_path)
    assert report.ok and report.runs_executed == 60
    assert report.distinct_schedules > 1
    fifo = agentsim.explore(booking_race, True, runs=10, strategy="fifo", database=tmp_path)
    assert fifo.distinct_schedules == 1


def test_pct_finds_the_race_too(tmp_path: Path) -> None:
    report = agentsim.explore(booking_race, runs=100, strategy="pct", database=tmp_path)
    assert len(report.failures) == 1
    failure = report.failures[0]
    # The reported strategy carries PCT's measured parameters: (seed, strategy)
    # replays the run exactly, as the schedule does.
    assert failure.strategy == failure.schedule.strategy and failure.strategy.startswith("pct/3/")
    replayed = agentsim.replay(booking_race, schedule=failure.schedule)
    assert replayed.trace.digest() == failure.trace.digest()
    by_seed = agentsim.replay(booking_race, seed=failure.seed, strategy=failure.strategy)
    assert by_seed.trace.digest() == failure.trace.digest()


def test_without_stop_on_first_every_failing_seed_is_reported(tmp_path: Path) -> None:
    report = agentsim.explore(booking_race, runs=40, stop_on_first=False, shrink_failures=False, database=tmp_path)
    assert report.runs_executed == 40
    assert len(report.failures) >= 2
    assert all(failure.minimal is None for failure in report.failures)
    assert len({failure.seed for failure in report.failures}) == len(report.failures)


def test_a_fixed_bug_is_forgotten(tmp_path: Path) -> None:
    database = FailureDatabase(tmp_path)
    key = "tests:booking"
    database.save(key, Schedule(3, "random"))
    report = agentsim.explore(booking_race, True, runs=5, database=tmp_path, key=key)
    assert report.ok and report.replayed_from_database == 1
    assert database.load(key) == []


_leak = itertools.count()


async def leaks_state_between_runs() -> None:
    # Reads a counter that survives from one run to the next: not deterministic.
    await asyncio.sleep(next(_leak) % 3 * 0.1)


def test_check_determinism_names_the_first_differing_event(tmp_path: Path) -> None:
    report = agentsim.explore(leaks_state_between_runs, runs=3, check_determinism=True, database=tmp_path)
    assert report.nondeterminism
    case = report.nondeterminism[0]
    assert case.first is not None and case.second is not None
    assert (case.first.ticks, case.first.kind) != (case.second.ticks, case.second.kind) or case.first.detail != case.second.detail
    assert "not deterministic" in case.format()
    assert not report.ok
    clean = agentsim.explore(booking_race, True, runs=10, check_determinism=True, database=tmp_path)
    assert clean.nondeterminism == []


async def slow_backend_times_out() -> None:
    """A reply due within 0.6 s; the backend's latency is uniform(0, 1) s."""
    latency = DelaySource(uniform(0.0, 1.0), name="latency", stream="backend")
    reply = asyncio.ensure_future(asyncio.sleep(latency.seconds(0)))
    await asyncio.wait_for(reply, timeout=0.6)


def test_shrinking_narrows_delay_jitter_to_what_still_fails(tmp_path: Path) -> None:
    report = agentsim.explore(slow_backend_times_out, runs=50, database=tmp_path)
    failure = report.failures[0]
    assert isinstance(failure.error, TimeoutError)
    assert failure.minimal is not None
    jitter = failure.minimal.schedule.jitter
    assert 0.0 < jitter < 1.0  # no jitter (0.5 s, the nominal latency) would pass
    assert isinstance(agentsim.replay(slow_backend_times_out, schedule=failure.minimal.schedule).exception, TimeoutError)
    assert agentsim.replay(slow_backend_times_out, schedule=Schedule(failure.seed, "replay", {}, 0.0)).ok


def test_bad_arguments_are_typed_errors() -> None:
    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.explore(booking_race, runs=-1)
    assert info.value.parameter == "runs"
    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.explore(booking_race, strategy="chaos")
    assert info.value.parameter == "strategy"
    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.replay(booking_race, schedule="not a schedule")
    assert info.value.parameter == "schedule"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_replay_policy_without_deviations_is_fifo(backend: str) -> None:
    import anyio

    async def program() -> list[str]:
        log: list[str] = []

        async def worker(name: str, period: float) -> None:
            for _ in range(5):
                await anyio.sleep(period)
                log.append(f"{name}@{agentsim.now():.2f}")

        async with anyio.create_task_group() as group:
            for i in range(4):
                group.start_soon(worker, f"w{i}", 0.1 * (1 + i % 2))
        return log

    fifo = agentsim.simulate(program, backend=backend)
    replayed = agentsim.simulate(program, backend=backend, strategy=ReplayPolicy({}))

    def steps(result: agentsim.SimulationResult[list[str]]) -> list[tuple[int, str]]:
        return [(event.ticks, event.task) for event in result.trace.events if event.kind == "step"]

    assert replayed.value == fifo.value
    assert steps(replayed) == steps(fifo)
    assert replayed.trace.deviations == {}


def _narrow_race() -> Any:
    async def main() -> None:
        order: list[str] = []

        async def reply() -> None:
            await agentsim.timing.sleep_between(0.28, 0.305)
            order.append("reply")

        async def deadline() -> None:
            await agentsim.timing.sleep_between(0.30, 0.33)
            order.append("deadline")

        async with asyncio.TaskGroup() as group:
            group.create_task(reply())
            group.create_task(deadline())
        assert order[0] == "reply", "the deadline passed before the reply"

    return main


def test_run_zero_is_the_nominal_schedule_and_the_report_counts_choices() -> None:
    report = agentsim.explore(_narrow_race(), runs=1, strategy="random", database=None)
    assert report.ok and report.choice_points == [1]  # nominal timing passes
    report = agentsim.explore(_narrow_race(), runs=30, strategy="random", database=None, stop_on_first=False)
    assert len(report.choice_points) == 30 and all(points >= 1 for points in report.choice_points)
    assert report.failures and all(failure.strategy == "random" for failure in report.failures)
    assert 2 <= report.distinct_schedules <= report.distinct_timings
    assert report.stock_choice_points == 1 and len(report.explored_choice_points) == 29
    assert "run 0 (stock): 1 choice point(s), explored runs: " in report.format()


def test_jitter_variants_count_as_timings_not_orders() -> None:
    async def main() -> None:
        await agentsim.timing.sleep_between(0.1, 0.2)

    report = agentsim.explore(main, runs=10, strategy="jitter", database=None)
    assert report.distinct_schedules == 1 and report.distinct_timings == 10
    # Jitter decides nothing itself: its runs show draws, not choices (run 0 apart).
    assert report.explored_choice_points == [0] * 9
    assert "explored runs: 0-0 choice point(s) each" in report.format() and "0.9 delay draw(s) per run" in report.format()
    assert report.jitter_draws == 9 and report.windowed_timers == 1  # run 0 is nominal


def test_one_order_and_one_timing_with_windows_set_warns() -> None:
    async def main() -> None:
        await agentsim.timing.sleep_between(0.1, 0.2)  # a window that overlaps nothing

    with pytest.warns(SingleScheduleWarning, match="windowed timer"):
        report = agentsim.explore(main, runs=10, strategy="random", database=None)
    assert report.single_timing and "health:" in report.format()
    # The default strategy times that delay: several timings, no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = agentsim.explore(main, runs=10, database=None)
    assert report.distinct_timings > 1 and not report.single_timing


def test_a_sweep_with_nothing_to_explore_says_one_run_is_enough() -> None:
    async def main() -> None:
        await asyncio.sleep(1.0)

    with pytest.warns(SingleScheduleWarning, match="one run is enough"):
        report = agentsim.explore(main, runs=5, database=None)
    assert report.single_schedule and "health:" in report.format()


def test_explore_takes_a_policy_instance_and_reports_replayable_schedules() -> None:
    class PreferLast(agentsim.SchedulingPolicy):
        name = "prefer-last"

        def choose(self, kind: str, labels: Any) -> int:
            return len(labels) - 1

    report = agentsim.explore(_narrow_race(), runs=3, strategy=PreferLast(), database=None)
    [failure] = report.failures
    assert failure.schedule.deviations == {0: 1}
    assert agentsim.replay(_narrow_race(), schedule=failure.schedule.encode()).exception is not None


def test_a_jitter_schedule_round_trips_and_replays_drawn_delays() -> None:
    schedule = Schedule(3, "replay", {2: 1}, 0.5, windows=False)
    assert schedule.encode() == "3:jitter+2=1:j0.5"
    assert Schedule.decode(schedule.encode()) == schedule
    assert schedule.policy().windows is False


def test_a_failure_report_leads_with_the_error_and_shows_the_decisive_moments() -> None:
    async def main() -> None:
        async def caller() -> None:
            await agentsim.timing.sleep_between(0.30, 0.33)
            agentsim.record_event("milestone", "caller barged in")

        async def assistant() -> None:
            await agentsim.timing.sleep_between(0.28, 0.305)
            agentsim.record_event("milestone", "assistant finished")

        order: list[str] = []

        async def track(name: str, job: Any) -> None:
            await job()
            order.append(name)

        async with asyncio.TaskGroup() as group:
            group.create_task(track("caller", caller))
            group.create_task(track("assistant", assistant))
        for index in range(200):  # a long tail of unrelated activity
            await asyncio.sleep(0.01)
            agentsim.record_event("send", f"frame{index} of the call")
        if order[0] == "caller":
            raise RuntimeError("barge-in before the assistant finished")

    report = agentsim.explore(main, runs=40, database=None)
    [failure] = report.failures
    text = failure.format()
    first, second = text.splitlines()[:2]
    assert first == "RuntimeError: barge-in before the assistant finished"
    assert second.startswith("  raised at ") and "test_explore.py" in second and "in main" in second
    timeline = failure.minimal.timeline() if failure.minimal else ""
    assert ">>" in timeline and "!!" in timeline and "caller barged in" in timeline and "..." in timeline
    assert "track#" in timeline or "main.<locals>.track#" in timeline  # unnamed tasks say what they run
    assert len(timeline.splitlines()) <= 40
    assert len(failure.format(verbose=True).splitlines()) > len(text.splitlines()) + 200


async def _two_bugs_of_one_type() -> None:
    order: list[str] = []

    async def one(name: str, low: float, high: float) -> None:
        await agentsim.timing.sleep_between(low, high)
        order.append(name)

    async with asyncio.TaskGroup() as group:
        group.create_task(one("a", 0.28, 0.305))
        group.create_task(one("b", 0.30, 0.33))
    if order[0] == "b":
        raise AssertionError("bug A: b overtook a")  # needs the deviation
    raise AssertionError("bug B: always, in stock order")  # a different bug, same type


def test_shrinking_never_swaps_one_bug_for_another_of_the_same_type() -> None:
    # Seeds 1-30 (run 0, the stock schedule, would report bug B directly).
    report = agentsim.explore(_two_bugs_of_one_type, seeds=range(1, 31), stop_on_first=False, database=None)
    bug_a = [failure for failure in report.failures if "bug A" in str(failure.error)]
    assert bug_a, report.format()
    for failure in bug_a:
        assert failure.minimal is not None
        assert "bug A" in str(failure.minimal.exception)  # kept, not shrunk into bug B
        assert failure.minimal.deviations  # the deviation that matters stays
        replayed = agentsim.replay(_two_bugs_of_one_type, schedule=failure.minimal.schedule.encode())
        assert "bug A" in str(replayed.exception)


def test_a_failure_that_does_not_replay_is_reported_as_nondeterminism() -> None:
    calls = itertools.count()

    async def fails_only_the_first_time() -> None:
        await agentsim.timing.sleep_between(0.1, 0.2)
        if next(calls) == 0:  # state that outlives the run
            raise AssertionError("flaky")

    report = agentsim.explore(fails_only_the_first_time, runs=3, database=None)
    assert report.failures and report.failures[0].minimal is None
    assert report.nondeterminism and not report.ok
    assert "not deterministic" in report.format()


def test_the_shrinker_runs_each_schedule_once() -> None:
    from agentsim.explore._shrink import shrink

    report = agentsim.explore(_two_bugs_of_one_type, seeds=range(1, 31), database=None, shrink_failures=False, stop_on_first=False)
    failing = next(failure for failure in report.failures if "bug A" in str(failure.error))
    seen: list[Schedule] = []

    def run(schedule: Schedule) -> agentsim.SimulationResult[object]:
        seen.append(schedule)
        return agentsim.replay(_two_bugs_of_one_type, schedule=schedule)

    result = agentsim.replay(_two_bugs_of_one_type, seed=failing.seed, strategy=failing.strategy)
    minimal = shrink(run, result)
    assert minimal is not None and len(seen) == len(set(seen)) == minimal.shrink_runs


def test_failure_reports_show_the_timing_that_mattered() -> None:
    # A window choice shows the windows and when the pick fired; a delay drawn
    # under jitter that shrinking kept shows as a `delay` line.
    async def reply_or_apologise() -> None:
        answer = asyncio.create_task(agentsim.timing.sleep_between(0.98, 1.01))
        await asyncio.sleep(1.0)
        assert answer.done(), "apologised, then answered"

    async def late() -> None:
        latency = agentsim.timing.DelaySource(agentsim.timing.uniform(0.5, 1.5), name="latency", stream="test")
        answer = asyncio.create_task(latency.sleep(0))
        await asyncio.sleep(1.2)
        assert answer.done(), "late"

    for seed in range(3):
        window = agentsim.explore(reply_or_apologise, runs=50, seed=seed, strategy="random", database=None).failures[0].format()
        assert "[due] fired at 1000.000 ms" in window and "[980.000-1010.000 ms, nominal 995.000]" in window
        drawn = agentsim.explore(late, runs=50, seed=seed, strategy="jitter", database=None).failures[0].format()
        match = re.search(r"delay .* latency\[0\] drew (\d+\.\d+) ms, nominal 1000\.000 ms", drawn)
        assert match is not None and float(match.group(1)) > 1200.0, drawn
