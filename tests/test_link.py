"""OrderedLink: latency varies, order never does; bursts arrive together
under nominal timing and together or apart as the policy chooses.
Runs under fifo, jitter and random seeds 0-19."""

from __future__ import annotations

import asyncio

import pytest

import agentsim
from agentsim.link import OrderedLink
from agentsim.timing import DelaySource, uniform


async def _traffic() -> list[tuple[str, float]]:
    link = OrderedLink(DelaySource(uniform(0.01, 0.05), name="latency", stream="test:link"))
    arrived: list[tuple[str, float]] = []
    for burst in range(5):
        for part in "ab":
            name = f"{burst}{part}"
            link.send(lambda name=name: arrived.append((name, agentsim.now())))  # type: ignore[misc]
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)
    return arrived


@pytest.mark.parametrize(("strategy", "seeds"), [("fifo", [0]), ("jitter", range(5)), ("random", range(20))])
def test_messages_arrive_in_order_within_their_windows(strategy: str, seeds: range) -> None:
    for seed in seeds:
        arrived = agentsim.run(_traffic, seed=seed, strategy=strategy)
        assert [name for name, _ in arrived] == [f"{burst}{part}" for burst in range(5) for part in "ab"]
        for name, at in arrived:
            sent = int(name[0]) * 0.02
            # Never before its window; late only behind the message ahead.
            assert at >= sent + 0.01 - 1e-9
        times = [at for _, at in arrived]
        assert times == sorted(times)


def test_a_burst_arrives_together_at_nominal_timing_and_apart_by_choice() -> None:
    nominal = agentsim.run(_traffic)
    assert nominal[:2] == [("0a", pytest.approx(0.03)), ("0b", pytest.approx(0.03))]
    apart = 0
    for seed in range(20):
        result = agentsim.simulate(_traffic, seed=seed, strategy="random")
        assert result.ok
        apart += any(detail.startswith("window 1/2") and event.task == "apart" for event in result.trace.events for detail in [event.detail])
    assert apart > 0


def test_clear_drops_what_is_in_flight() -> None:
    async def main() -> list[str]:
        link = OrderedLink(DelaySource(uniform(0.01, 0.05), name="latency", stream="test:link"))
        arrived: list[str] = []
        link.send(lambda: arrived.append("lost"))
        assert link.in_flight == 1
        link.clear()
        link.send(lambda: arrived.append("kept"))
        await asyncio.sleep(0.1)
        return arrived

    for strategy in ("fifo", "random", "jitter"):
        assert agentsim.run(main, strategy=strategy, seed=1) == ["kept"]



def test_fifo_delivers_where_the_windows_nominal_timing_does() -> None:
    # Under FIFO a window still ahead is armed as a plain timer (call_window's
    # fast path, which a link arms per message); ReplayPolicy({}) arms real
    # windows and takes nominal timing at every choice. Arrival instants, the windowed-timer count and the trace
    # must not tell them apart (bursts, messages sent while others are in
    # flight, and sends at the instant of an arrival included).
    async def main() -> list[tuple[str, float]]:
        link = OrderedLink(DelaySource(uniform(0.013, 0.047), name="latency", stream="test:link"))
        arrived: list[tuple[str, float]] = []

        def deliver(name: str) -> None:
            arrived.append((name, agentsim.now()))
            if name.endswith("a"):
                link.send(lambda: arrived.append((name + "-echo", agentsim.now())))  # sent as one arrives

        for burst in range(12):
            for part in "ab"[: 1 + burst % 2]:
                link.send(lambda name=f"{burst}{part}": deliver(name))  # type: ignore[misc]
            await asyncio.sleep(0.007 * (1 + burst % 3))
        await asyncio.sleep(0.5)
        return arrived

    fifo = agentsim.simulate(main, strategy="fifo")
    nominal = agentsim.simulate(main, strategy=agentsim.ReplayPolicy({}, jitter_scale=0.0))
    assert fifo.ok and nominal.ok
    assert fifo.value == nominal.value
    assert fifo.windowed_timers == nominal.windowed_timers > 0
    assert [(event.time, event.task) for event in fifo.trace.events if event.kind == "step"] == [
        (event.time, event.task) for event in nominal.trace.events if event.kind == "step"
    ]
