"""How the simulated server takes turns: server VAD, its two switches, and
push-to-talk (turn detection off), on the real adapter."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents.realtime import RealtimeAgent, RealtimeRunner
from agents.realtime.model_inputs import RealtimeModelSendRawMessage

import agentsim
from agentsim.realtime.server import Reply, SimulatedRealtimeServer

CHUNK_20MS = bytes(960)  # pcm16 at 24 kHz


async def _push_to_talk(chunks: int, speech_ends_at: float) -> SimulatedRealtimeServer:
    """The user holds the button from 0.2 s; the app streams ``chunks`` of 20 ms,
    commits, and asks for a response."""
    server = SimulatedRealtimeServer()
    server.when_user_says("refund", Reply("refunds take five days", audio_seconds=2.0))
    config: Any = {"model_settings": {"turn_detection": None}}
    session = await RealtimeRunner(RealtimeAgent(name="Support"), model=server.model(), config=config).run()
    async with session:
        server.user_speaks("I want a refund", at=0.2, seconds=speech_ends_at - 0.2)
        await asyncio.sleep(0.2)
        for _ in range(chunks):
            await session.send_audio(CHUNK_20MS)
            await asyncio.sleep(0.02)
        await session.send_audio(b"", commit=True)
        await session.model.send_event(RealtimeModelSendRawMessage(message={"type": "response.create"}))
        await asyncio.sleep(3.0)
    return server


def test_push_to_talk_commits_what_was_said_and_answers_on_request() -> None:
    server = agentsim.run(_push_to_talk, 50, 1.0)
    kinds = [kind for _, side, kind in server.log if side == "server"]
    assert "input_audio_buffer.speech_started" not in kinds  # nobody detects turns
    assert server.input_audio_ms == pytest.approx(1000.0)
    committed = kinds.index("input_audio_buffer.committed")
    assert kinds.index("conversation.item.input_audio_transcription.completed") > committed
    # The transcript of the commit chose the answer; it came because the app asked.
    [response] = server.responses
    assert response["kind"] == "Reply" and server.audio_sent_ms(response["item_id"]) == pytest.approx(2000.0)
    assert server.violations == []


def test_a_commit_with_too_little_audio_breaks_a_rule() -> None:
    server = agentsim.run(_push_to_talk, 2, 1.0)  # 40 ms, released too early
    [violation] = server.violations
    assert violation.rule == "commit_needs_audio"
    assert violation.event == {"type": "input_audio_buffer.commit"}
    assert "only 40 ms" in violation.detail
    assert violation.time == pytest.approx(0.26, abs=0.01)


def test_words_finished_after_the_commit_miss_it() -> None:
    # The user lets go of the button before finishing the sentence: the
    # commit carries no transcript, so no scripted answer matches.
    server = agentsim.run(_push_to_talk, 10, 2.0)
    kinds = [kind for _, side, kind in server.log if side == "server"]
    assert "conversation.item.input_audio_transcription.completed" not in kinds
    [response] = server.responses
    assert server.audio_sent_ms(response["item_id"]) < 2000.0  # the default empty reply


@pytest.mark.parametrize(("create_response", "interrupt_response"), [(True, True), (False, True), (True, False)])
def test_server_vad_switches(create_response: bool, interrupt_response: bool) -> None:
    async def main() -> SimulatedRealtimeServer:
        server = SimulatedRealtimeServer([Reply("a long answer " * 4, audio_seconds=4.0), Reply("ok")], generation_speed=1.0)
        # The client's session.update decides (the SDK sends its own turn
        # detection, so the server's constructor switches are only the default).
        detection = {"type": "server_vad", "create_response": create_response, "interrupt_response": interrupt_response}
        config: Any = {"model_settings": {"turn_detection": detection}}
        session = await RealtimeRunner(RealtimeAgent(name="Support"), model=server.model(), config=config).run()
        async with session:
            server.user_speaks("tell me", at=0.2, seconds=0.5)
            await asyncio.sleep(1.0)
            if not create_response:
                await session.model.send_event(RealtimeModelSendRawMessage(message={"type": "response.create"}))
            server.user_speaks("wait", at=2.0, seconds=0.3)  # during the answer
            await asyncio.sleep(6.0)
        return server

    server = agentsim.run(main)
    assert server.violations == []
    responses = server.responses
    if create_response:
        # One answer per turn, created by the server at the end of each.
        assert len(responses) == 2
    else:
        assert len(responses) == 1  # only the one the app asked for
    # The barge-in cancels the answer either way: the server does it with
    # interrupt_response; without it, the SDK's adapter sends response.cancel
    # itself when it sees speech_started (openai-agents behaviour, 0.13.6-0.24).
    assert responses[0]["cancelled"]
    client = [kind for _, side, kind in server.log if side == "client"]
    assert ("response.cancel" in client) is (not interrupt_response)
