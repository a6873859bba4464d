"""A call longer than the server's session limit: the app that reconnects
passes ``check_call``; the one that does not fails it, naming the cause."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

import pytest
from agents.realtime import RealtimeAgent, RealtimeRunner

import agentsim
from agentsim.audio import SimulatedPlayer
from agentsim.realtime.server import CallReport, SimulatedCaller, SimulatedRealtimeServer, SoakCheckError, check_call
from agentsim.timing import uniform

AGENT = RealtimeAgent(name="Support", instructions="Help with orders.")


async def call(minutes: float, *, reconnect: bool, ask_again: bool = False, limit: float = 120.0) -> CallReport:
    """The app: one RealtimeSession after another while the caller is on the
    line (``reconnect``), the conversation carried over in the new agent's
    instructions; ``ask_again``: it also repeats the caller's last question
    to the new session (the bug that answers a turn twice)."""
    server = SimulatedRealtimeServer(latency=uniform(0.01, 0.08), first_audio_latency=uniform(0.15, 0.6), generation_speed=1.5, max_session_seconds=limit)
    player = SimulatedPlayer(network_delay=uniform(0.02, 0.1), jitter_buffer_ms=100)
    caller = SimulatedCaller(server, player, minutes=minutes, tool_questions=0.0)
    calling: asyncio.Task[CallReport] | None = None
    said: list[str] = []
    agent = AGENT
    while True:
        ended = asyncio.Event()
        async with await RealtimeRunner(agent, model=server.model()).run(model_config={"playback_tracker": player.tracker}) as session:
            if calling is None:
                calling = caller.start()
            elif ask_again and said:
                await session.send_message(said[-1])

            async def play() -> None:
                async for event in session:
                    player.on_event(event)
                    if event.type == "error":
                        ended.set()  # session_expired: the server closes next
                    elif event.type == "history_updated":
                        said[:] = [_text(item) for item in event.history if getattr(item, "role", None) == "user"]

            playing = asyncio.get_running_loop().create_task(play())
            waiting = asyncio.get_running_loop().create_task(ended.wait())
            await asyncio.wait([calling, waiting], return_when=asyncio.FIRST_COMPLETED)
            playing.cancel()
            waiting.cancel()
            await asyncio.gather(playing, waiting, return_exceptions=True)
        if calling.done() or not reconnect:
            break
        agent = AGENT.clone(instructions=f"{AGENT.instructions} The caller asked before: {'; '.join(said[-3:])}")
    report = await calling
    player.close()
    return report


def _text(item: Any) -> str:
    return " ".join(getattr(part, "transcript", None) or getattr(part, "text", None) or "" for part in getattr(item, "content", []))


@pytest.mark.parametrize("seed", [1, 2])
def test_the_reconnecting_app_passes_a_call_longer_than_the_session_limit(seed: int) -> None:
    report = agentsim.run(partial(call, reconnect=True), 5.0, seed=seed, wall_timeout=120)
    assert report.sessions == 3 and not report.dropped and report.hung_up
    assert report.minutes == pytest.approx(5.0, abs=0.3)
    check_call(report, lost_answers=None, unanswered=None)  # resumed, no turn answered twice, no rule broken
    assert report.lost_answers <= 2  # a turn spoken as a session expired may lose its answer: counted, not hidden
    assert "sessions: 3" in report.format()


@pytest.mark.parametrize("seed", [1, 2])
def test_the_app_that_never_reconnects_fails_check_call_naming_the_cause(seed: int) -> None:
    report = agentsim.run(partial(call, reconnect=False), 5.0, seed=seed, wall_timeout=120)
    assert report.sessions == 1 and report.dropped and not report.hung_up
    assert report.minutes < 2.5  # the limit at 2 min, then the caller's 10 s on the line
    with pytest.raises(SoakCheckError) as raised:
        check_call(report)
    assert raised.value.check == "resumed"
    assert "opened no new one" in str(raised.value) and "before the caller hung up" in str(raised.value)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_question_asked_again_of_the_new_session_is_a_double_answer(seed: int) -> None:
    report = agentsim.run(partial(call, reconnect=True, ask_again=True), 5.0, seed=seed, wall_timeout=120)
    assert report.sessions == 3 and report.double_answers >= 1
    with pytest.raises(SoakCheckError) as raised:
        check_call(report, lost_answers=None, unanswered=None)
    assert raised.value.check == "double answers"
