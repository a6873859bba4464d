"""The JS SDK's realtime recipes (seed 000), in Python, against the real RealtimeSession.

Each recipe runs under FIFO and under random schedules (seeds 0-5): the
assertions are about what the SDK does, which must not depend on the order
the schedule leaves open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from agents import function_tool
from agents.realtime import (
    RealtimeAgent,
    RealtimeRunner,
    RealtimeSession,
)
from agents.realtime.items import AssistantMessageItem, AssistantText, InputText, UserMessageItem
from agents.realtime.model_events import (
    RealtimeModelAudioInterruptedEvent,
    RealtimeModelItemUpdatedEvent,
    RealtimeModelToolCallEvent,
)
from agents.realtime.model_inputs import RealtimeModelSendInterrupt

import agentsim
from agentsim.realtime import RealtimeCall, ScriptedRealtimeTransport, turn_started

from .sdk_features import needs_end_of_stream

SCHEDULES = [("fifo", 0)] + [("random", seed) for seed in range(6)]


def each_schedule(main: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Run ``main`` under every schedule; return the values."""
    return [agentsim.run(main, strategy=strategy, seed=seed) for strategy, seed in SCHEDULES]


def make_runner(transport: ScriptedRealtimeTransport, agent: RealtimeAgent[Any] | None = None) -> RealtimeRunner:
    return RealtimeRunner(agent or RealtimeAgent(name="Assistant"), model=transport, config={"tracing_disabled": True})


def test_tool_workflow() -> None:
    async def main() -> tuple[list[str], RealtimeCall]:
        looked_up: list[str] = []

        @function_tool
        def lookup_order(order_id: str) -> str:
            """Looks up an order by ID."""
            looked_up.append(order_id)
            return f"Order {order_id} has shipped."

        agent = RealtimeAgent(name="Order assistant", instructions="Help customers track orders.", tools=[lookup_order])
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport, agent)
        tool_output_returned = asyncio.Event()
        outputs: list[RealtimeCall] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.expect_call("user_input", lambda call: call.event.user_input == "Where is order 123?")
            # The model "chooses" the tool: this tests the SDK's handling of that choice.
            await ctx.emit(
                turn_started("response_1"),
                RealtimeModelToolCallEvent(name="lookup_order", call_id="call_1", arguments='{"order_id": "order_123"}'),
            )
            outputs.append(await ctx.expect_call("tool_output"))
            tool_output_returned.set()
            await ctx.expect_call("close")

        async def exercise() -> None:
            async with await runner.run() as session:
                await session.send_message("Where is order 123?")
                await tool_output_returned.wait()

        await transport.run_scenario(scenario=scenario, exercise=exercise, timeout=5.0)
        transport.assert_complete()
        transport.assert_closed()
        return looked_up, outputs[0]

    for looked_up, output in each_schedule(main):
        assert looked_up == ["order_123"]
        assert output.event.tool_call.call_id == "call_1"
        assert output.event.output == "Order order_123 has shipped."
        assert output.event.start_response is True


def _message(item_id: str, role: str, text: str) -> Any:
    if role == "user":
        return UserMessageItem(item_id=item_id, role="user", status="completed", content=[InputText(text=text)])
    return AssistantMessageItem(item_id=item_id, role="assistant", status="completed", content=[AssistantText(text=text)])


def test_two_turn_conversation_updates_history() -> None:
    conversation = [
        _message("user_1", "user", "Hello"),
        _message("assistant_1", "assistant", "Hi! How can I help?"),
        _message("user_2", "user", "What did I just say?"),
        _message("assistant_2", "assistant", "You said hello."),
    ]

    async def main() -> list[Any]:
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport)
        first_turn = asyncio.Event()
        second_turn = asyncio.Event()
        history: list[Any] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.expect_call("user_input", lambda call: call.event.user_input == "Hello")
            await ctx.emit(RealtimeModelItemUpdatedEvent(item=conversation[0]), RealtimeModelItemUpdatedEvent(item=conversation[1]))
            first_turn.set()
            await ctx.expect_call("user_input", lambda call: call.event.user_input == "What did I just say?")
            await ctx.emit(RealtimeModelItemUpdatedEvent(item=conversation[2]), RealtimeModelItemUpdatedEvent(item=conversation[3]))
            second_turn.set()
            await ctx.expect_call("close")

        async def exercise() -> None:
            session: RealtimeSession
            async with await runner.run() as session:
                await session.send_message("Hello")
                await first_turn.wait()
                await session.send_message("What did I just say?")
                await second_turn.wait()
                history.extend(session._history)  # the session's live history at the end

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_complete()
        transport.assert_closed()
        return history

    for history in each_schedule(main):
        assert [item.item_id for item in history] == ["user_1", "assistant_1", "user_2", "assistant_2"]
        assert history == conversation


def test_application_interrupts_while_assistant_audio_plays() -> None:
    async def main() -> tuple[bool, RealtimeCall, int, int]:
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport)
        ready_to_interrupt = asyncio.Event()
        saw_audio: list[bool] = []
        interrupts: list[RealtimeCall] = []
        chunks: list[int] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.expect_call("user_input")
            # A 3-second utterance in 20 ms chunks, paced in virtual time.
            stream = ctx.stream_audio(response_id="response_1", item_id="item_1", duration=3.0, transcript="Once upon a time")
            await asyncio.sleep(0.5)  # half a second of audio has gone out
            ready_to_interrupt.set()
            interrupts.append(await ctx.expect_call("interrupt"))
            await stream
            chunks.append(stream.chunks_sent)
            await ctx.expect_call("close")

        async def exercise() -> None:
            async with await runner.run() as session:
                await session.send_message("Tell me a long story")
                async for event in session:
                    if event.type == "audio":
                        saw_audio.append(True)
                    if ready_to_interrupt.is_set():
                        break
                # Application code, such as a stop button, interrupts playback.
                await session.interrupt()

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_complete()
        transport.assert_closed()
        return bool(saw_audio), interrupts[0], chunks[0], len(transport.calls)

    for saw_audio, interrupt, chunks_sent, call_count in each_schedule(main):
        assert saw_audio
        assert isinstance(interrupt.event, RealtimeModelSendInterrupt)
        assert interrupt.time == pytest.approx(0.5, abs=0.021)  # within a chunk of the half second
        assert 24 <= chunks_sent <= 27  # ~0.5 s of 20 ms chunks, then the stream stopped
        assert call_count == 4


def test_audio_interrupted_is_forwarded_to_the_application() -> None:
    async def main() -> list[tuple[str, int]]:
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport)
        observed: list[tuple[str, int]] = []
        session = await runner.run()
        await session.enter()
        await transport.expect_call("connect")
        # Independently of any application call, the transport reports an interruption.
        await transport.emit(RealtimeModelAudioInterruptedEvent(item_id="item_1", content_index=0))
        async for event in session:
            if event.type == "audio_interrupted":
                observed.append((event.item_id, event.content_index))
                break
        await session.close()
        await transport.expect_call("close")
        transport.assert_complete()
        transport.assert_closed()
        return observed

    for observed in each_schedule(main):
        assert observed == [("item_1", 0)]


def test_failure_injected_on_connect() -> None:
    async def main() -> tuple[BaseException, RealtimeCall, str]:
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport)
        failure = ConnectionRefusedError("connection failed")
        # Injection and matching are independent: the failed attempt is still
        # recorded and must satisfy an expectation.
        transport.fail_next_call("connect", failure)
        try:
            async with await runner.run():
                pass
        except ConnectionRefusedError as exc:
            raised: BaseException = exc
        else:  # pragma: no cover - the assertion below reports it
            raise AssertionError("connect did not fail")
        call = await transport.expect_call("connect")
        transport.assert_complete()
        transport.assert_closed()
        return raised, call, transport.status

    for raised, call, status in each_schedule(main):
        assert str(raised) == "connection failed"
        assert call.kind == "connect" and call.error is raised
        assert status == "disconnected"


@needs_end_of_stream
def test_remote_disconnect_ends_the_session() -> None:
    async def main() -> tuple[list[str], str]:
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport)
        raw_types: list[str] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.emit(turn_started("r1"))
            await ctx.disconnect()  # the remote end closes the connection
            await ctx.expect_call("close")

        async def exercise() -> None:
            async with await runner.run() as session:
                async for event in session:  # ends, without an exception
                    if event.type == "raw_model_event":
                        raw_types.append(event.data.type)

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_complete()
        return raw_types, transport.status

    for raw_types, status in each_schedule(main):
        assert raw_types == ["turn_started", "connection_status", "end_of_stream"]
        assert status == "disconnected"
