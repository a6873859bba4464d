"""Virtual time: sleeps, timeouts and cancel scopes on both backends."""

from __future__ import annotations

import asyncio
import time

import anyio
import pytest
import trio

import agentsim
from agentsim import TICKS_PER_SECOND
from agentsim._kernel.core import require_core


def test_now_starts_at_zero_and_follows_sleeps(backend: str) -> None:
    async def main() -> list[float]:
        seen = [agentsim.now()]
        await anyio.sleep(1.25)
        seen.append(agentsim.now())
        await anyio.sleep(0)
        seen.append(agentsim.now())
        return seen

    assert agentsim.run(main, backend=backend) == [0.0, 1.25, 1.25]


def test_ten_short_sleeps_tie_with_one_long_sleep(backend: str) -> None:
    # With float time, 10 x 0.05 ends at 0.49999999999999994 and the "tie"
    # with sleep(0.5) becomes an order; with integer ticks both end at 0.5 exactly.
    async def main() -> tuple[float, float, float]:
        ends: dict[str, float] = {}

        async def short_steps() -> None:
            for _ in range(10):
                await anyio.sleep(0.05)
            ends["short"] = anyio.current_time()

        async def one_step() -> None:
            await anyio.sleep(0.5)
            ends["long"] = anyio.current_time()

        async with anyio.create_task_group() as group:
            group.start_soon(short_steps)
            group.start_soon(one_step)
        return ends["short"], ends["long"], agentsim.now()

    short, long_, now = agentsim.run(main, backend=backend)
    assert short == long_ == now == 0.5


@pytest.mark.parametrize("delay", [0.5084, 0.1251])
def test_a_delay_is_rounded_to_the_nearest_tick_not_truncated(backend: str, delay: float) -> None:
    # delay * 1e9 lands a hair below a whole number of ticks (508399999.99999994):
    # the clock's rule rounds it to the tick it stands for, on every path that
    # turns seconds into ticks (a sleep, a deadline, a window).
    async def main() -> tuple[int, int, int]:
        await anyio.sleep(delay)
        slept = round(agentsim.now() * TICKS_PER_SECOND)
        with anyio.move_on_after(delay):
            await anyio.sleep_forever()
        timed_out = round(agentsim.now() * TICKS_PER_SECOND)
        await require_core("test").sleep_window(0, delay, 2 * delay)  # a window, fired at its nominal delay
        return slept, timed_out, round(agentsim.now() * TICKS_PER_SECOND)

    ticks = round(delay * TICKS_PER_SECOND)
    assert agentsim.run(main, backend=backend) == (ticks, 2 * ticks, 3 * ticks)


def test_time_never_moves_backwards_past_a_deadline_already_gone() -> None:
    # A timer set for an instant already past (call_at in the past) fires now,
    # and the clock stays where it is.
    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(2.0)
        fired = loop.create_future()
        loop.call_at(0.5, fired.set_result, None)
        await fired
        seen = [agentsim.now(), loop.time()]
        await asyncio.sleep(0.1)
        return [*seen, agentsim.now()]

    assert agentsim.run(main) == [2.0, 2.0, 2.1]


def test_an_hour_of_sleeps_ends_at_exactly_one_hour(backend: str) -> None:
    async def main() -> float:
        for _ in range(3600):
            await anyio.sleep(1)
        return agentsim.now()

    result = agentsim.simulate(main, backend=backend)
    assert result.unwrap() == 3600.0
    assert result.end_time == 3600.0


def test_nested_anyio_timeouts_fire_at_their_own_deadlines(backend: str) -> None:
    async def main() -> list[tuple[str, float]]:
        log: list[tuple[str, float]] = []
        with anyio.move_on_after(10) as outer:
            with anyio.move_on_after(2) as inner:
                await anyio.sleep(5)
            log.append(("inner cancelled" if inner.cancelled_caught else "inner done", agentsim.now()))
            await anyio.sleep(20)
        log.append(("outer cancelled" if outer.cancelled_caught else "outer done", agentsim.now()))
        try:
            with anyio.fail_after(1.5):
                await anyio.sleep(3)
        except TimeoutError:
            log.append(("fail_after", agentsim.now()))
        return log

    assert agentsim.run(main, backend=backend) == [
        ("inner cancelled", 2.0),
        ("outer cancelled", 10.0),
        ("fail_after", 11.5),
    ]


def test_shielded_scope_outlives_outer_deadline(backend: str) -> None:
    async def main() -> list[float]:
        marks = []
        with anyio.move_on_after(1):
            with anyio.CancelScope(shield=True):
                await anyio.sleep(3)
                marks.append(agentsim.now())
            await anyio.sleep(1)  # cancelled at once: the deadline passed
            marks.append(-1.0)
        marks.append(agentsim.now())
        return marks

    assert agentsim.run(main, backend=backend) == [3.0, 3.0]


def test_asyncio_apis_use_virtual_time() -> None:
    async def main() -> dict[str, float]:
        loop = asyncio.get_running_loop()
        marks = {"loop.time at start": loop.time()}
        await asyncio.sleep(0.75)
        marks["after sleep"] = loop.time()
        try:
            await asyncio.wait_for(asyncio.sleep(60), timeout=2)
        except TimeoutError:
            marks["wait_for timeout"] = loop.time()
        try:
            async with asyncio.timeout(1.5):
                async with asyncio.timeout(4):
                    await asyncio.sleep(10)
        except TimeoutError:
            marks["nested timeout"] = loop.time()
        fired = loop.create_future()
        loop.call_at(loop.time() + 0.25, fired.set_result, None)
        await fired
        marks["call_at"] = loop.time()
        return marks

    assert agentsim.run(main) == {
        "loop.time at start": 0.0,
        "after sleep": 0.75,
        "wait_for timeout": 2.75,
        "nested timeout": 4.25,
        "call_at": 4.5,
    }


def test_asyncio_debug_mode_still_answers_through_get_debug() -> None:
    """The loop answers ``get_debug()`` with a C call outside debug mode (every
    future asks it); ``set_debug`` still switches it, and futures made in
    debug mode keep their creation traceback, as asyncio's do."""

    async def main() -> list[object]:
        loop = asyncio.get_running_loop()
        seen: list[object] = [loop.get_debug(), loop.create_future()._source_traceback]
        loop.set_debug(True)
        seen += [loop.get_debug(), bool(loop.create_future()._source_traceback)]
        await asyncio.sleep(0.1)
        loop.set_debug(False)
        seen += [loop.get_debug(), loop.create_future()._source_traceback]
        return seen

    assert agentsim.run(main) == [False, None, True, True, False, None]


def test_trio_apis_use_virtual_time() -> None:
    async def main() -> list[float]:
        marks = [trio.current_time()]
        await trio.sleep(0.5)
        marks.append(trio.current_time())
        with trio.move_on_after(3) as scope:
            with trio.CancelScope(deadline=trio.current_time() + 1):
                await trio.sleep(10)
            marks.append(trio.current_time())
            await trio.sleep_forever()
        assert scope.cancelled_caught
        marks.append(trio.current_time())
        await trio.sleep_until(10)
        marks.append(trio.current_time())
        return marks

    assert agentsim.run(main, backend="trio") == [0.0, 0.5, 1.5, 3.5, 10.0]


def test_wall_clock_reads_are_virtual_inside_and_real_outside(backend: str) -> None:
    async def main() -> tuple[float, float, float, int]:
        await anyio.sleep(2)
        return time.monotonic(), time.perf_counter(), time.time(), time.monotonic_ns()

    monotonic, perf, wall, mono_ns = agentsim.run(main, backend=backend)
    assert monotonic == perf == 2.0
    assert mono_ns == 2 * TICKS_PER_SECOND
    assert wall == 1_735_689_600 + 2.0  # the virtual epoch, 2025-01-01T00:00:00Z
    # Outside the simulation the real clocks are back.
    assert time.time() > 1_735_689_600 + 10**6
    assert time.monotonic is not None and not hasattr(time.monotonic, "__wrapped__")


def test_now_outside_a_simulation_is_a_clear_error() -> None:
    with pytest.raises(agentsim.NotInSimulationError) as info:
        agentsim.now()
    assert info.value.api == "agentsim.now"
    assert "outside a simulation" in str(info.value)


def test_deadline_rounding_down_to_a_tick_still_expires() -> None:
    # 0.1 + 0.2 is 0.30000000000000004: the tick is 300 ms, a hair *before*
    # the float deadline. A callback that re-checks `loop.time() >= deadline`
    # (anyio's cancel scopes do) must see the deadline reached, not re-arm forever.
    async def main() -> tuple[bool, float]:
        loop = asyncio.get_running_loop()
        deadline = 0.1 + 0.2
        seen: list[bool] = []
        fired = loop.create_future()

        def check() -> None:
            seen.append(loop.time() >= deadline)
            fired.set_result(None)

        loop.call_at(deadline, check)
        await fired
        with anyio.move_on_after(0.1 + 0.2):
            await anyio.sleep(10)
        return seen[0], loop.time()

    assert agentsim.run(main, wall_timeout=5) == (True, 0.6)


def test_infinite_waits_are_legal_and_never_fire(backend: str) -> None:
    import math

    import anyio

    async def main() -> float:
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.sleep_forever)
            await anyio.sleep(1.0)
            group.cancel_scope.cancel()  # the endless sleeper ends when asked
        with anyio.fail_after(math.inf):
            await anyio.sleep(2.0)
        return agentsim.now()

    assert agentsim.run(main, backend=backend) == 3.0

    async def forever() -> None:
        await anyio.sleep_forever()

    # Nothing else can happen: a deadlock, reported at once (not a hang).
    assert isinstance(agentsim.simulate(forever, backend=backend).exception, agentsim.DeadlockError)


def test_asyncio_timeouts_of_infinity() -> None:
    import math

    async def main() -> float:
        async with asyncio.timeout(math.inf):
            await asyncio.sleep(1.0)
        await asyncio.wait_for(asyncio.sleep(1.0), timeout=math.inf)
        loop = asyncio.get_running_loop()
        handle = loop.call_later(math.inf, lambda: None)
        handle.cancel()
        loop.call_at(math.inf, lambda: None).cancel()
        return agentsim.now()

    assert agentsim.run(main) == 2.0


@pytest.mark.parametrize("strategy", ["fifo", "random", "pct"])
def test_a_timer_due_now_fires_once_when_the_heap_is_compacted_mid_instant(strategy: str) -> None:
    # Many cancelled timers make the loop rebuild its heap during its periodic
    # maintenance; timers already due at that instant must still fire once.
    fired: list[int] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for handle in [loop.call_later(3600, fired.append, -1) for _ in range(300)]:
            handle.cancel()
        for index in range(6000):
            loop.call_later(0, fired.append, index)
            await asyncio.sleep(0)
        await asyncio.sleep(1)

    for seed in (1, 2, 3):
        fired.clear()
        agentsim.run(main, strategy=strategy, seed=seed)
        assert sorted(fired) == list(range(6000)), f"seed {seed}"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_direct_time_matches_anyio_on_both_backends(backend: str) -> None:
    from agentsim._kernel.backends import direct_time

    async def main() -> list[float]:
        seen = []
        await direct_time.sleep(0.25)
        seen.append(direct_time.current_time())
        await direct_time.sleep_until(1.0)
        seen.append(anyio.current_time())
        with anyio.CancelScope() as scope:
            scope.cancel()
            await direct_time.sleep_until(0.5)  # passed already: still a checkpoint
        seen.append(float(scope.cancelled_caught))
        return seen

    assert agentsim.run(main, backend=backend) == [0.25, 1.0, 1.0]
