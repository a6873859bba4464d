"""An app that does something else than the recorded one: the first
differing client event is a ``RecordingDivergenceError`` naming it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agents.realtime import RealtimeAgent, RealtimeRunner

import agentsim
from agentsim.realtime.server import Reply, SimulatedRealtimeServer, raw_server_event
from agentsim.recording import RecordingDivergenceError, RecordingRealtimeModel


async def chat(model: Any, messages: list[str]) -> list[str]:
    """Send each message and wait (up to 10 s) for its answer; returns the
    answers' transcripts. (A session whose connection the server closed
    does not end its event stream on every SDK release: the app gives up.)"""
    session = await RealtimeRunner(RealtimeAgent(name="A"), model=model).run()
    answers = []
    async with session:
        for message in messages:
            await session.send_message(message)
            try:
                async with asyncio.timeout(10):
                    async for event in session:
                        raw = raw_server_event(event)
                        if raw and raw["type"] == "response.output_audio_transcript.done":
                            answers.append(raw["transcript"])
                        if raw and raw["type"] == "response.done":
                            break
            except TimeoutError:
                break
    return answers


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "chat.jsonl"

    async def record() -> list[str]:
        server = SimulatedRealtimeServer([Reply("hello"), Reply("it ships tomorrow")])
        return await chat(RecordingRealtimeModel(server.model(), path), ["hi", "where is my order?"])

    assert agentsim.run(record) == ["hello", "it ships tomorrow"]
    return path


def test_the_same_app_does_not_diverge(recorded: Path) -> None:
    async def replay() -> list[str]:
        return await chat(SimulatedRealtimeServer.from_recording(recorded).model(), ["hi", "where is my order?"])

    assert agentsim.run(replay) == ["hello", "it ships tomorrow"]


def test_a_different_message_is_named_with_what_the_recording_had(recorded: Path) -> None:
    async def replay() -> list[str]:
        return await chat(SimulatedRealtimeServer.from_recording(recorded).model(), ["hi", "where is my parcel?"])

    with pytest.raises(RecordingDivergenceError) as caught:
        agentsim.run(replay)
    error = caught.value
    assert error.actual == {"type": "conversation.item.create", "item.type": "message", "item.role": "user", "item.text": "where is my parcel?"}
    assert error.expected is not None and error.expected["item.text"] == "where is my order?"
    assert error.line is not None and error.expected_at is not None and error.at >= 0
    assert "where is my parcel?" in str(error) and "where is my order?" in str(error) and f"line {error.line}" in str(error)
    assert isinstance(error, agentsim.SimulationError)


def test_an_event_the_recording_never_had_is_a_divergence(recorded: Path) -> None:
    async def replay() -> list[str]:
        return await chat(SimulatedRealtimeServer.from_recording(recorded).model(), ["hi", "where is my order?", "and my refund?"])

    with pytest.raises(RecordingDivergenceError) as caught:
        agentsim.run(replay)
    assert caught.value.expected is None and caught.value.actual["item.text"] == "and my refund?"
    assert "no more conversation.item.create events" in str(caught.value)


def test_on_divergence_end_closes_the_session_and_keeps_the_error(recorded: Path) -> None:
    async def replay() -> tuple[list[str], SimulatedRealtimeServer]:
        server = SimulatedRealtimeServer.from_recording(recorded, on_divergence="end")
        return await chat(server.model(), ["hi", "where is my parcel?"]), server

    answers, server = agentsim.run(replay)
    assert answers == ["hello"]  # the session ended where the app diverged
    assert server.closed and isinstance(server.divergence, RecordingDivergenceError)
    assert server.divergence.actual["item.text"] == "where is my parcel?"


@pytest.mark.parametrize(
    ("options", "parameter"),
    [({"on_divergence": "ignore"}, "on_divergence"), ({"tolerance": "wide"}, "tolerance"), ({"tolerance": (-0.1, 0.03)}, "tolerance.relative")],
)
def test_bad_replay_options_are_typed_errors(recorded: Path, options: dict[str, Any], parameter: str) -> None:
    with pytest.raises(agentsim.SimulationConfigError) as caught:
        SimulatedRealtimeServer.from_recording(recorded, **options)
    assert caught.value.parameter == parameter
