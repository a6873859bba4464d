"""The realtime guide's remaining behaviours, offline, on the SDK's real adapter:
SIP attach, Azure endpoints and headers, input audio transcription events,
the voice fixed after audio, the idle timeout, and the answer that keeps
streaming after a truncate without a cancel. Each would have failed before
the simulated server modelled it (a real DNS lookup, or no event, or no rule).
Scheduling-dependent cases run under FIFO and random seeds 1-3.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents.exceptions import UserError
from agents.realtime import RealtimeAgent, RealtimeRunner
from agents.realtime.model_inputs import RealtimeModelSendSessionUpdate
from websockets.exceptions import InvalidStatus

import agentsim
from agentsim.realtime.server import Reply, SimulatedRealtimeServer, raw_server_event
from agentsim.timing import uniform

SCHEDULES = [("fifo", 0), ("random", 1), ("random", 2), ("random", 3)]
AGENT = RealtimeAgent(name="Assistant")


async def listen(session: Any, seconds: float) -> list[tuple[float, Any]]:
    """Every session event for ``seconds`` of virtual time, with its time."""
    seen: list[tuple[float, Any]] = []
    try:
        async with asyncio.timeout(seconds):
            async for event in session:
                seen.append((agentsim.now(), event))
    except TimeoutError:
        pass
    return seen


def server_events(seen: list[tuple[float, Any]], kind: str) -> list[tuple[float, dict[str, Any]]]:
    return [(time, raw) for time, event in seen if (raw := raw_server_event(event)) is not None and raw["type"] == kind]


# -- SIP -------------------------------------------------------------------------------------


def test_a_sip_call_is_attached_in_memory_by_call_id() -> None:
    async def main() -> tuple[Any, list[str]]:
        server = SimulatedRealtimeServer([Reply("thanks for calling", audio_seconds=1.0)])
        call_id = server.incoming_call("rtc_test_1", session={"audio": {"output": {"voice": "marin"}}})
        runner = RealtimeRunner(AGENT, model=server.sip_model())
        async with await runner.run(model_config={"call_id": call_id}) as session:
            server.user_speaks("hello", at=0.2, seconds=0.5)
            seen = await listen(session, 3.0)
        return server.connections[-1], [event.type for _, event in seen]

    request, kinds = agentsim.run(main)
    assert (request.call_id, request.model, request.flavor, request.auth) == ("rtc_test_1", None, "openai", "bearer")
    assert request.url == "wss://api.openai.com/v1/realtime"  # credential-free, query dropped
    assert "audio" in kinds and "agent_end" in kinds  # the attached session talks


def test_attaching_to_an_unknown_call_is_refused_and_no_call_id_is_the_sdks_error() -> None:
    async def main() -> tuple[int, int | None]:
        server = SimulatedRealtimeServer()
        runner = RealtimeRunner(AGENT, model=server.sip_model())
        with pytest.raises(InvalidStatus) as refused:
            async with await runner.run(model_config={"call_id": "rtc_nobody"}):
                pass  # connecting is entering the session
        with pytest.raises(UserError, match="call_id"):
            async with await RealtimeRunner(AGENT, model=server.sip_model()).run():
                pass
        return refused.value.response.status_code, server.connections[-1].rejected

    assert agentsim.run(main) == (404, 404)


# -- Azure -----------------------------------------------------------------------------------

AZURE = "wss://contoso.openai.azure.com/openai/v1/realtime?model=my-realtime"


@pytest.mark.parametrize(("headers", "auth"), [({"api-key": "k"}, "api-key"), ({"authorization": "Bearer token"}, "bearer")])
def test_azure_ga_endpoint_with_explicit_headers(headers: dict[str, str], auth: str) -> None:
    async def main() -> Any:
        server = SimulatedRealtimeServer([Reply("hi")])
        async with await RealtimeRunner(AGENT, model=server.model()).run(model_config={"url": AZURE, "headers": headers}) as session:
            await session.send_message("hello")
            await listen(session, 2.0)
        return server.connections[-1]

    request = agentsim.run(main)
    assert (request.flavor, request.host, request.model, request.auth) == ("azure", "contoso.openai.azure.com", "my-realtime", auth)


@pytest.mark.parametrize(
    ("url", "headers", "status"),
    [
        ("wss://contoso.openai.azure.com/openai/realtime?api-version=2024-10-01-preview&deployment=x", {"api-key": "k"}, 404),  # the legacy beta path
        (AZURE, {"x-custom": "1"}, 401),  # headers given, so the SDK adds no Authorization
        ("wss://api.openai.com/v1/realtime?model=gpt-realtime", {"x-custom": "1"}, 401),
    ],
)
def test_endpoints_a_real_server_refuses_are_refused(url: str, headers: dict[str, str], status: int) -> None:
    async def main() -> int:
        server = SimulatedRealtimeServer()
        with pytest.raises(InvalidStatus) as refused:
            async with await RealtimeRunner(AGENT, model=server.model()).run(model_config={"url": url, "headers": headers}):
                pass
        return refused.value.response.status_code

    assert agentsim.run(main) == status


# -- input audio transcription ----------------------------------------------------------------


@pytest.mark.parametrize(("strategy", "seed"), SCHEDULES)
def test_input_transcription_arrives_after_its_latency_word_by_word(strategy: str, seed: int) -> None:
    async def main() -> list[tuple[float, Any]]:
        server = SimulatedRealtimeServer([Reply("sure")], transcription_latency=uniform(0.3, 0.6), latency=0.02)
        async with await RealtimeRunner(AGENT, model=server.model()).run() as session:  # the SDK asks for gpt-4o-mini-transcribe
            server.user_speaks("book a table", at=0.5, seconds=1.0)
            return await listen(session, 4.0)

    seen = agentsim.run(main, strategy=strategy, seed=seed)
    [(stopped, _)] = server_events(seen, "input_audio_buffer.speech_stopped")
    deltas = server_events(seen, "conversation.item.input_audio_transcription.delta")
    [(completed_at, completed)] = server_events(seen, "conversation.item.input_audio_transcription.completed")
    assert [raw["delta"] for _, raw in deltas] == ["book ", "a ", "table"]
    assert completed["transcript"] == "book a table"
    assert 0.3 <= completed_at - stopped <= 0.6 + 1e-9
    assert all(time <= completed_at for time, _ in deltas)


def test_no_transcription_configured_means_no_transcription_events() -> None:
    async def main() -> tuple[list[tuple[float, Any]], list[dict[str, Any]]]:
        server = SimulatedRealtimeServer([Reply("sure")])
        server.when_user_says("table", Reply("a table for two"))
        config: Any = {"model_settings": {"audio": {"input": {"transcription": None}}}}
        async with await RealtimeRunner(AGENT, model=server.model(), config=config).run() as session:
            server.user_speaks("book a table", at=0.5, seconds=1.0)
            return await listen(session, 4.0), server.responses

    seen, responses = agentsim.run(main)
    assert not server_events(seen, "conversation.item.input_audio_transcription.completed")
    assert responses[0]["kind"] == "Reply"  # the model still heard the words


def test_whisper_sends_only_the_completed_transcript() -> None:
    async def main() -> list[tuple[float, Any]]:
        server = SimulatedRealtimeServer([Reply("sure")])
        config: Any = {"model_settings": {"audio": {"input": {"transcription": {"model": "whisper-1"}}}}}
        async with await RealtimeRunner(AGENT, model=server.model(), config=config).run() as session:
            server.user_speaks("book a table", at=0.5, seconds=1.0)
            return await listen(session, 3.0)

    seen = agentsim.run(main)
    assert not server_events(seen, "conversation.item.input_audio_transcription.delta")
    assert len(server_events(seen, "conversation.item.input_audio_transcription.completed")) == 1


# -- the voice is fixed once audio exists ------------------------------------------------------


@pytest.mark.parametrize("after_audio", [False, True])
def test_the_voice_cannot_change_after_assistant_audio(after_audio: bool) -> None:
    async def main() -> tuple[list[str], list[str], Any]:
        server = SimulatedRealtimeServer([Reply("hello there", audio_seconds=0.5)])
        async with await RealtimeRunner(AGENT, model=server.model()).run() as session:
            if after_audio:
                await session.send_message("hi")
                await listen(session, 1.5)
            await session.model.send_event(RealtimeModelSendSessionUpdate(session_settings={"voice": "verse"}))
            seen = await listen(session, 0.5)
        errors = [raw["error"]["code"] for _, raw in server_events(seen, "error")]
        return errors, [v.rule for v in server.violations], server._session["audio"]["output"]["voice"]

    errors, rules, voice = agentsim.run(main)
    if after_audio:
        assert errors == ["cannot_update_voice"] and rules == ["voice_fixed_after_audio"]
        assert voice != "verse"
    else:
        assert errors == [] and rules == [] and voice == "verse"


# -- idle timeout ---------------------------------------------------------------------------------


@pytest.mark.parametrize("user_speaks_again", [False, True])
def test_the_idle_timeout_fires_after_silence(user_speaks_again: bool) -> None:
    async def main() -> tuple[list[float], list[float], int]:
        server = SimulatedRealtimeServer([Reply("hello", audio_seconds=0.5), Reply("are you still there?"), Reply("ok")])
        config: Any = {"model_settings": {"turn_detection": {"type": "server_vad", "idle_timeout_ms": 3000}}}
        async with await RealtimeRunner(AGENT, model=server.model(), config=config).run() as session:
            server.user_speaks("hi", at=0.2, seconds=0.4)
            if user_speaks_again:
                server.user_speaks("one more thing", at=2.5, seconds=0.5)
            seen = await listen(session, 8.0)
        done = [time for time, _ in server_events(seen, "response.done")]
        timeouts = [time for time, event in seen if event.type == "input_audio_timeout_triggered"]
        return done, timeouts, len(server.responses)

    done, timeouts, responses = agentsim.run(main)
    if user_speaks_again:
        assert len(timeouts) == 1 and timeouts[0] == pytest.approx(done[1] + 3.0, abs=0.05)  # counted from the second answer
    else:
        assert len(timeouts) >= 1 and timeouts[0] == pytest.approx(done[0] + 3.0, abs=0.05)
        assert responses >= 2  # the server answered the silence


# -- truncate without cancel ------------------------------------------------------------------------


@pytest.mark.parametrize(("strategy", "seed"), SCHEDULES)
@pytest.mark.parametrize("interrupt_response", [True, False])
def test_an_interrupt_that_only_truncates_lets_the_answer_stream_on(interrupt_response: bool, strategy: str, seed: int) -> None:
    # The SDK's session.interrupt() under server VAD with interrupt_response
    # (its default) sends only conversation.item.truncate: the server keeps
    # generating what the caller asked to stop.
    async def main() -> list[Any]:
        server = SimulatedRealtimeServer([Reply("a long story " * 6, audio_seconds=3.0)], generation_speed=1.0, latency=uniform(0.01, 0.04))
        config: Any = {"model_settings": {"turn_detection": {"type": "server_vad", "interrupt_response": interrupt_response}}}
        async with await RealtimeRunner(AGENT, model=server.model(), config=config).run() as session:
            await session.send_message("tell me a story")
            await asyncio.sleep(1.0)
            await session.interrupt()
            await listen(session, 4.0)
        return server.violations

    violations = agentsim.run(main, strategy=strategy, seed=seed)
    if interrupt_response:
        [violation] = violations
        assert violation.rule == "truncate_needs_cancel"
        streamed = float(violation.detail.split(": ")[-1].split(" ms")[0])
        assert 1500 <= streamed <= 2500  # most of the rest of the story
    else:
        assert violations == []  # the adapter sent response.cancel too


def test_bad_connection_arguments_are_typed_errors() -> None:
    from agentsim import SimulationConfigError

    async def main() -> None:
        server = SimulatedRealtimeServer()
        with pytest.raises(SimulationConfigError, match="url/headers"):
            server.connect(url=42)  # type: ignore[arg-type]
        with pytest.raises(SimulationConfigError, match="call_id"):
            server.incoming_call("")
        with pytest.raises(SimulationConfigError, match="session"):
            server.incoming_call("rtc_1", session="marin")  # type: ignore[arg-type]

    agentsim.run(main)
