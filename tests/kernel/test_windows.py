"""Timers with windows: a delay known as a range, ordered by the policy.

The property tests draw random sets of windows (hypothesis) and check the
kernel's promise on both backends under fifo, jitter, random and PCT (seeds
0-3 each): every timer fires inside its window, after what caused it, and the
clock never runs backwards.
"""

from __future__ import annotations

import asyncio
import pickle
from collections import Counter
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import agentsim
from agentsim import timing
from agentsim._kernel.scheduling import windows as windows_module
from agentsim._kernel.clock import TICKS_PER_SECOND

STRATEGIES = [("fifo", 0), ("jitter", 1)] + [("random", seed) for seed in range(4)] + [("pct", seed) for seed in range(4)]

windows = st.lists(
    st.tuples(
        st.integers(0, 20).map(lambda ms: ms / 1000),  # start after this (a cause)
        st.integers(0, 50).map(lambda ms: ms / 1000),  # earliest, from the start
        st.integers(0, 50).map(lambda ms: ms / 1000),  # window width
        st.integers(0, 30).map(lambda ms: ms / 1000),  # then a second, chained window
    ),
    min_size=1,
    max_size=6,
)


def _window_program(spec: list[tuple[float, float, float, float]]) -> Any:
    async def main() -> list[tuple[int, float, float, float, float]]:
        fired: list[tuple[int, float, float, float, float]] = []

        async def one(index: int, start: float, low: float, width: float, second: float) -> None:
            await anyio.sleep(start)
            began = agentsim.now()
            await timing.sleep_between(low, low + width)
            fired.append((index, began, agentsim.now(), low, width))
            # A timer set by the firing of another is caused by it.
            began = agentsim.now()
            await timing.sleep_between(second, second * 2)
            fired.append((index + 100, began, agentsim.now(), second, second))

        async with anyio.create_task_group() as group:
            for index, (start, low, width, second) in enumerate(spec):
                group.start_soon(one, index, start, low, width, second)
        return fired

    return main


@pytest.mark.parametrize(("strategy", "seed"), STRATEGIES, ids=[f"{s}-{n}" for s, n in STRATEGIES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=windows)
def test_no_timer_fires_outside_its_window_or_before_its_cause(backend: str, strategy: str, seed: int, spec: list[tuple[float, float, float, float]]) -> None:
    result = agentsim.simulate(_window_program(spec), seed=seed, strategy=strategy, backend=backend)
    assert result.ok, result.exception
    fired = result.value
    assert fired is not None and len(fired) == 2 * len(spec)
    for _, began, at, low, width in fired:
        tick = 1 / TICKS_PER_SECOND
        assert began + low - tick <= at <= began + low + width + tick
    times = [at for _, _, at, _, _ in fired]
    assert times == sorted(times)  # appended as they fired: the clock never went back


def test_fifo_fires_at_the_nominal_instant(backend: str) -> None:
    async def main() -> list[float]:
        seen = []
        await timing.sleep_between(0.2, 0.4)
        seen.append(agentsim.now())
        await timing.sleep(timing.exponential(0.5))
        seen.append(agentsim.now())
        return seen

    assert agentsim.run(main, backend=backend) == pytest.approx([0.3, 0.8])


def _two_overlapping() -> Any:
    async def main() -> str:
        order: list[str] = []

        async def reply() -> None:
            await timing.sleep_between(0.28, 0.305)
            order.append("reply")

        async def deadline() -> None:
            await timing.sleep_between(0.30, 0.33)
            order.append("deadline")

        async with anyio.create_task_group() as group:
            group.start_soon(reply)
            group.start_soon(deadline)
        return order[0]

    return main


@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_overlapping_windows_fire_in_both_orders_across_seeds(backend: str, strategy: str) -> None:
    firsts = Counter(agentsim.run(_two_overlapping(), seed=seed, strategy=strategy, backend=backend) for seed in range(30))
    assert firsts["reply"] > 3 and firsts["deadline"] > 3, firsts
    assert {agentsim.run(_two_overlapping(), seed=seed, backend=backend) for seed in range(3)} == {"reply"}


def test_disjoint_windows_never_reorder(backend: str) -> None:
    async def main() -> list[str]:
        order: list[str] = []

        async def at(name: str, low: float, high: float) -> None:
            await timing.sleep_between(low, high)
            order.append(name)

        async with anyio.create_task_group() as group:
            group.start_soon(at, "second", 0.3, 0.4)
            group.start_soon(at, "first", 0.1, 0.29)
        return order

    for seed in range(20):
        result = agentsim.simulate(main, seed=seed, strategy="random", backend=backend)
        assert result.value == ["first", "second"]
        assert [choice for choice in result.trace.choices if choice[0] == "window"] == []


def test_a_window_straddling_a_timeout_is_a_choice_between_them() -> None:
    async def main() -> str:
        try:
            async with asyncio.timeout(1.0):
                await timing.sleep_between(0.5, 1.01)
        except TimeoutError:
            return "timed out"
        return "in time"

    outcomes = Counter(agentsim.run(main, seed=seed, strategy="random") for seed in range(30))
    assert outcomes["timed out"] > 3 and outcomes["in time"] > 3, outcomes
    assert agentsim.run(main) == "in time"  # nominal: 0.755 s
    # A cancelled windowed timer is gone: nothing fires later, no deadlock.
    result = agentsim.simulate(main, seed=next(seed for seed in range(30) if agentsim.run(main, seed=seed, strategy="random") == "timed out"), strategy="random")
    assert result.end_time == pytest.approx(1.0)


def test_jitter_draws_a_point_per_seed_inside_the_window() -> None:
    async def main() -> float:
        await timing.sleep_between(0.2, 0.4)
        return agentsim.now()

    ends = {agentsim.run(main, seed=seed, strategy="jitter") for seed in range(10)}
    assert len(ends) == 10 and all(0.2 <= end <= 0.4 for end in ends)
    assert agentsim.simulate(main, strategy="jitter").windowed_timers == 0
    assert agentsim.simulate(main, strategy="random").windowed_timers == 1


def test_the_stock_choice_everywhere_is_fifo() -> None:
    # ReplayPolicy({}) takes every window choice's option 0 on the policy path:
    # the same run as the fifo fast path.
    async def main() -> list[tuple[str, float]]:
        seen: list[tuple[str, float]] = []

        async def worker(name: str, low: float, high: float) -> None:
            for _ in range(5):
                await timing.sleep_between(low, high)
                seen.append((name, agentsim.now()))
                await asyncio.sleep(0.01)

        async with asyncio.TaskGroup() as group:
            group.create_task(worker("a", 0.1, 0.3))
            group.create_task(worker("b", 0.15, 0.25))
            group.create_task(worker("c", 0.2, 0.2))
        return seen

    stock = agentsim.run(main)
    replayed = agentsim.simulate(main, strategy=agentsim.ReplayPolicy({}, jitter_scale=0.0))
    assert replayed.value == stock
    assert replayed.choice_points > 0


def test_windows_respect_the_virtual_time_limit(backend: str) -> None:
    async def main() -> None:
        await timing.sleep_between(5.0, 7.0)

    with pytest.raises(agentsim.VirtualTimeLimitError):
        agentsim.run(main, backend=backend, max_virtual_time=2.0)
    assert agentsim.run(main, backend=backend, max_virtual_time=10.0) is None


def test_a_windowed_sleep_can_be_cancelled(backend: str) -> None:
    async def main() -> float:
        with anyio.move_on_after(0.1):
            await timing.sleep_between(0.5, 0.9)
        await anyio.sleep(1.0)
        return agentsim.now()

    for seed in range(3):
        assert agentsim.run(main, seed=seed, strategy="random", backend=backend) == pytest.approx(1.1)


# Operations on the pending windowed timers: add (earliest offset, width,
# nominal fraction), remove the n-th pending one, or ask for the options at
# some instant with or without a point timer.
_operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 40), st.integers(0, 40), st.floats(0, 1)),
        st.tuples(st.just("remove"), st.integers(0, 50)),
        st.tuples(st.just("options"), st.integers(0, 60), st.none() | st.integers(0, 80)),
    ),
    min_size=8,
    max_size=60,
)


def _reference_options(pending: list[Any], now: int, point_at: int | None) -> list[tuple[int, int, Any, str, int]] | None:
    """The options by their definition (windows.py), from the pending timers alone."""
    if not pending:
        return None
    bound = min(timer.latest for timer in pending)
    if point_at is not None:
        bound = min(bound, point_at)
    options = []
    for timer in pending:
        if timer.earliest <= bound:
            nominal = max(timer.nominal, timer.earliest, now)
            options.append((min(nominal, bound), timer.sequence, timer, timer.label, nominal))
    if not options:
        return None
    if point_at == bound:
        options.append((bound, -1, None, "point", bound))
    return sorted(options, key=lambda option: (option[4], option[1]))


@pytest.mark.parametrize(("sorted_from", "listed_below"), [(512, 128), (4, 2), (0, 0)], ids=["default", "switching", "sorted"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=_operations)
def test_pending_windows_give_the_defined_options_in_either_form(monkeypatch: pytest.MonkeyPatch, sorted_from: int, listed_below: int, operations: list[Any]) -> None:
    # Few pending timers live in plain sorted lists, many in SortedLists
    # (switching at the thresholds, patched small here): the options must be
    # the same whatever the form, and as defined.
    monkeypatch.setattr(windows_module, "_SORTED_FROM", sorted_from)
    monkeypatch.setattr(windows_module, "_LISTED_BELOW", listed_below)
    timers = windows_module.WindowedTimers()
    pending: list[Any] = []
    for sequence, operation in enumerate(operations):
        if operation[0] == "add":
            _, earliest, width, fraction = operation
            latest = earliest + width
            nominal = min(latest, earliest + round(width * fraction))
            pending.append(timers.add(earliest, nominal, latest, sequence, None, f"t{sequence}"))
        elif operation[0] == "remove" and pending:
            timer = pending.pop(operation[1] % len(pending))
            timers.remove(timer)
            timers.remove(timer)  # (twice is harmless)
        elif operation[0] == "options":
            _, now, point_at = operation
            found = timers.options(now, point_at, -1, "point")
            assert _as_tuples(found) == _reference_options(pending, now, point_at)
        assert len(timers) == len(pending)
        assert _as_tuples(timers.options(0, None, -1, "point")) == _reference_options(pending, 0, None)


def _as_tuples(options: Any) -> list[tuple[int, int, Any, str, int]] | None:
    return None if options is None else [tuple(option) for option in options.in_order]


def test_delay_windows() -> None:
    assert timing.uniform(0.1, 0.3).window(0) == (0.1, pytest.approx(0.2), 0.3)
    low, nominal, high = timing.exponential(0.2).window(0)  # type: ignore[misc]
    assert low == 0 and nominal == 0.2 and high == pytest.approx(0.2 * 4.605, rel=1e-3)
    low, nominal, high = timing.lognormal(0.3, 0.5, cap=0.6).window(0)  # type: ignore[misc]
    assert low < 0.3 == nominal and high == 0.6
    assert timing.as_delay(0.25, name="d").window(0) is None
    assert timing.uniform(0.2, 0.2).window(0) is None
    # Computed once per distribution, equal for every event and across pickling.
    delay = timing.lognormal(0.1, 0.4)
    assert delay.window(0) == delay.window(7) == pickle.loads(pickle.dumps(delay)).window(3)
    assert delay == timing.lognormal(0.1, 0.4) and hash(delay) == hash(timing.lognormal(0.1, 0.4))


def test_a_lognormal_whose_window_would_overflow_is_a_typed_error() -> None:
    assert timing.lognormal(0.1, 300).window(0) is not None
    with pytest.raises(agentsim.SimulationConfigError) as info:
        timing.lognormal(0.1, 1e9)
    assert info.value.parameter == "sigma" and "sigma <=" in str(info.value)


def test_bad_pace_is_a_typed_error() -> None:
    for speed in (0, -1, (2.0, 1.0), (1.0, float("nan")), "fast"):
        with pytest.raises(agentsim.SimulationConfigError) as info:
            timing.Pacer(0.02, speed, name="pace")  # type: ignore[arg-type]
        assert info.value.parameter == "pace"


def test_a_custom_task_factory_is_honoured() -> None:
    async def main() -> tuple[list[str], float]:
        made: list[str] = []

        def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
            made.append(getattr(coro, "__qualname__", "?"))
            return asyncio.Task(coro, loop=loop, **kwargs)

        asyncio.get_running_loop().set_task_factory(factory)
        await asyncio.create_task(asyncio.sleep(1.0), name="napper")
        return made, agentsim.now()

    made, end = agentsim.run(main)
    assert made == ["sleep"] and end == 1.0
    result = agentsim.simulate(main)
    # On the timeline like any task (asyncio names it after creating it).
    assert [event.detail for event in result.trace.events if event.kind == "spawn"] == ["", "by main"]
    assert any(event.kind == "exit" and event.task == "napper" for event in result.trace.events)


@pytest.mark.skipif(not hasattr(asyncio, "eager_task_factory"), reason="asyncio.eager_task_factory is Python 3.12+ (CI runs this on 3.12)")
def test_eager_or_deferred_start_is_a_choice_under_the_eager_factory() -> None:
    async def main() -> list[str]:
        asyncio.get_running_loop().set_task_factory(asyncio.eager_task_factory)  # type: ignore[attr-defined]
        order: list[str] = []

        async def child() -> None:
            order.append("child")

        task = asyncio.create_task(child())
        order.append("parent")
        await task
        return order

    assert agentsim.run(main) == ["child", "parent"]  # the factory's own behaviour: eager
    starts = Counter(tuple(agentsim.run(main, seed=seed, strategy="random")) for seed in range(20))
    assert set(starts) == {("child", "parent"), ("parent", "child")}, starts


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=windows)
# A windowed timer and a plain deadline nominally due at one instant (found by hypothesis on trio).
@example(spec=[(0.0, 0.033, 0.038, 0.0), (0.002, 0.05, 0.0, 0.0)])
def test_fifo_with_windows_is_plain_sleeps_of_the_nominal_delays(backend: str, spec: list[tuple[float, float, float, float]]) -> None:
    def program(windowed: bool) -> Any:
        async def main() -> list[tuple[int, float]]:
            fired: list[tuple[int, float]] = []

            async def one(index: int, start: float, low: float, width: float, second: float) -> None:
                await anyio.sleep(start)
                for low_, high_ in ((low, low + width), (second, second * 2)):
                    if windowed:
                        await timing.sleep_between(low_, high_)
                    else:
                        await anyio.sleep((low_ + high_) / 2)
                    fired.append((index, agentsim.now()))

            async with anyio.create_task_group() as group:
                for index, args in enumerate(spec):
                    group.start_soon(one, index, *args)
            return fired

        return main

    nominal = agentsim.run(program(windowed=False), backend=backend)
    assert agentsim.run(program(windowed=True), backend=backend) == nominal
    replayed = agentsim.run(program(windowed=True), backend=backend, strategy=agentsim.ReplayPolicy({}, jitter_scale=0.0))
    assert replayed == nominal
