"""The realtime guide's last gaps on the simulated server, each on the wire:
transcription settings as the openai types define them, ``session.update``
replacing versus merging, and a close that fails."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agents.realtime import RealtimeAgent, RealtimeRunner
from websockets.exceptions import ConnectionClosedError

import agentsim
from agentsim.realtime.server import Reply, SimulatedRealtimeServer, SimulatedWebSocket


async def exchange(ws: SimulatedWebSocket, events: list[dict[str, Any]], seconds: float = 3.0) -> list[tuple[float, dict[str, Any]]]:
    """Send raw client events, then read the server's for ``seconds``."""
    for event in events:
        await ws.send(json.dumps(event))
    seen: list[tuple[float, dict[str, Any]]] = []
    try:
        async with asyncio.timeout(seconds):
            async for message in ws:
                seen.append((agentsim.now(), json.loads(message)))
    except TimeoutError:
        pass
    return seen


def update(**input_settings: Any) -> dict[str, Any]:
    return {"type": "session.update", "session": {"type": "realtime", "audio": {"input": input_settings}}}


@pytest.mark.parametrize(
    "transcription",
    [
        {"model": "gpt-transcribe", "language": "en", "languages": ["en", "fr"]},
        {"model": "gpt-4o-mini-transcribe", "languages": ["en", "fr"]},
        {"model": "gpt-4o-transcribe", "delay": "low"},
        {"model": "gpt-realtime-whisper", "delay": "eventually"},
        {"model": "gpt-realtime-whisper", "prompt": "technology words"},
    ],
    ids=["language-and-languages", "languages-on-another-model", "delay-on-another-model", "unknown-delay", "whisper-with-prompt"],
)
def test_invalid_transcription_settings_get_the_services_error_and_change_nothing(transcription: dict[str, Any]) -> None:
    async def main() -> tuple[list[dict[str, Any]], Any, list[str]]:
        server = SimulatedRealtimeServer()
        seen = await exchange(server.connect(), [update(transcription=transcription)])
        return [event for _, event in seen], server.session["audio"]["input"].get("transcription"), [v.rule for v in server.violations]

    events, kept, rules = agentsim.run(main)
    kinds = [event["type"] for event in events]
    assert kinds == ["session.created", "error"]  # no session.updated
    assert events[1]["error"]["code"] == "invalid_value" and "transcription" in events[1]["error"]["message"]
    assert kept is None and rules == ["transcription_settings"]


def test_a_transcription_delay_is_honoured_and_detected_languages_are_reported() -> None:
    async def main(transcription: dict[str, Any]) -> tuple[float, float, dict[str, Any]]:
        server = SimulatedRealtimeServer([Reply("ok")], latency=0.0, client_latency=0.0)
        ws = server.connect()
        await ws.send(json.dumps(update(transcription=transcription)))
        server.user_speaks("bonjour tout le monde", at=0.5, seconds=1.0)
        seen = await exchange(ws, [], seconds=4.0)
        stopped = next(t for t, e in seen if e["type"] == "input_audio_buffer.speech_stopped")
        done_at, done = next((t, e) for t, e in seen if e["type"] == "conversation.item.input_audio_transcription.completed")
        return stopped, done_at, done

    stopped, at, plain = agentsim.run(main, {"model": "gpt-realtime-whisper"})
    assert at == stopped and "languages" not in plain
    stopped, at, delayed = agentsim.run(main, {"model": "gpt-realtime-whisper", "delay": "high"})
    assert at == pytest.approx(stopped + 0.6)  # the simulation's "high" delay
    _, _, detected = agentsim.run(main, {"model": "gpt-transcribe", "languages": ["fr", "en"]})
    assert detected["languages"] == [{"code": "fr"}]
    _, _, detected = agentsim.run(main, {"model": "gpt-live-transcribe", "language": "de"})
    assert detected["languages"] == [{"code": "de"}]


def test_session_update_replaces_a_field_whole_merges_the_audio_objects_and_null_clears() -> None:
    async def main() -> list[dict[str, Any]]:
        server = SimulatedRealtimeServer()
        events = [
            update(turn_detection={"type": "server_vad", "threshold": 0.7, "silence_duration_ms": 800}),
            update(turn_detection={"type": "semantic_vad", "eagerness": "low"}),  # replaces: no threshold left
            {"type": "session.update", "session": {"type": "realtime", "audio": {"output": {"voice": "marin"}}}},  # input untouched
            update(turn_detection=None),  # clears: turn detection off
        ]
        seen = await exchange(server.connect(), events)
        return [event["session"] for _, event in seen if event["type"] == "session.updated"]

    first, second, third, fourth = agentsim.run(main)
    assert first["audio"]["input"]["turn_detection"] == {"type": "server_vad", "threshold": 0.7, "silence_duration_ms": 800}
    assert second["audio"]["input"]["turn_detection"] == {"type": "semantic_vad", "eagerness": "low"}
    assert third["audio"]["input"]["turn_detection"] == {"type": "semantic_vad", "eagerness": "low"}
    assert third["audio"]["output"]["voice"] == "marin" and third["audio"]["output"]["format"] == {"type": "audio/pcm", "rate": 24000}
    assert fourth["audio"]["input"]["turn_detection"] is None and fourth["audio"]["input"]["format"] == {"type": "audio/pcm", "rate": 24000}


def test_a_close_that_fails_on_the_wire_reaches_the_app() -> None:
    async def main() -> tuple[str, bool, list[str]]:
        server = SimulatedRealtimeServer([Reply("hello", audio_seconds=0.5)])
        server.fail_next_close(ConnectionClosedError(None, None, None))
        session = await RealtimeRunner(RealtimeAgent(name="A"), model=server.model()).run()
        await session.__aenter__()
        await session.send_message("hi")
        await asyncio.sleep(2.0)
        try:
            await session.close()
        except ConnectionClosedError as error:
            outcome = type(error).__name__
        else:
            outcome = "closed cleanly"
        return outcome, server.closed, [kind for _, side, kind in server.log if side == "client" and kind == "close"]

    outcome, closed, closes = agentsim.run(main)
    # The SDK's close surfaces the failed handshake (0.13.6, 0.21.1 and the
    # newest alike); the connection is gone all the same.
    assert outcome == "ConnectionClosedError" and closed and closes == ["close"]


def test_fail_next_close_takes_an_exception() -> None:
    with pytest.raises(agentsim.SimulationConfigError) as info:
        SimulatedRealtimeServer().fail_next_close("boom")  # type: ignore[arg-type]
    assert info.value.parameter == "error"
