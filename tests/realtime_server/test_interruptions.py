"""The interruption family, on the SDK's real ``OpenAIRealtimeWebSocketModel``
against the simulated server, with jittered network and server latencies.

Each case runs under FIFO and random seeds 0-15 (the stale-audio finding
under FIFO and random 0-2); every seed draws different latencies and a
different order of simultaneous events. Each first checks
that the run really reached the race window it is about (from the server's
log), then that the server rules hold - on the installed SDK release, with
no hand-written assertion about the SDK's internals.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from agents import GuardrailFunctionOutput, function_tool, output_guardrail
from agents.realtime import RealtimeAgent, RealtimeRunner

import agentsim
from agentsim.audio import SimulatedPlayer
from agentsim.realtime.server import CallTool, Reply, SimulatedRealtimeServer, raw_server_event
from agentsim.timing import uniform

from .calls import run_call

SCHEDULES = [(0, "fifo")] + [(seed, "random") for seed in range(16)]
SCHEDULE_IDS = [f"{strategy}-{seed}" for seed, strategy in SCHEDULES]


@dataclass
class Call:
    server: SimulatedRealtimeServer
    player: SimulatedPlayer
    events: list[Any]

    def times(self, direction: str, kind: str) -> list[float]:
        return [time for time, side, event in self.server.log if side == direction and event == kind]

    def server_events(self, kind: str) -> list[dict[str, Any]]:
        return [raw for raw in map(raw_server_event, self.events) if raw is not None and raw["type"] == kind]


def _network() -> dict[str, Any]:
    return {"latency": uniform(0.01, 0.06), "client_latency": uniform(0.01, 0.06)}


def _simulate(build: Callable[[], tuple[SimulatedRealtimeServer, RealtimeAgent[Any], Callable[..., None]]], seed: int, strategy: str, seconds: float = 14.0) -> Call:
    async def main() -> Call:
        server, agent, script = build()
        player = SimulatedPlayer(network_delay=uniform(0.02, 0.08), jitter_buffer_ms=80)
        config = {"guardrails_settings": {"debounce_text_length": 10}}
        events = await run_call(server, agent, player=player, seconds=seconds, script=script, config=config)
        return Call(server, player, events)

    call = agentsim.run(main, seed=seed, strategy=strategy)
    call.server.assert_rules()  # the oracle: raises RealtimeServerRuleError with each violation
    return call


@pytest.mark.parametrize(("seed", "strategy"), SCHEDULES, ids=SCHEDULE_IDS)
def test_interrupt_during_audio(seed: int, strategy: str) -> None:
    def build() -> tuple[SimulatedRealtimeServer, RealtimeAgent[Any], Callable[..., None]]:
        story = Reply("once upon a time there was a very long story " * 2, audio_seconds=6.0)
        server = SimulatedRealtimeServer([story, Reply("okay")], generation_speed=1.0, first_audio_latency=uniform(0.1, 0.4), **_network())

        def script(server: SimulatedRealtimeServer, session: Any) -> None:
            server.user_speaks("tell me a story", at=0.5, seconds=0.5)
            server.user_speaks("stop", at=3.0, seconds=0.4)

        return server, RealtimeAgent(name="Teller"), script

    call = _simulate(build, seed, strategy)
    story, answer = call.server.responses
    item = story["item_id"]
    # In the window: the server was still generating the story when the user barged in.
    assert story["cancelled"] and not answer["cancelled"]
    assert call.times("server", "input_audio_buffer.speech_started")[1] < call.times("server", "response.done")[0]
    [truncated] = call.server_events("conversation.item.truncated")
    # The SDK truncated at what the caller heard, never past it or past what was sent.
    assert truncated["item_id"] == item
    assert truncated["audio_end_ms"] <= call.player.played_ms(item) + 1e-6
    assert truncated["audio_end_ms"] <= call.server.audio_sent_ms(item) < 6000
    # Playing the story, or between two of its chunks: audio generated at real
    # time over a 20-80 ms network can leave an 80 ms jitter buffer empty for
    # a moment (random seed 3 barges in during such an underrun).
    assert call.player.interrupted in ([item], [])
    assert call.player.played_ms(answer["item_id"]) > 0  # and the call went on
    assert [done["response"]["status_details"]["reason"] for done in call.server_events("response.done") if done["response"]["status"] == "cancelled"] == ["turn_detected"]


@pytest.mark.parametrize(("seed", "strategy"), SCHEDULES, ids=SCHEDULE_IDS)
def test_interrupt_before_the_first_audio_delta(seed: int, strategy: str) -> None:
    def build() -> tuple[SimulatedRealtimeServer, RealtimeAgent[Any], Callable[..., None]]:
        server = SimulatedRealtimeServer([Reply("let me think about that", audio_seconds=2.0), Reply("okay")], first_audio_latency=1.5, **_network())

        def script(server: SimulatedRealtimeServer, session: Any) -> None:
            server.user_speaks("what is the answer", at=0.5, seconds=0.5)
            server.user_speaks("wait", at=1.3, seconds=0.4)

        return server, RealtimeAgent(name="Thinker"), script

    call = _simulate(build, seed, strategy)
    first, second = call.server.responses
    # In the window: output_item.added reached the client, no audio had, then the barge-in.
    added = call.times("server", "response.output_item.added")[0]
    barge_in = call.times("server", "input_audio_buffer.speech_started")[1]
    first_delta = call.times("server", "response.output_audio.delta")[0]
    assert added < barge_in < first_delta
    assert first["cancelled"] and call.server.audio_sent_ms(first["item_id"]) == 0
    # Nothing was heard of it, so nothing may be truncated past zero.
    assert all(event["audio_end_ms"] == 0 for event in call.server_events("conversation.item.truncated"))
    assert call.player.played_ms(first["item_id"]) == 0
    assert call.player.played_ms(second["item_id"]) > 0


@pytest.mark.parametrize(("seed", "strategy"), SCHEDULES, ids=SCHEDULE_IDS)
def test_interrupt_while_a_tool_call_is_in_flight(seed: int, strategy: str) -> None:
    tool_runs: list[tuple[float, float]] = []

    def build() -> tuple[SimulatedRealtimeServer, RealtimeAgent[Any], Callable[..., None]]:
        @function_tool
        async def search_flights(destination: str) -> str:
            """Search flights (takes 3 s)."""
            started = agentsim.now()
            await asyncio.sleep(3.0)
            tool_runs.append((started, agentsim.now()))
            return f"3 flights to {destination}"

        replies = [CallTool("search_flights", {"destination": "Oslo"}), Reply("what else can I do " * 2, audio_seconds=8.0), Reply("I found three flights", audio_seconds=2.0)]
        server = SimulatedRealtimeServer(replies, generation_speed=1.0, **_network())

        def script(server: SimulatedRealtimeServer, session: Any) -> None:
            server.user_speaks("find flights to Oslo", at=0.5, seconds=0.5)
            server.user_speaks("actually", at=2.0, seconds=0.5)  # while the tool runs

        return server, RealtimeAgent(name="Travel", tools=[search_flights]), script

    call = _simulate(build, seed, strategy)
    [(started, finished)] = tool_runs
    barge_in = call.times("server", "input_audio_buffer.speech_started")[1]
    created, done = call.times("server", "response.created"), call.times("server", "response.done")
    output_arrived = call.times("client", "conversation.item.create")[0]
    # In the window: the barge-in came while the tool ran, and the tool's output
    # reached the server while the barge-in's own response was still active ...
    assert started < barge_in < finished
    assert created[1] < output_arrived < done[1]
    # ... so the follow-up response.create had to wait for that response to end.
    [follow_up] = call.times("client", "response.create")
    assert follow_up > done[1]
    assert [r["kind"] for r in call.server.responses] == ["CallTool", "Reply", "Reply"]


@pytest.mark.parametrize(("seed", "strategy"), SCHEDULES, ids=SCHEDULE_IDS)
def test_output_guardrail_trips_while_the_server_is_slow_to_cancel(seed: int, strategy: str) -> None:
    def build() -> tuple[SimulatedRealtimeServer, RealtimeAgent[Any], Callable[..., None]]:
        @output_guardrail
        async def no_secrets(context: Any, agent: Any, text: str) -> GuardrailFunctionOutput:
            return GuardrailFunctionOutput(output_info=None, tripwire_triggered="secret" in text)

        leak = Reply("here is the secret code one two three four five", audio_seconds=4.0)
        server = SimulatedRealtimeServer([leak, Reply("sorry, I cannot share that")], cancel_latency=uniform(0.3, 0.8), generation_speed=1.0, **_network())

        def script(server: SimulatedRealtimeServer, session: Any) -> None:
            server.user_speaks("what is the code", at=0.5, seconds=0.5)

        return server, RealtimeAgent(name="Vault", output_guardrails=[no_secrets]), script

    call = _simulate(build, seed, strategy)
    assert "guardrail_tripped" in [event.type for event in call.events]
    leak, apology = call.server.responses
    assert leak["cancelled"] and not apology["cancelled"]
    [cancel] = call.times("client", "response.cancel")
    cancelled_done = call.times("server", "response.done")[0]
    # In the window: the cancel took 0.3-0.8 s to confirm ...
    assert cancelled_done - cancel >= 0.3
    # ... and the guardrail's follow-up response.create waited for it.
    [follow_up] = call.times("client", "response.create")
    assert follow_up > cancelled_done
    # The player was playing the leak when the trip landed, or waiting for its
    # next chunk (an underrun: network windows let a chunk come late; random
    # seed 7 lands the trip there). Either way nothing of it plays afterwards.
    assert call.player.interrupted in ([leak["item_id"]], [])
    assert [done["response"]["status_details"]["reason"] for done in call.server_events("response.done") if done["response"]["status"] == "cancelled"] == ["client_cancelled"]


def test_an_app_that_sends_after_the_server_hung_up_is_reported() -> None:
    # The oracle on the real adapter: after a normal close (code 1000) reached
    # the client, session.send_message still writes to the socket. The server
    # reports it; the app sees websockets' ConnectionClosedOK.
    async def main() -> tuple[SimulatedRealtimeServer, BaseException | None]:
        server = SimulatedRealtimeServer()

        async def hang_up() -> None:
            await asyncio.sleep(2.0)
            await server.disconnect(clean=True)

        session = await RealtimeRunner(RealtimeAgent(name="Bye"), model=server.model()).run()
        async with session:
            await hang_up()
            await asyncio.sleep(0.5)  # the close (code 1000) has reached the client
            failure = None
            try:
                await session.send_message("are you still there?")
            except Exception as exc:
                failure = exc
        return server, failure

    server, failure = agentsim.run(main)
    assert type(failure).__name__ == "ConnectionClosedOK"
    [violation] = server.violations
    assert violation.rule == "no_events_after_close"
    assert violation.event["type"] == "conversation.item.create"
    assert violation.time == pytest.approx(2.5)


@pytest.mark.parametrize(("seed", "strategy"), SCHEDULES[:4], ids=SCHEDULE_IDS[:4])
@pytest.mark.parametrize("cancel_latency", [0.05, 0.3, 1.0])
@pytest.mark.parametrize("drop_interrupted_audio", [False, True], ids=["plays-everything", "drops-stale-audio"])
def test_stale_audio_after_a_barge_in_lasts_as_long_as_the_cancel(cancel_latency: float, drop_interrupted_audio: bool, seed: int, strategy: str) -> None:
    # What the SDK does: after a server-VAD barge-in the adapter still emits
    # the interrupted response's audio deltas that the server generated until
    # it confirmed the cancel. An app that plays every `audio` event makes the
    # caller hear the old answer for as long as the cancel took (at real-time
    # generation); one that drops audio of interrupted items hears none.
    async def main() -> tuple[SimulatedPlayer, str, list[float]]:
        server = SimulatedRealtimeServer([Reply("a long story " * 4, audio_seconds=6.0), Reply("okay")], generation_speed=1.0, cancel_latency=cancel_latency)
        player = SimulatedPlayer(network_delay=0.05, jitter_buffer_ms=80)
        heard_at_interrupt: list[float] = []

        def script(server: SimulatedRealtimeServer, session: Any) -> None:
            server.user_speaks("tell me a story", at=0.5, seconds=0.5)
            server.user_speaks("stop", at=3.0, seconds=0.4)
            asyncio.get_running_loop().call_at(3.03, lambda: heard_at_interrupt.append(player.heard_ms))

        await run_call(server, RealtimeAgent(name="Teller"), player=player, seconds=8, script=script, drop_interrupted_audio=drop_interrupted_audio)
        server.assert_rules()
        return player, server.responses[0]["item_id"], heard_at_interrupt

    player, story, [heard_at_interrupt] = agentsim.run(main, seed=seed, strategy=strategy)
    stale = player.played_ms(story) - heard_at_interrupt
    if drop_interrupted_audio:
        assert stale == 0
    else:
        assert stale == pytest.approx(cancel_latency * 1000, abs=40.0)  # one 40 ms chunk of slack
