"""Clean closes and abrupt disconnects at any point of a call, on the real adapter."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents.realtime import RealtimeAgent, RealtimeRunner
from websockets.exceptions import ConnectionClosedError

import agentsim
from agentsim.audio import SimulatedPlayer
from agentsim.realtime.server import Reply, SimulatedRealtimeServer

from ..realtime.sdk_features import HAS_END_OF_STREAM

#: Moments of a call: before the user spoke, during their speech, between
#: response.created and the first audio, mid-audio, after the response.
MOMENTS = [0.3, 0.8, 1.2, 2.0, 5.0]
#: FIFO and two random schedules: a disconnect lands among same-instant events.
SCHEDULES = [(0, "fifo"), (1, "random"), (2, "random")]
SCHEDULE_IDS = [f"{strategy}-{seed}" for seed, strategy in SCHEDULES]


async def _call_until_disconnect(at: float, clean: bool) -> dict[str, Any]:
    server = SimulatedRealtimeServer([Reply("a short story about the sea", audio_seconds=3.0)], first_audio_latency=0.4, generation_speed=1.0)
    player = SimulatedPlayer(network_delay=0.05)
    session = await RealtimeRunner(RealtimeAgent(name="Teller"), model=server.model()).run(model_config={"playback_tracker": player.tracker})
    outcome: dict[str, Any] = {"server": server, "player": player, "raised": None, "ended_at": None}

    async def disconnect() -> None:
        await asyncio.sleep(at)
        await server.disconnect(clean=clean)

    async with session:
        server.user_speaks("tell me a story", at=0.5, seconds=0.5)
        disconnecting = asyncio.get_running_loop().create_task(disconnect())
        try:
            async with asyncio.timeout(10):
                async for event in session:
                    player.on_event(event)
        except TimeoutError:
            pass
        except ConnectionClosedError as exc:
            outcome["raised"] = exc
        outcome["ended_at"] = agentsim.now()
        await disconnecting
    player.close()
    return outcome


@pytest.mark.parametrize(("seed", "strategy"), SCHEDULES, ids=SCHEDULE_IDS)
@pytest.mark.parametrize("at", MOMENTS)
def test_abrupt_disconnect_surfaces_at_once_and_loses_what_was_in_flight(at: float, seed: int, strategy: str) -> None:
    outcome = agentsim.run(_call_until_disconnect, at, False, seed=seed, strategy=strategy)
    server: SimulatedRealtimeServer = outcome["server"]
    # The session's iteration raised the connection error the moment it dropped.
    assert isinstance(outcome["raised"], ConnectionClosedError)
    assert outcome["ended_at"] == pytest.approx(at)
    assert server.log[-1][1:] == ("server", "abrupt disconnect (1006)")
    assert server.violations == []
    # Audio stopped with the connection: nothing the server generated after it arrived.
    sent = sum(server.audio_sent_ms(r["item_id"]) for r in server.responses if r["item_id"])
    assert outcome["player"].heard_ms <= sent
    if at < 1.0:  # the user had not finished speaking: no response ever started
        assert server.responses == []


@pytest.mark.parametrize(("seed", "strategy"), SCHEDULES, ids=SCHEDULE_IDS)
@pytest.mark.parametrize("at", MOMENTS)
def test_clean_close_delivers_what_was_sent_then_ends_the_session(at: float, seed: int, strategy: str) -> None:
    outcome = agentsim.run(_call_until_disconnect, at, True, seed=seed, strategy=strategy)
    server: SimulatedRealtimeServer = outcome["server"]
    assert outcome["raised"] is None
    close_time = server.log[-1][0]
    assert server.log[-1][1:] == ("server", "close (1000)")
    # The close frame travels behind the events already sent (latency 0.02 s) ...
    assert at < close_time <= at + 0.05
    # ... and the session's iteration ended when it arrived - on releases with
    # an end-of-stream event; older ones (0.13.6) keep waiting until the app's timeout.
    assert outcome["ended_at"] == pytest.approx(close_time if HAS_END_OF_STREAM else 10.0)
    assert server.violations == []


def test_an_app_that_reconnects_after_a_drop_gets_a_fresh_session() -> None:
    async def main() -> tuple[SimulatedRealtimeServer, list[float]]:
        server = SimulatedRealtimeServer([Reply("first answer", audio_seconds=3.0), Reply("second answer", audio_seconds=1.0)], generation_speed=1.0)
        connected_at: list[float] = []

        async def drop_at(seconds: float) -> None:
            await asyncio.sleep(seconds)
            await server.disconnect(clean=False)

        for attempt in range(2):
            session = await RealtimeRunner(RealtimeAgent(name="Support"), model=server.model()).run()
            connected_at.append(agentsim.now())
            async with session:
                server.user_speaks("hello", at=agentsim.now() + 0.5, seconds=0.5)
                if attempt == 0:
                    dropping = asyncio.get_running_loop().create_task(drop_at(2.0))
                try:
                    async with asyncio.timeout(4.0):
                        async for _ in session:
                            pass
                except (ConnectionClosedError, TimeoutError):
                    pass
        await dropping
        return server, connected_at

    for seed, strategy in SCHEDULES:
        server, connected_at = agentsim.run(main, seed=seed, strategy=strategy)
        assert server.violations == []
        first, second = server.responses
        assert first["cancelled"] is False  # dropped mid-answer: it never finished or was cancelled by anyone
        assert server.audio_sent_ms(first["item_id"]) < 3000
        assert server.audio_sent_ms(second["item_id"]) == 1000.0
        assert connected_at[1] == pytest.approx(2.0)  # reconnected the moment the drop surfaced
        assert [kind for _, side, kind in server.log if kind == "session.created"] == ["session.created"] * 2
