"""ScriptedRealtimeTransport's own contract: ordering, errors, timing, snapshots."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from agents.realtime.model import RealtimeModelListener
from agents.realtime.model_events import (
    RealtimeModelAudioEvent,
    RealtimeModelAudioInterruptedEvent,
    RealtimeModelEvent,
    RealtimeModelTranscriptDeltaEvent,
)
from agents.realtime.model_inputs import (
    RealtimeModelSendAudio,
    RealtimeModelSendInterrupt,
    RealtimeModelSendUserInput,
)

import agentsim
from agentsim.realtime import (
    IncompleteRealtimeScenarioError,
    RealtimeCallMatcherError,
    RealtimeScenarioTimeoutError,
    RealtimeScriptError,
    RealtimeTransportDisconnectedError,
    RealtimeTransportNotClosedError,
    ScriptedRealtimeConnectionSupersededError,
    ScriptedRealtimeTransport,
    UnexpectedRealtimeCallError,
    turn_started,
)
from agentsim.scenario import InvalidCallKindError, UnexpectedCallError

from .sdk_features import HAS_END_OF_STREAM, needs_scoped_interrupts


class Recorder(RealtimeModelListener):
    """A listener that records (time, event) pairs."""

    def __init__(self) -> None:
        self.events: list[tuple[float, RealtimeModelEvent]] = []

    async def on_event(self, event: RealtimeModelEvent) -> None:
        self.events.append((agentsim.now(), event))


def delta(text: str) -> RealtimeModelTranscriptDeltaEvent:
    return RealtimeModelTranscriptDeltaEvent(item_id="i1", delta=text, response_id="r1")


async def connected(*options: dict[str, Any]) -> tuple[ScriptedRealtimeTransport, Recorder]:
    transport = ScriptedRealtimeTransport()
    recorder = Recorder()
    transport.add_listener(recorder)
    await transport.connect(options[0] if options else {})
    return transport, recorder


# -- ordering and buffering ----------------------------------------------------------


def test_calls_made_before_the_expectation_are_buffered_in_order() -> None:
    async def main() -> list[str]:
        transport, _ = await connected()
        await transport.send_event(RealtimeModelSendUserInput(user_input="one"))
        await transport.send_event(RealtimeModelSendAudio(audio=b"\x00\x01"))
        kinds = [(await transport.expect_call(kind)).kind for kind in ("connect", "user_input", "audio")]
        await transport.close()
        await transport.expect_call("close")
        transport.assert_complete()
        return kinds

    assert agentsim.run(main) == ["connect", "user_input", "audio"]


def test_kinds_may_be_short_names_classes_or_class_names() -> None:
    async def main() -> list[str]:
        transport, _ = await connected()
        for _ in range(3):
            await transport.send_event(RealtimeModelSendInterrupt())
        await transport.expect_call("connect")
        kinds = [
            (await transport.expect_call("interrupt")).kind,
            (await transport.expect_call(RealtimeModelSendInterrupt)).kind,
            (await transport.expect_call("RealtimeModelSendInterrupt")).kind,
        ]
        await transport.close()
        return kinds

    assert agentsim.run(main) == ["interrupt"] * 3


def test_an_unknown_kind_is_a_typed_error_listing_the_valid_ones() -> None:
    transport = ScriptedRealtimeTransport()
    with pytest.raises(InvalidCallKindError) as info:
        transport.fail_next_call("send_message", RuntimeError("x"))
    assert info.value.kind == "send_message"
    assert "user_input" in info.value.accepted and "RealtimeModelSendUserInput" in info.value.accepted


def test_a_call_of_another_kind_is_an_unexpected_call_with_fields() -> None:
    async def main() -> None:
        transport, _ = await connected()
        try:
            await transport.expect_call("connect")
            await transport.send_event(RealtimeModelSendAudio(audio=b"\x00\x00"))
            await transport.expect_call("user_input")
        finally:
            await transport.close()

    with pytest.raises(UnexpectedRealtimeCallError) as info:
        agentsim.run(main)
    error = info.value
    assert isinstance(error, UnexpectedCallError)
    assert (error.call_index, error.expected, error.actual) == (1, "user_input", "audio")
    assert error.call.event == RealtimeModelSendAudio(audio=b"\x00\x00")


def test_a_matcher_returning_false_rejects_the_call() -> None:
    async def main() -> None:
        transport, _ = await connected()
        try:
            await transport.expect_call("connect")
            await transport.send_event(RealtimeModelSendUserInput(user_input="Goodbye"))
            await transport.expect_call("user_input", lambda call: call.event.user_input == "Hello")
        finally:
            await transport.close()

    with pytest.raises(RealtimeCallMatcherError) as info:
        agentsim.run(main)
    assert (info.value.call_index, info.value.actual) == (1, "user_input")
    assert info.value.call.event.user_input == "Goodbye"


def test_a_matcher_may_assert_and_may_be_async() -> None:
    async def main() -> None:
        transport, _ = await connected()
        await transport.expect_call("connect")
        await transport.send_event(RealtimeModelSendUserInput(user_input="Hello"))

        async def matcher(call: Any) -> bool:
            await asyncio.sleep(0.1)
            assert call.event.user_input == "Hi", "wrong greeting"
            return True

        try:
            await transport.expect_call("user_input", matcher)
        finally:
            await transport.close()

    with pytest.raises(AssertionError, match="wrong greeting"):
        agentsim.run(main)


# -- failure injection, disconnects, snapshots ---------------------------------------


def test_injected_failures_are_recorded_matched_and_used_in_order() -> None:
    async def main() -> tuple[list[str], list[str]]:
        transport, _ = await connected()
        transport.fail_next_call("user_input", TimeoutError("first"))
        transport.fail_next_call("user_input", ConnectionError("second"))
        raised = []
        for text in ("a", "b", "c"):
            try:
                await transport.send_event(RealtimeModelSendUserInput(user_input=text))
            except Exception as exc:  # noqa: BLE001 - recorded for the assertion
                raised.append(str(exc))
        await transport.expect_call("connect")
        errors = [repr((await transport.expect_call("user_input")).error) for _ in range(3)]
        await transport.close()
        await transport.expect_call("close")
        transport.assert_complete()
        return raised, errors

    raised, errors = agentsim.run(main)
    assert raised == ["first", "second"]
    assert errors == ["TimeoutError('first')", "ConnectionError('second')", "None"]


def test_unused_injected_failures_fail_assert_complete() -> None:
    async def main() -> None:
        transport, _ = await connected()
        transport.fail_next_call("interrupt", RuntimeError("never used"))
        await transport.expect_call("connect")
        await transport.close()
        await transport.expect_call("close")
        transport.assert_complete()

    with pytest.raises(IncompleteRealtimeScenarioError) as info:
        agentsim.run(main)
    assert [(failure.kind, str(failure.error)) for failure in info.value.pending_failures] == [("interrupt", "never used")]


def test_connect_snapshot_is_credential_free() -> None:
    async def main() -> Any:
        transport, _ = await connected(
            {
                "api_key": "sk-secret",
                "headers": {"api-key": "also-secret"},
                "url": "wss://user:pw@example.test/v1/realtime?token=abc#frag",
                "initial_model_settings": {"voice": "alloy", "tools": []},
            }
        )
        await transport.close()
        return transport.calls[0].options

    options = agentsim.run(main)
    assert options.api_key_provided is True and options.headers_provided is True
    assert options.url == "wss://example.test/v1/realtime"
    assert options.initial_model_settings == {"voice": "alloy", "tools": []}
    assert "secret" not in repr(options) and "token" not in repr(options)


def test_recorded_events_are_detached_from_the_application() -> None:
    async def main() -> Any:
        transport, _ = await connected()
        message: dict[str, Any] = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        await transport.send_event(RealtimeModelSendUserInput(user_input=message))  # type: ignore[arg-type]
        message["content"][0]["text"] = "changed afterwards"
        await transport.close()
        return transport.calls[1].event.user_input["content"][0]["text"]

    assert agentsim.run(main) == "hi"


def test_sends_after_a_disconnect_fail_like_a_real_connection() -> None:
    async def main() -> tuple[str, str, list[str]]:
        transport, recorder = await connected()
        await transport.disconnect()
        with pytest.raises(RealtimeTransportDisconnectedError) as info:
            await transport.send_event(RealtimeModelSendUserInput(user_input="late"))
        await transport.close()  # closing a dropped connection is fine
        transport.assert_closed()
        return info.value.operation, info.value.status, [event.type for _, event in recorder.events]

    expected = ["connection_status", "end_of_stream"] if HAS_END_OF_STREAM else ["connection_status"]
    assert agentsim.run(main) == ("user_input", "disconnected", expected)


def test_emitting_while_disconnected_is_a_script_error() -> None:
    async def main() -> None:
        transport = ScriptedRealtimeTransport()
        await transport.emit(delta("too early"))

    with pytest.raises(RealtimeScriptError) as info:
        agentsim.run(main)
    assert info.value.operation == "emit" and "disconnected" in info.value.state


def test_assert_closed_names_the_status() -> None:
    async def main() -> None:
        transport, _ = await connected()
        try:
            transport.assert_closed()
        finally:
            await transport.close()

    with pytest.raises(RealtimeTransportNotClosedError) as info:
        agentsim.run(main)
    assert info.value.status == "connected"


# -- time -----------------------------------------------------------------------------


def test_emit_at_and_emit_after_deliver_at_virtual_instants() -> None:
    async def main() -> list[tuple[float, str]]:
        transport, recorder = await connected()
        early = transport.emit_at(1.5, delta("at 1.5"))
        await asyncio.sleep(0.25)
        late = transport.emit_after(2.0, delta("at 2.25"))
        dropped = transport.emit_at(5.0, delta("never"))
        await early
        await late
        await transport.close()
        await dropped
        assert early.delivered and late.delivered and not dropped.delivered
        return [(time, event.delta) for time, event in recorder.events]

    assert agentsim.run(main) == [(1.5, "at 1.5"), (2.25, "at 2.25")]


def test_a_cancelled_scheduled_emit_is_never_delivered() -> None:
    async def main() -> int:
        transport, recorder = await connected()
        handle = transport.emit_after(1.0, delta("cancelled"))
        handle.cancel()
        await handle
        await asyncio.sleep(2)
        await transport.close()
        return len(recorder.events)

    assert agentsim.run(main) == 0


def test_stream_audio_paces_pcm16_chunks_and_spreads_the_transcript() -> None:
    async def main() -> tuple[list[tuple[float, str]], str, Any]:
        transport, recorder = await connected()
        stream = transport.stream_audio(duration=0.1, chunk_ms=20, transcript="hello there world", response_id="r7", item_id="a7")
        await stream
        await transport.close()
        kinds = [(time, event.type) for time, event in recorder.events]
        text = "".join(event.delta for _, event in recorder.events if event.type == "transcript_delta")
        return kinds, text, stream

    kinds, text, stream = agentsim.run(main)
    audio_times = [time for time, kind in kinds if kind == "audio"]
    assert audio_times == pytest.approx([0.0, 0.02, 0.04, 0.06, 0.08])
    assert kinds[0] == (0.0, "turn_started")
    assert kinds[-2:] == [(pytest.approx(0.1), "audio_done"), (pytest.approx(0.1), "turn_ended")]
    assert text == "hello there world"
    assert (stream.chunks_sent, stream.sent_ms, stream.interrupted) == (5, pytest.approx(100.0), False)


def test_stream_audio_from_samples_sends_their_bytes() -> None:
    samples = np.linspace(-1.0, 1.0, 480 * 3)

    async def main() -> bytes:
        transport, recorder = await connected()
        await transport.stream_audio(samples=samples, chunk_ms=20, turn_events=False)
        await transport.close()
        return b"".join(event.data for _, event in recorder.events if isinstance(event, RealtimeModelAudioEvent))

    data = agentsim.run(main)
    expected = (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()
    assert data == expected


def test_an_interrupt_says_which_audio_it_cut() -> None:
    async def main() -> list[list[tuple[str, int]]]:
        transport, recorder = await connected()
        cuts: list[list[tuple[str, int]]] = []

        def take() -> None:
            cuts.append([(e.item_id, e.content_index) for _, e in recorder.events if isinstance(e, RealtimeModelAudioInterruptedEvent)])
            recorder.events.clear()

        await transport.send_event(RealtimeModelSendInterrupt())  # nothing played yet
        take()
        transport.stream_audio(duration=0.2, item_id="a1", response_id="r1")
        await asyncio.sleep(0.5)  # the response ended; the adapter still counts it as playing
        await transport.send_event(RealtimeModelSendInterrupt())
        take()  # delivered before the send returned
        await transport.send_event(RealtimeModelSendInterrupt())  # already cut: forgotten
        take()
        await transport.close()
        return cuts

    assert agentsim.run(main) == [[], [("a1", 0)], []]


def test_an_interrupt_asks_the_apps_playback_tracker() -> None:
    class Tracker:
        def __init__(self) -> None:
            self.interrupted = 0

        def get_state(self) -> dict[str, Any]:
            return {"current_item_id": "heard", "current_item_content_index": 1, "elapsed_ms": 120.0}

        def on_interrupted(self) -> None:
            self.interrupted += 1

    async def main() -> tuple[list[str], int]:
        tracker = Tracker()
        transport, recorder = await connected({"playback_tracker": tracker})
        await transport.send_event(RealtimeModelSendInterrupt())
        await transport.close()
        return [e.item_id for _, e in recorder.events if isinstance(e, RealtimeModelAudioInterruptedEvent)], tracker.interrupted

    assert agentsim.run(main) == (["heard"], 1)


@needs_scoped_interrupts
def test_a_scoped_interrupt_cuts_every_audio_item_of_its_response() -> None:
    async def main() -> list[str]:
        transport, recorder = await connected()
        transport.stream_audio(duration=0.1, item_id="a1", response_id="r1")
        transport.stream_audio(duration=0.1, item_id="b1", response_id="r2")
        await asyncio.sleep(0.2)
        transport.stream_audio(duration=0.1, item_id="a2", response_id="r1")
        await asyncio.sleep(0.2)
        await transport.send_event(RealtimeModelSendInterrupt(response_id="r1"))
        await transport.close()
        return [e.item_id for _, e in recorder.events if isinstance(e, RealtimeModelAudioInterruptedEvent)]

    assert agentsim.run(main) == ["a1", "a2"]


@needs_scoped_interrupts
def test_an_interrupt_call_stops_only_the_response_it_names() -> None:
    async def main() -> tuple[bool, bool, int]:
        transport, _ = await connected()
        first = transport.stream_audio(duration=2.0, response_id="r1", item_id="a1")
        second = transport.stream_audio(duration=2.0, response_id="r2", item_id="a2")
        await asyncio.sleep(0.5)
        await transport.send_event(RealtimeModelSendInterrupt(response_id="r1", playback_only=True))
        await transport.send_event(RealtimeModelSendInterrupt(response_id="r2"))
        await first
        await second
        await transport.close()
        return first.interrupted, second.interrupted, second.chunks_sent

    first_interrupted, second_interrupted, second_chunks = agentsim.run(main)
    assert first_interrupted is False  # playback_only: the server keeps generating
    assert second_interrupted is True
    assert second_chunks in (25, 26)  # chunks at 0, 20 ... 480 ms, and maybe the one due with the interrupt


def test_same_seed_same_trace_and_random_explores_emit_versus_send_order() -> None:
    # An emit scheduled for 1.0 s and an application send at 1.0 s: the order
    # in which the listener sees them is a seeded choice.
    async def main() -> list[str]:
        transport = ScriptedRealtimeTransport()
        order: list[str] = []

        class Listener(RealtimeModelListener):
            async def on_event(self, event: RealtimeModelEvent) -> None:
                order.append("emit")

        transport.add_listener(Listener())
        await transport.connect({})
        transport.emit_at(1.0, turn_started("r1"))
        await asyncio.sleep(1.0)
        await transport.send_event(RealtimeModelSendUserInput(user_input="now"))
        order.append("send")
        await asyncio.sleep(0.1)
        await transport.close()
        return order

    orders = set()
    for seed in range(12):
        first = agentsim.simulate(main, seed=seed, strategy="random")
        second = agentsim.simulate(main, seed=seed, strategy="random")
        assert first.value == second.value and first.trace.digest() == second.trace.digest()
        orders.add(tuple(first.value))
    assert orders == {("emit", "send"), ("send", "emit")}


# -- run_scenario -----------------------------------------------------------------------


def test_run_scenario_raises_the_original_error_after_the_other_side_cleans_up() -> None:
    async def main() -> list[str]:
        transport = ScriptedRealtimeTransport()
        cleaned: list[str] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            raise ValueError("scenario broke")

        async def exercise() -> None:
            await transport.connect({})
            try:
                await asyncio.sleep(100)
            finally:
                cleaned.append("exercise cleanup")
                await transport.close()

        with pytest.raises(ValueError, match="scenario broke") as info:
            await transport.run_scenario(scenario=scenario, exercise=exercise)
        assert not isinstance(info.value, BaseExceptionGroup)
        transport.assert_closed()
        return cleaned

    assert agentsim.run(main) == ["exercise cleanup"]


def test_run_scenario_reports_an_incomplete_scenario() -> None:
    async def main() -> IncompleteRealtimeScenarioError:
        transport = ScriptedRealtimeTransport()

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.expect_call("user_input")

        async def exercise() -> None:
            await transport.connect({})
            await transport.send_event(RealtimeModelSendAudio(audio=b""))
            await transport.close()

        with pytest.raises(UnexpectedRealtimeCallError):
            await transport.run_scenario(scenario=scenario, exercise=exercise)

        transport2 = ScriptedRealtimeTransport()

        async def scenario2(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.expect_call("user_input")

        async def exercise2() -> None:
            await transport2.connect({})

        with pytest.raises(IncompleteRealtimeScenarioError) as info:
            await transport2.run_scenario(scenario=scenario2, exercise=exercise2)
        await transport2.close()
        return info.value

    error = agentsim.run(main)
    assert [expectation.kind for expectation in error.pending_expectations] == ["user_input"]
    assert error.unconsumed_calls == () and error.pending_failures == ()


def test_run_scenario_times_out_in_virtual_time_listing_what_was_pending() -> None:
    async def main() -> tuple[RealtimeScenarioTimeoutError, float, list[str]]:
        transport = ScriptedRealtimeTransport()
        cleaned: list[str] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.expect_call("tool_output")  # never comes

        async def exercise() -> None:
            await transport.connect({})
            try:
                await asyncio.Event().wait()  # waits for the scenario forever
            finally:
                cleaned.append("closed")
                await transport.close()

        with pytest.raises(RealtimeScenarioTimeoutError) as info:
            await transport.run_scenario(scenario=scenario, exercise=exercise, timeout=30.0)
        return info.value, agentsim.now(), cleaned

    error, when, cleaned = agentsim.run(main)
    assert error.timeout == 30.0 and when == 30.0
    assert [expectation.kind for expectation in error.pending_expectations] == ["tool_output"]
    assert cleaned == ["closed"]


def test_run_scenario_rejects_a_bad_timeout() -> None:
    async def main() -> None:
        await ScriptedRealtimeTransport().run_scenario(scenario=lambda ctx: asyncio.sleep(0), exercise=lambda: asyncio.sleep(0), timeout=-1)

    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.run(main)
    assert info.value.parameter == "timeout"


def test_connect_latency_shows_as_connecting_in_virtual_time() -> None:
    async def main() -> list[tuple[float, str]]:
        transport = ScriptedRealtimeTransport(connect_latency=0.35)
        seen: list[tuple[float, str]] = []

        async def watch() -> None:
            await asyncio.sleep(0.1)
            seen.append((agentsim.now(), transport.status))

        watcher = asyncio.create_task(watch())
        await transport.connect({})
        seen.append((agentsim.now(), transport.status))
        await watcher
        await transport.close()
        return seen

    assert agentsim.run(main) == [(0.1, "connecting"), (0.35, "connected")]


def test_ignored_kinds_are_counted_but_not_recorded_or_matched() -> None:
    async def main() -> tuple[list[str], int, int]:
        transport = ScriptedRealtimeTransport(ignore_calls=["audio"])
        await transport.connect({})
        for _ in range(500):
            await transport.send_event(RealtimeModelSendAudio(audio=b"\x00\x00"))
        await transport.send_event(RealtimeModelSendUserInput(user_input="hi"))
        await transport.close()
        await transport.expect_call("connect")
        await transport.expect_call("user_input")
        await transport.expect_call("close")
        transport.assert_complete()
        return [call.kind for call in transport.calls], transport.call_counts["audio"], transport.call_counts["user_input"]

    assert agentsim.run(main) == (["connect", "user_input", "close"], 500, 1)


def test_a_deadlock_inside_run_scenario_shows_every_tasks_stack() -> None:
    # Regression: "Waiting for: none. Unconsumed calls: none." and no stacks.
    from agents.realtime import RealtimeAgent, RealtimeRunner

    from agentsim.realtime import RealtimeScenarioTimeoutError, ScriptedRealtimeTransport

    async def main() -> None:
        transport = ScriptedRealtimeTransport()
        runner = RealtimeRunner(RealtimeAgent(name="Assistant"), model=transport)
        never = asyncio.Event()

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await never.wait()  # nobody sets it

        async def exercise() -> None:
            async with await runner.run():
                await wait_for_the_answer(never)

        async def wait_for_the_answer(event: asyncio.Event) -> None:
            await event.wait()

        await transport.run_scenario(scenario=scenario, exercise=exercise, timeout=5.0)

    result = agentsim.simulate(main)
    error = result.exception
    assert isinstance(error, RealtimeScenarioTimeoutError), error
    names = {task.name for task in error.tasks}
    assert {"scenario", "exercise"} <= names
    [exercise] = [task for task in error.tasks if task.name == "exercise"]
    assert any("wait_for_the_answer" in site for site in exercise.stack)
    assert "Tasks at the deadline" in str(error) and "wait_for_the_answer" in str(error)


def test_a_failing_close_still_ends_the_connection() -> None:
    # Regression: fail_next_call("close") left the transport connected with
    # its delivery task running.
    from agents.realtime import RealtimeAgent, RealtimeRunner

    from agentsim.realtime import ScriptedRealtimeTransport

    async def main() -> tuple[str, bool, int]:
        transport = ScriptedRealtimeTransport()
        runner = RealtimeRunner(RealtimeAgent(name="Assistant"), model=transport)
        transport.fail_next_call("close", ConnectionResetError("close failed"))
        session = await runner.run()
        await session.enter()
        await transport.expect_call("connect")
        transport.emit_at(5.0, turn_started("late"))  # scheduled, never delivered
        raised = False
        try:
            await session.close()
        except ConnectionResetError:
            raised = True
        call = await transport.expect_call("close")
        assert call.error is not None
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        return transport.status, raised, len(others)

    for strategy, seed in [("fifo", 0), ("random", 1), ("random", 2)]:
        result = agentsim.simulate(main, strategy=strategy, seed=seed)
        assert result.ok, result.exception
        status, raised, others = result.value
        assert status == "disconnected" and others == 0 and not result.leftover_tasks


def test_recorded_sends_do_not_change_when_the_application_mutates_its_events() -> None:
    from agents.realtime.model_inputs import RealtimeModelSendRawMessage

    from agentsim.realtime.calls import snapshot_event

    audio = RealtimeModelSendAudio(audio=b"\x00\x01", commit=False)
    copied = snapshot_event(audio)
    audio.audio = b"changed"
    assert copied.audio == b"\x00\x01" and copied is not audio  # flat event: a shallow copy suffices

    message: dict[str, Any] = {"type": "conversation.item.create", "other_data": {"item": {"text": "hi"}}}
    raw = RealtimeModelSendRawMessage(message=message)  # type: ignore[arg-type]
    copied_raw = snapshot_event(raw)
    message["other_data"]["item"]["text"] = "changed"
    assert copied_raw.message["other_data"]["item"]["text"] == "hi"  # type: ignore[index]  # nested: deep-copied


# -- superseded connections ------------------------------------------------------------


def test_a_connect_closed_while_connecting_is_superseded_not_revived() -> None:
    # Before: the first connect woke up after the close and set the status back to "connected".
    async def main() -> tuple[str, str, str]:
        transport = ScriptedRealtimeTransport(connect_latency=1.0)
        first = asyncio.create_task(transport.connect({}))
        await asyncio.sleep(0.5)
        await transport.close()
        with pytest.raises(ScriptedRealtimeConnectionSupersededError) as caught:
            await first
        status_after = transport.status
        await transport.connect({})  # a fresh connection works
        status_again = transport.status
        await transport.close()
        return caught.value.operation, status_after, status_again

    assert agentsim.run(main) == ("connect", "disconnected", "connected")


def test_events_scheduled_for_an_old_connection_never_reach_a_new_one() -> None:
    # Before: the scenario's emit_at fired on the reconnected transport.
    async def main() -> tuple[bool, list[str]]:
        transport = ScriptedRealtimeTransport()
        recorder = Recorder()
        transport.add_listener(recorder)
        handles: list[Any] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            handles.append(ctx.emit_at(2.0, delta("for the first connection")))
            await ctx.expect_call("close")
            await ctx.expect_call("connect")
            handles.append(ctx.emit_at(2.5, delta("for the second")))
            await ctx.expect_call("close")
            for handle in handles:
                await handle

        async def exercise() -> None:
            await transport.connect({})
            await asyncio.sleep(1.0)
            await transport.close()
            await transport.connect({})  # reconnected before the first emit's instant
            await asyncio.sleep(2.0)
            await transport.close()

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        return handles[0].delivered, [event.delta for _, event in recorder.events if isinstance(event, RealtimeModelTranscriptDeltaEvent)]

    delivered, deltas = agentsim.run(main)
    assert delivered is False
    assert deltas == ["for the second"]


def test_events_scheduled_before_the_first_connect_belong_to_it() -> None:
    async def main() -> list[float]:
        transport = ScriptedRealtimeTransport()
        recorder = Recorder()
        transport.add_listener(recorder)
        transport.emit_at(1.0, delta("hello"))
        await transport.connect({})
        await asyncio.sleep(2.0)
        await transport.close()
        return [time for time, _ in recorder.events]

    assert agentsim.run(main) == [1.0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_forgotten_await_on_emit_fails_the_run_naming_the_line(seed: int) -> None:
    """Without ``await`` the emit never runs: the run fails with a typed error
    naming this file's line, not silently (random seeds 0-2)."""
    from agents.realtime.model_events import RealtimeModelErrorEvent

    async def main() -> None:
        transport, _ = await connected()
        try:
            transport.emit(RealtimeModelErrorEvent(error="boom"))  # type: ignore[unused-coroutine]  # the mistake
            await asyncio.sleep(1)
        finally:
            await transport.close()

    result = agentsim.simulate(main, seed=seed, strategy="random")
    error = result.exception
    assert isinstance(error, agentsim.UnawaitedCallError), error
    assert error.call == "ScriptedRealtimeTransport.emit" and "test_transport.py" in error.site
    assert isinstance(error, agentsim.UsageError)


def test_an_awaited_emit_and_the_programs_own_unawaited_coroutines_are_not_flagged() -> None:
    from agents.realtime.model_events import RealtimeModelErrorEvent

    async def helper() -> None:
        await asyncio.sleep(0)

    async def main() -> float:
        transport, _ = await connected()
        await transport.emit(RealtimeModelErrorEvent(error="fine"))
        with pytest.warns(RuntimeWarning, match="never awaited"):
            helper()  # the program's own coroutine: Python's warning, not agentsim's error
            import gc

            gc.collect()
        await transport.close()
        return agentsim.now()

    assert agentsim.run(main) == 0.0
