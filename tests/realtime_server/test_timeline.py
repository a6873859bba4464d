"""A simulated call's timeline: server events, client events and playback on
one virtual time axis, with the audio actually heard as a counter."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agents.realtime import RealtimeAgent

import agentsim
from agentsim.audio import SimulatedPlayer
from agentsim.realtime.server import Reply, SimulatedRealtimeServer
from agentsim._kernel.lanes import lanes as registered_lanes
from agentsim.timeline import export, load, render

from .calls import run_call


async def _barge_in_call() -> float:
    server = SimulatedRealtimeServer([Reply("a story about the sea and the sky", audio_seconds=4.0), Reply("okay")], generation_speed=1.0)
    player = SimulatedPlayer(network_delay=0.05, jitter_buffer_ms=80)

    def script(server: SimulatedRealtimeServer, session: Any) -> None:
        server.user_speaks("tell me a story", at=0.5, seconds=0.5)
        server.user_speaks("stop", at=2.5, seconds=0.4)

    await run_call(server, RealtimeAgent(name="Teller"), player=player, seconds=6, script=script)
    return player.heard_ms


def test_server_client_and_playback_lanes_share_one_time_axis(tmp_path: Path) -> None:
    result = agentsim.simulate(_barge_in_call)
    assert result.ok, result.exception
    path = tmp_path / "call.json"
    export(result.trace, path)
    records = json.loads(path.read_text())["traceEvents"]
    lanes = {r["tid"]: r["args"]["name"] for r in records if r.get("name") == "thread_name"}
    by_lane: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if record["ph"] == "i":
            by_lane.setdefault(lanes[record["tid"]], []).append(record)
    server, client, playback = (by_lane[registered_lanes()[kind].title] for kind in ("server", "client", "playback"))
    # The barge-in, as both sides saw it, in time order on one axis:
    # speech_started reaches the client, the client's truncate reaches the
    # server, the truncated confirmation comes back; playback stopped in between.
    speech = [r["ts"] for r in server if r["name"] == "input_audio_buffer.speech_started"][1]
    truncate = next(r["ts"] for r in client if r["name"] == "conversation.item.truncate")
    truncated = next(r["ts"] for r in server if r["name"] == "conversation.item.truncated")
    stopped = next(r["ts"] for r in playback if r["name"] == "interrupted")
    assert speech <= stopped < truncate < truncated
    # Each lane event keeps the task that recorded it.
    assert all("task" in r["args"] for r in server + client + playback)
    # The second clock: heard audio as a counter, rising, ending at what the player heard.
    heard = [(r["ts"], r["args"]["heard_ms"]) for r in records if r["ph"] == "C" and "heard_ms" in r["args"]]
    assert [value for _, value in heard] == sorted(value for _, value in heard)
    assert heard[-1][1] == round(result.value, 1)
    assert heard[-1][0] >= stopped


def test_lanes_round_trip_through_load_and_render(tmp_path: Path) -> None:
    result = agentsim.simulate(_barge_in_call)
    path = tmp_path / "call.json"
    export(result.trace, path)
    loaded = load(path)
    original = result.trace.events
    assert [(e.ticks, e.kind, e.task, e.detail) for e in loaded] == [(e.ticks, e.kind, e.task, e.detail) for e in original]
    text = render(loaded, kinds=["server", "client", "playback"])
    assert "conversation.item.truncate" in text and "heard_ms=" in text


def test_violations_get_their_own_lane(tmp_path: Path) -> None:
    async def main() -> None:
        server = SimulatedRealtimeServer([Reply("hello", audio_seconds=2.0)])
        wire = server.connect()
        await wire.send(json.dumps({"type": "response.create"}))
        await wire.send(json.dumps({"type": "response.create"}))  # while the first is active
        await asyncio.sleep(0.1)
        await wire.close()

    result = agentsim.simulate(main)
    path = tmp_path / "rules.json"
    export(result.trace, path)
    records = json.loads(path.read_text())["traceEvents"]
    lane = next(r["tid"] for r in records if r.get("name") == "thread_name" and r["args"]["name"] == registered_lanes()["violation"].title)
    [violation] = [r for r in records if r["ph"] == "i" and r["tid"] == lane]
    assert violation["name"] == "single_active_response"
    assert violation["ts"] == 20_000.0  # virtual µs: both creates arrive at 0.02 s, in send order
