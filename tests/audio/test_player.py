"""SimulatedPlayer: the second clock of a voice call (audio actually heard)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents.realtime.model import RealtimePlaybackTracker
from hypothesis import given, settings
from hypothesis import strategies as st

import agentsim
from agentsim.audio import SimulatedPlayer
from agentsim.timing import uniform


class RecordingTracker(RealtimePlaybackTracker):
    """The SDK's tracker, remembering every report in order."""

    def __init__(self) -> None:
        super().__init__()
        self.reports: list[tuple[float, str, float]] = []

    def on_play_ms(self, item_id: str, item_content_index: int, ms: float) -> None:
        self.reports.append((agentsim.now(), item_id, ms))
        super().on_play_ms(item_id, item_content_index, ms)


async def _feed(player: SimulatedPlayer, arrivals: list[tuple[float, str, float]]) -> None:
    """Hand ``(time, item, ms)`` chunks to the player as the client got them."""
    for at, item, ms in arrivals:
        await asyncio.sleep(max(0.0, at - agentsim.now()))
        player.receive(item, 0, ms)


def test_network_delay_and_jitter_buffer_hold_back_the_start() -> None:
    async def main() -> list[float]:
        player = SimulatedPlayer(network_delay=0.1, jitter_buffer_ms=120)
        # Real-time arrival: one 40 ms chunk every 40 ms from t=0.
        feeding = asyncio.get_running_loop().create_task(_feed(player, [(i * 0.04, "a", 40.0) for i in range(10)]))
        samples = []
        for at in (0.15, 0.20, 0.25, 0.5, 1.0):
            await asyncio.sleep(at - agentsim.now())
            samples.append(player.played_ms("a"))
        await feeding
        return samples

    samples = agentsim.run(main)
    # Chunks reach the device at 0.10, 0.14, 0.18 ...; 120 ms are buffered at 0.18,
    # so the first sound is at 0.18 and the caller hears in real time from there.
    assert samples == pytest.approx([0.0, 20.0, 70.0, 320.0, 400.0])


def test_underrun_pauses_and_the_jitter_buffer_refills_before_resuming() -> None:
    async def main() -> float:
        player = SimulatedPlayer(jitter_buffer_ms=80)
        # Two chunks, then the network stalls for half a second, then two more.
        await _feed(player, [(0.0, "a", 40.0), (0.04, "a", 40.0), (0.6, "a", 40.0), (0.64, "a", 40.0)])
        await asyncio.sleep(1.0)
        return player.played_ms("a")

    result = agentsim.simulate(main)
    assert result.ok, result.exception
    assert result.value == 160.0
    kinds = [event.detail.split()[0] for event in result.trace.events if event.kind == "playback"]
    assert kinds == ["start", "underrun", "start", "underrun"]
    starts = [event.time for event in result.trace.events if event.kind == "playback" and event.detail.startswith("start")]
    assert starts == pytest.approx([0.04, 0.64])  # each waited for 80 ms to be buffered


def test_the_end_of_an_item_starts_playback_below_the_jitter_buffer() -> None:
    async def main() -> float:
        player = SimulatedPlayer(jitter_buffer_ms=500)
        player.receive("short", 0, 40.0)
        await asyncio.sleep(0.2)
        before_end = player.played_ms("short")
        player.on_event(_Event(type="audio_end", item_id="short"))
        await asyncio.sleep(0.2)
        assert before_end == 0.0  # 40 ms never fill a 500 ms buffer ...
        return player.played_ms("short")

    assert agentsim.run(main) == 40.0  # ... but the item's end releases it


def test_interrupt_stops_at_once_and_flushes_buffered_and_in_flight_audio() -> None:
    async def main() -> dict[str, Any]:
        tracker = RecordingTracker()
        player = SimulatedPlayer(network_delay=0.05, tracker=tracker)
        await _feed(player, [(i * 0.01, "a", 40.0) for i in range(20)])  # 800 ms, sent fast
        await asyncio.sleep(0.25 - agentsim.now())
        player.on_event(_Event(type="audio_interrupted", item_id="a"))
        heard_at_interrupt = player.played_ms("a")
        player.receive("a", 0, 40.0)  # a stale delta after the interruption still plays ...
        await asyncio.sleep(1.0)
        return {"heard": heard_at_interrupt, "after": player.played_ms("a"), "player": player, "tracker": tracker}

    out = agentsim.run(main)
    assert out["heard"] == pytest.approx(200.0)  # from 0.05 to 0.25
    assert out["after"] == pytest.approx(240.0)  # ... which is the app's to drop, not the player's
    assert out["player"].interrupted == ["a"]
    reported = sum(ms for _, item, ms in out["tracker"].reports if item == "a")
    assert reported == 240.0  # whole chunks only: the partial chunk at the cut is not reported


def test_chunks_are_played_in_order_under_jittered_network_delay() -> None:
    async def main() -> list[str]:
        tracker = RecordingTracker()
        player = SimulatedPlayer(network_delay=uniform(0.0, 0.3), tracker=tracker)
        for index in range(30):
            player.receive(f"chunk{index:02d}", 0, 10.0)
        await asyncio.sleep(2.0)
        return [item for _, item, _ in tracker.reports]

    for seed in range(6):
        order = agentsim.run(main, seed=seed, strategy="random")
        assert order == sorted(order) and len(order) == 30


def test_bad_jitter_buffer_is_a_config_error() -> None:
    with pytest.raises(agentsim.SimulationConfigError, match="jitter_buffer_ms"):
        SimulatedPlayer(jitter_buffer_ms=-1)


class _Event:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


arrival_plans = st.lists(
    st.tuples(st.floats(0.0, 0.2), st.sampled_from(["a", "b"]), st.floats(5.0, 80.0)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(plan=arrival_plans, interrupt_at=st.none() | st.floats(0.0, 2.0), jitter_ms=st.floats(0.0, 200.0), seed=st.integers(0, 2**16))
def test_what_is_heard_never_runs_ahead_of_what_arrived_or_of_time(
    plan: list[tuple[float, str, float]], interrupt_at: float | None, jitter_ms: float, seed: int
) -> None:
    async def main() -> None:
        tracker = RecordingTracker()
        player = SimulatedPlayer(network_delay=uniform(0.0, 0.1), jitter_buffer_ms=jitter_ms, tracker=tracker)
        received: dict[str, float] = {}
        if interrupt_at is not None:
            asyncio.get_running_loop().call_later(interrupt_at, player.interrupt)
        now = 0.0
        for gap, item, ms in plan:
            now += gap
            await asyncio.sleep(max(0.0, now - agentsim.now()))
            player.receive(item, 0, ms)
            received[item] = received.get(item, 0.0) + ms
        for _ in range(40):
            await asyncio.sleep(0.05)
            heard = {item: player.played_ms(item) for item in received}
            assert all(heard[item] <= received[item] + 1e-6 for item in received)
            assert player.heard_ms <= agentsim.now() * 1000 + 1e-6  # one speaker, real rate
            reported = sum(ms for _, _, ms in tracker.reports)
            assert reported <= player.heard_ms + 1e-6  # the tracker never claims more than was heard
        player.close()

    agentsim.run(main, seed=seed, strategy="random")


def test_the_player_works_on_the_scripted_transport_too() -> None:
    from agents.realtime import RealtimeAgent, RealtimeRunner

    from agentsim.realtime import ScriptedRealtimeTransport

    async def main() -> tuple[float, float]:
        transport = ScriptedRealtimeTransport()
        runner = RealtimeRunner(RealtimeAgent(name="Teller"), model=transport, config={"tracing_disabled": True})
        player = SimulatedPlayer(network_delay=0.05, jitter_buffer_ms=60)

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.stream_audio(response_id="r1", item_id="item_1", duration=1.0, transcript="once upon a time")

        async def app() -> None:
            async with await runner.run() as session:
                try:
                    async with asyncio.timeout(2.0):
                        async for event in session:
                            player.on_event(event)
                except TimeoutError:
                    pass

        await transport.run_scenario(scenario=scenario, exercise=app, timeout=5.0)
        state = player.tracker.get_state()
        return player.played_ms("item_1"), float(state["elapsed_ms"] or 0.0)

    heard, reported = agentsim.run(main)
    assert heard == pytest.approx(1000.0)  # all of it, at real rate, after the delay
    assert reported == pytest.approx(1000.0)


def test_a_player_is_not_reused_across_simulations() -> None:
    player = SimulatedPlayer()

    async def main() -> None:
        player.receive("a", 0, 40.0)
        await asyncio.sleep(0.1)

    agentsim.run(main)
    with pytest.raises(agentsim.SimulationConfigError, match="new player per run"):
        agentsim.run(main)
