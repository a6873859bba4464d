"""The simulated server speaks the GA Realtime protocol to the real adapter.

Every message either side puts on the in-memory wire is validated against the
``openai`` package's own event unions, and a full call (tool round trip,
answer, barge-in, hang-up) runs on the SDK's ``OpenAIRealtimeWebSocketModel``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner
from openai.types.realtime import RealtimeClientEvent, RealtimeServerEvent
from pydantic import TypeAdapter

import agentsim
from agentsim.audio import SimulatedPlayer
from agentsim.audio.pcm import tone_chunks
from agentsim.realtime.server import _events
from agentsim.realtime.server import CallTool, Reply, SimulatedRealtimeServer, SimulatedWebSocket, raw_server_event
from agentsim.timing import uniform

from .calls import run_call

SERVER_EVENTS: TypeAdapter[Any] = TypeAdapter(RealtimeServerEvent)
CLIENT_EVENTS: TypeAdapter[Any] = TypeAdapter(RealtimeClientEvent)


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[dict[str, Any]]]:
    """Every JSON message, per direction, as it crossed the simulated wire."""
    seen: dict[str, list[dict[str, Any]]] = {"server": [], "client": []}
    receive, send = SimulatedWebSocket.receive, SimulatedWebSocket.send

    def record_receive(self: SimulatedWebSocket, message: str) -> None:
        seen["server"].append(json.loads(message))
        receive(self, message)

    async def record_send(self: SimulatedWebSocket, payload: str) -> None:
        seen["client"].append(json.loads(payload))
        await send(self, payload)

    monkeypatch.setattr(SimulatedWebSocket, "receive", record_receive)
    monkeypatch.setattr(SimulatedWebSocket, "send", record_send)
    return seen


def _weather_agent(calls: list[tuple[str, float]]) -> RealtimeAgent[Any]:
    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        calls.append((city, agentsim.now()))
        return f"Sunny in {city}"

    return RealtimeAgent(name="Weather", instructions="Answer about the weather.", tools=[get_weather])


def _weather_call() -> Any:
    calls: list[tuple[str, float]] = []
    server = SimulatedRealtimeServer([CallTool("get_weather", {"city": "Oslo"}, call_id="call_oslo"), Reply("It is sunny in Oslo today", audio_seconds=3.0), Reply("Goodbye")])
    player = SimulatedPlayer(network_delay=0.03, jitter_buffer_ms=60)

    def script(server: SimulatedRealtimeServer, session: Any) -> None:
        server.user_speaks("what is the weather in Oslo", at=0.5, seconds=1.0)
        server.user_speaks("thanks, bye", at=4.0, seconds=0.5)  # barges in on the answer

    async def main() -> dict[str, Any]:
        events = await run_call(server, _weather_agent(calls), player=player, seconds=10, script=script)
        return {"events": events, "server": server, "player": player, "calls": calls}

    return main


def test_every_message_on_the_wire_is_a_valid_ga_realtime_event(wire: dict[str, list[dict[str, Any]]]) -> None:
    agentsim.run(_weather_call())
    kinds = {event["type"] for event in wire["server"]}
    for event in wire["server"]:
        assert SERVER_EVENTS.validate_python(event).type == event["type"]
    for event in wire["client"]:
        assert CLIENT_EVENTS.validate_python(event).type == event["type"]
    # The call exercised the whole protocol the issue names.
    assert {
        "session.created",
        "session.updated",
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
        "response.created",
        "response.output_item.added",
        "response.content_part.added",
        "response.function_call_arguments.done",
        "response.output_audio.delta",
        "response.output_audio_transcript.delta",
        "response.done",
        "conversation.item.truncated",
    } <= kinds
    client_kinds = {event["type"] for event in wire["client"]}
    assert {"session.update", "conversation.item.create", "response.create", "conversation.item.truncate"} <= client_kinds


@pytest.mark.parametrize("chunk", [b"", b"\x01", bytes(range(256)) * 7, tone_chunks(0.1, 960)[1]], ids=["empty", "one byte", "every byte", "tone"])
@pytest.mark.parametrize("item_id", ["item_sim000003", 'it"em\\ \u00e9\n'], ids=["plain id", "id needing escapes"])
def test_an_audio_delta_is_encoded_exactly_as_json_dumps_would(chunk: bytes, item_id: str) -> None:
    # Audio deltas are spliced together (the audio is not scanned by the JSON
    # encoder); the text must be what json.dumps makes of the event.
    message = _events.audio_delta_message("event_sim000007", "resp_sim000002", item_id, chunk)
    assert message == json.dumps(_events.audio_delta("event_sim000007", "resp_sim000002", item_id, chunk))
    assert SERVER_EVENTS.validate_python(json.loads(message)).delta == base64.b64encode(chunk).decode("ascii")


def test_tool_round_trip_on_the_real_adapter() -> None:
    result = agentsim.run(_weather_call())
    server: SimulatedRealtimeServer = result["server"]
    # The SDK ran the tool the server called, once, after the user stopped speaking.
    assert [city for city, _ in result["calls"]] == ["Oslo"]
    assert result["calls"][0][1] >= 1.5
    kinds = [event.type for event in result["events"]]
    assert kinds.index("tool_start") < kinds.index("tool_end")
    # Its output went back as a function_call_output for the server's call id,
    # and the answer, the barge-in and the goodbye followed.
    client = [kind for _, direction, kind in server.log if direction == "client"]
    assert client.count("conversation.item.create") == 1
    assert [r["kind"] for r in server.responses] == ["CallTool", "Reply", "Reply"]
    # The server had finished generating the answer (2x real time) before the
    # barge-in at 4.0 s, so nothing was left to cancel; the caller was still
    # hearing it, so the SDK truncated it (next test).
    assert [r["cancelled"] for r in server.responses] == [False, False, False]
    server.assert_rules()


def test_barge_in_truncates_at_what_the_caller_heard() -> None:
    result = agentsim.run(_weather_call())
    server: SimulatedRealtimeServer = result["server"]
    player: SimulatedPlayer = result["player"]
    answer = server.responses[1]["item_id"]
    # The answer (3 s of audio) was cut by the barge-in at 4.0 s: the caller heard
    # part of it, the server had sent all of it, and the SDK truncated the item
    # no later than what was played (the tracker counts whole chunks).
    assert player.interrupted == [answer]
    heard = player.played_ms(answer)
    assert 0 < heard < 3000 <= server.audio_sent_ms(answer)
    truncations = [raw for raw in map(raw_server_event, result["events"]) if raw is not None and raw["type"] == "conversation.item.truncated"]
    assert len(truncations) == 1
    end_ms = truncations[0]["audio_end_ms"]
    assert heard - 40 <= end_ms <= heard + 1e-6  # float time, not a real overshoot


def test_the_same_seed_gives_the_same_call() -> None:
    def digest(seed: int) -> str:
        return agentsim.simulate(_weather_call(), seed=seed, strategy="random").trace.digest()

    assert digest(3) == digest(3)


CROSS_PROCESS = """
import json, sys
sys.path.insert(0, {root!r})
import agentsim
from tests.realtime_server.test_wire import _jittered_call
print(json.dumps([agentsim.simulate(_jittered_call(), seed=seed, strategy="random").trace.digest() for seed in (1, 2)]))
"""


def _jittered_call() -> Any:
    async def main() -> None:
        server = SimulatedRealtimeServer([Reply("a b c d e f", audio_seconds=2.0), Reply("ok")], latency=uniform(0.01, 0.08), cancel_latency=uniform(0.05, 0.3))
        player = SimulatedPlayer(network_delay=uniform(0.02, 0.1), jitter_buffer_ms=60)

        def script(server: SimulatedRealtimeServer, session: Any) -> None:
            server.user_speaks("go", at=0.3, seconds=0.3)
            server.user_speaks("stop", at=1.2, seconds=0.3)

        await run_call(server, RealtimeAgent(name="Jitter"), player=player, seconds=4, script=script)

    return main


@pytest.mark.slow
def test_a_seed_gives_the_same_call_in_any_process() -> None:
    root = str(Path(__file__).resolve().parents[2])
    outputs = []
    for hash_seed in ("0", "4242"):
        completed = subprocess.run(
            [sys.executable, "-c", CROSS_PROCESS.format(root=root)],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True, text=True, timeout=120, check=False,
        )
        assert completed.returncode == 0, completed.stderr
        outputs.append(json.loads(completed.stdout.strip().splitlines()[-1]))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] != outputs[0][1]  # and the two seeds drew different calls


def test_text_only_sessions_get_text_events(wire: dict[str, list[dict[str, Any]]]) -> None:
    async def main() -> Any:
        server = SimulatedRealtimeServer([Reply("hello there friend")])
        config: Any = {"model_settings": {"modalities": ["text"]}}
        session = await RealtimeRunner(RealtimeAgent(name="Texter"), model=server.model(), config=config).run()
        history: list[Any] = []
        async with session:
            await session.send_message("hi")
            try:
                async with asyncio.timeout(3.0):
                    async for event in session:
                        if event.type == "history_updated":
                            history = event.history
            except TimeoutError:
                pass
        return server, history

    server, history = agentsim.run(main)
    kinds = [event["type"] for event in wire["server"]]
    assert "response.output_audio.delta" not in kinds
    assert kinds.count("response.output_text.delta") == 3  # a word at a time
    for event in wire["server"]:
        SERVER_EVENTS.validate_python(event)
    # The SDK built the assistant message from the text deltas.
    assert history[-1].role == "assistant"
    assert [part.text for part in history[-1].content] == ["hello there friend"]
    assert server.audio_sent_ms(server.responses[0]["item_id"]) == 0
