"""The service's session limits on the simulated server: the maximum session
duration (``session_expired``), ``rate_limits.updated``, and the idle timeout
counted from the end of playback."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents.realtime import RealtimeAgent, RealtimeRunner

import agentsim
from agentsim.audio import SimulatedPlayer
from agentsim.realtime.server import Reply, SimulatedRealtimeServer, raw_server_event

from .test_guide_behaviours import listen, server_events

AGENT = RealtimeAgent(name="Limits")


def test_a_session_ends_at_max_session_seconds_with_session_expired() -> None:
    async def main() -> tuple[list[tuple[float, dict[str, Any]]], list[tuple[float, str, str]], bool]:
        server = SimulatedRealtimeServer([Reply("hello", audio_seconds=1.0)], max_session_seconds=600)
        async with await RealtimeRunner(AGENT, model=server.model()).run() as session:
            server.user_speaks("hi", at=1.0, seconds=0.5)
            seen = await listen(session, 700.0)
        return server_events(seen, "error"), [entry for entry in server.log if entry[1] == "server" and entry[2] in ("error", "close (1000)")], server.closed

    errors, wire, closed = agentsim.run(main)
    [(at, error)] = errors
    assert error["error"]["code"] == "session_expired" and "600 seconds" in error["error"]["message"]
    assert at == pytest.approx(600.02)  # sent at 600 s, one network latency to the app
    assert [kind for _, _, kind in wire] == ["error", "close (1000)"] and wire[-1][0] == pytest.approx(600.02)
    assert closed


def test_without_a_limit_the_session_goes_on() -> None:
    async def main() -> list[Any]:
        server = SimulatedRealtimeServer([])
        async with await RealtimeRunner(AGENT, model=server.model()).run() as session:
            seen = await listen(session, 700.0)
        return server_events(seen, "error")

    assert agentsim.run(main) == []


def test_rate_limits_are_reported_at_the_start_of_each_response() -> None:
    async def main() -> tuple[list[str], list[Any]]:
        server = SimulatedRealtimeServer([Reply("one", audio_seconds=0.5), Reply("two", audio_seconds=0.5)], rate_limits=True)
        async with await RealtimeRunner(AGENT, model=server.model()).run() as session:
            server.user_speaks("first", at=0.5, seconds=0.5)
            server.user_speaks("second", at=4.0, seconds=0.5)
            seen = await listen(session, 8.0)
        kinds = [raw["type"] for _, event in seen if (raw := raw_server_event(event))]
        return kinds, [event for _, event in seen if event.type == "error"]

    kinds, errors = agentsim.run(main)
    updates = [index for index, kind in enumerate(kinds) if kind == "rate_limits.updated"]
    assert len(updates) == 2 and all(kinds[index - 1] == "response.created" for index in updates)
    assert errors == []  # the adapter parsed them


@pytest.mark.parametrize("follow", [False, True])
def test_the_idle_timeout_counts_from_the_end_of_playback_when_the_server_follows_the_player(follow: bool) -> None:
    async def main() -> tuple[float, float, float]:
        # Four seconds of audio generated twice as fast as it plays.
        server = SimulatedRealtimeServer([Reply("a long answer", audio_seconds=4.0), Reply("still there?")], generation_speed=2.0)
        player = SimulatedPlayer()
        if follow:
            server.follow_playback(player)
        config: Any = {"model_settings": {"turn_detection": {"type": "server_vad", "idle_timeout_ms": 3000}}}
        async with await RealtimeRunner(AGENT, model=server.model(), config=config).run(model_config={"playback_tracker": player.tracker}) as session:
            server.user_speaks("tell me", at=0.5, seconds=0.5)
            finished: list[float] = []
            player.add_playback_listener(lambda what, item: finished.append(agentsim.now()) if what == "finished" else None)
            seen = await listen_and_play(session, player, 15.0)
        done = server_events(seen, "response.done")[0][0]
        timeout = next(at for at, event in seen if event.type == "input_audio_timeout_triggered")
        return done, finished[0], timeout

    done, played, timeout = agentsim.run(main)
    assert played > done + 1.5  # playback ends long after generation
    if follow:
        assert timeout == pytest.approx(played + 3.0, abs=0.05)
    else:
        assert timeout == pytest.approx(done + 3.0, abs=0.05)


async def listen_and_play(session: Any, player: SimulatedPlayer, seconds: float) -> list[tuple[float, Any]]:
    """``listen``, feeding the player as a voice app does."""
    seen: list[tuple[float, Any]] = []
    try:
        async with asyncio.timeout(seconds):
            async for event in session:
                player.on_event(event)
                seen.append((agentsim.now(), event))
    except TimeoutError:
        pass
    player.close()
    return seen


def test_bad_limits_are_typed_errors() -> None:
    with pytest.raises(agentsim.SimulationConfigError) as info:
        SimulatedRealtimeServer(max_session_seconds=0)
    assert info.value.parameter == "max_session_seconds"
    with pytest.raises(agentsim.SimulationConfigError) as info:
        SimulatedRealtimeServer(rate_limits="yes")  # type: ignore[arg-type]
    assert info.value.parameter == "rate_limits"
    with pytest.raises(agentsim.SimulationConfigError) as info:
        SimulatedRealtimeServer().follow_playback(object())
    assert info.value.parameter == "player"
