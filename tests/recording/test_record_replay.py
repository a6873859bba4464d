"""Record -> replay round trips: the same app sees the same session.

Recorded inside a simulation (the simulated server, virtual time), through
the SDK's real ``OpenAIRealtimeWebSocketModel`` against a local WebSocket
server (real sockets, real time, outside any simulation), and from the kept
fixture of a realistic call (a tool call, a barge-in, a truncation), which
replays on every SDK release CI runs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agents.realtime import RealtimeAgent, RealtimeRunner

import agentsim
from agentsim.realtime.server import SimulatedRealtimeServer, raw_server_event
from agentsim.recording import RecordingRealtimeModel, load

from .apps import record_support_call, replay_support_call

FIXTURE = Path(__file__).parent / "data" / "support_call.jsonl"
SECRET = "sk-test-never-in-a-file"


def test_a_call_recorded_in_a_simulation_replays_to_the_same_outcome(tmp_path: Path) -> None:
    path = tmp_path / "call.jsonl"
    recorded = record_support_call(path, barge_in_at=2.9, api_key=SECRET)
    replayed, server = agentsim.run(replay_support_call(path), strategy="fifo")
    assert replayed.events == recorded.events  # every session event and raw server event, in order
    assert replayed.transcript == recorded.transcript == ["bye"]
    assert replayed.stopped == recorded.stopped and len(recorded.stopped) == 1  # the barge-in stopped the answer
    assert server.divergence is None and server.playback is not None
    assert server.playback.sent == len(load(path).server_events())  # every recorded server event was sent
    text = path.read_text()
    assert SECRET not in text and "<redacted>" in text  # the api_key the app passed: never in the file


def test_the_stock_schedule_is_the_recordings_own_timeline(tmp_path: Path) -> None:
    path = tmp_path / "call.jsonl"
    record_support_call(path, barge_in_at=2.9)
    recording = load(path)
    _, server = agentsim.run(replay_support_call(path), strategy="fifo")
    sent = [(round(t, 6), kind) for t, side, kind in server.log if side == "server" and kind != "close (1000)"]
    assert sent == [(round(event.t, 6), event.type) for event in recording.server_events()]


def test_the_header_says_what_was_recorded(tmp_path: Path) -> None:
    path = tmp_path / "call.jsonl"
    record_support_call(path, barge_in_at=None)
    recording = load(path)
    header = recording.header
    assert (header["format"], header["version"], header["kind"], header["layer"]) == ("agentsim.recording", 1, "realtime", "wire")
    assert header["clock"] == "virtual" and header["audio"] == "duration" and header["sdk_version"]
    assert header["config"]["initial_model_settings"]["tools"] == ["lookup_order"]
    assert header["config"]["api_key"] == "<redacted>"
    audio = [event for event in recording.events if event.type == "response.output_audio.delta"]
    assert audio and all(set(event.payload["delta"]) == {"$audio"} for event in audio)  # durations, not audio
    assert all(event.payload["delta"]["$audio"]["bytes"] == event.audio_bytes() > 0 for event in audio)


def test_audio_kept_in_full_replays_byte_for_byte_and_a_duration_replays_its_length(tmp_path: Path) -> None:
    async def heard(model: Any) -> list[bytes]:
        session = await RealtimeRunner(RealtimeAgent(name="A"), model=model).run()
        chunks = []
        async with session:
            await session.send_message("hello")
            async for event in session:
                if event.type == "audio":
                    chunks.append(event.audio.data)
                raw = raw_server_event(event)
                if raw and raw["type"] == "response.done":
                    break
        return chunks

    from agentsim.realtime.server import Reply

    for keep in (True, False):
        path = tmp_path / f"keep-{keep}.jsonl"

        async def record() -> list[bytes]:
            return await heard(RecordingRealtimeModel(SimulatedRealtimeServer([Reply("hello there", audio_seconds=0.5)]).model(), path, keep_audio=keep))

        async def replay() -> list[bytes]:
            return await heard(SimulatedRealtimeServer.from_recording(path).model())

        original, again = agentsim.run(record), agentsim.run(replay)
        assert [len(chunk) for chunk in again] == [len(chunk) for chunk in original] and original
        if keep:
            assert again == original
        else:
            assert again != original and all(chunk == bytes(len(chunk)) for chunk in again)  # silence of the same length


def test_recording_through_the_real_websocket_model_against_a_local_server(tmp_path: Path) -> None:
    from agents.realtime.openai_realtime import OpenAIRealtimeWebSocketModel

    from .local_server import ANSWER, local_realtime_server

    async def ask(model: Any, model_config: Any) -> list[str]:
        session = await RealtimeRunner(RealtimeAgent(name="Support"), model=model).run(model_config=model_config)
        seen = []
        async with session:
            await session.send_message("where is my order?")
            async for event in session:
                raw = raw_server_event(event)
                seen.append(raw["type"] if raw else event.type)
                if raw and raw["type"] == "response.done":
                    break
        return seen

    path = tmp_path / "ws.jsonl"

    async def production() -> tuple[list[str], Any]:
        async with local_realtime_server() as (server, url):
            seen = await ask(RecordingRealtimeModel(OpenAIRealtimeWebSocketModel(), path), {"api_key": SECRET, "url": url})
            return seen, server

    seen, local = asyncio.run(production())  # real sockets, real time: no simulation
    assert local.headers[0]["authorization"] == f"Bearer {SECRET}"  # the key went to the server...
    assert SECRET not in path.read_text()  # ...and never to the file
    recording = load(path)
    assert recording.header["clock"] == "monotonic" and recording.header["model"] == "OpenAIRealtimeWebSocketModel"
    assert [event.type for event in recording.client_events()] == local.received + ["close"]
    assert any(event.type == "response.output_audio_transcript.done" and event.payload["transcript"] == ANSWER for event in recording.events)

    async def replay() -> list[str]:
        return await ask(SimulatedRealtimeServer.from_recording(path).model(), None)

    assert agentsim.run(replay) == seen


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_kept_fixture_replays_on_this_sdk_release(seed: int) -> None:
    """tests/recording/data/support_call.jsonl, recorded on openai-agents
    0.24: the caller asks about an order (a tool call), barges in on the
    answer (a truncation), and hears a goodbye. Seeds 0-2 of the default
    strategy and FIFO replay it without a divergence or a broken rule."""
    recording = load(FIXTURE)
    assert {"response.function_call_arguments.done", "input_audio_buffer.speech_started", "conversation.item.truncated"} <= {e.type for e in recording.events}
    for strategy in ("fifo", "portfolio"):
        outcome, server = agentsim.run(replay_support_call(FIXTURE), seed=seed, strategy=strategy)
        assert server.divergence is None
        assert outcome.transcript == ["bye"] and len(outcome.stopped) == 1
        assert ("server", "conversation.item.truncated") in outcome.events


def test_a_session_recorded_at_the_model_boundary_is_not_replayed_on_the_wire(tmp_path: Path) -> None:
    testing = pytest.importorskip("agents.realtime.testing", reason="the SDK's ScriptedRealtimeModel is newer than this release")
    from agentsim.recording import RecordingFormatError

    path = tmp_path / "model.jsonl"

    async def main() -> None:
        scripted = testing.ScriptedRealtimeModel()
        model = RecordingRealtimeModel(scripted, path)
        session = await RealtimeRunner(RealtimeAgent(name="A"), model=model).run()
        async with session:
            await session.send_message("hi")

    try:
        agentsim.run(main)
    except BaseException:
        pass  # the script expects nothing: what matters is what was recorded
    recording = load(path)
    assert recording.layer == "model" and recording.header["model"] == "ScriptedRealtimeModel"
    assert "send_user_input" in [event.type for event in recording.client_events()]
    with pytest.raises(RecordingFormatError) as caught:
        SimulatedRealtimeServer.from_recording(path)
    assert caught.value.line == 1 and "layer 'model'" in caught.value.problem
