"""The realtime guide's behaviours (seed 004), on the real RealtimeSession.

Every test runs under FIFO and random schedules 0-5 (``each_schedule``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents import Usage, function_tool
from agents.guardrail import GuardrailFunctionOutput, OutputGuardrail
from agents.handoffs import Handoff
from agents.realtime import RealtimeAgent, RealtimeRunner, realtime_handoff
from agents.realtime import model_events
from agents.realtime.model_events import RealtimeModelToolCallEvent, RealtimeModelTranscriptDeltaEvent
from agents.realtime.model_inputs import RealtimeModelSendInterrupt, RealtimeModelSendUserInput

from agentsim.realtime import RealtimeCall, ScriptedRealtimeTransport, turn_ended, turn_started

from .sdk_features import HAS_END_OF_STREAM, needs_end_of_stream, needs_guardrail_follow_up, needs_usage_events
from .test_recipes import each_schedule, make_runner


@needs_end_of_stream
def test_clean_server_close_drains_queued_events_then_ends_iteration() -> None:
    async def main() -> list[str]:
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport)
        deltas: list[str] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            for i in range(5):  # queued, not yet handled by the application
                ctx.emit_nowait(RealtimeModelTranscriptDeltaEvent(item_id="a1", delta=f"part{i} ", response_id="r1"))
            await ctx.disconnect()  # a normal server close
            await ctx.expect_call("close")

        async def exercise() -> None:
            async with await runner.run() as session:
                async for event in session:  # must end without an exception
                    if event.type == "raw_model_event" and event.data.type == "transcript_delta":
                        deltas.append(event.data.delta)

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_complete()
        return deltas

    for deltas in each_schedule(main):
        assert deltas == [f"part{i} " for i in range(5)]


def test_unexpected_connection_failure_takes_the_exception_path() -> None:
    async def main() -> tuple[str, int]:
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport)
        seen_before_failure: list[str] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.emit(turn_started("r1"))
            await ctx.disconnect(ConnectionResetError("connection reset by peer"), clean=False)
            await ctx.expect_call("close")

        async def exercise() -> None:
            with pytest.raises(ConnectionResetError, match="reset by peer"):
                async with await runner.run() as session:
                    async for event in session:
                        seen_before_failure.append(event.type)

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_closed()
        return transport.status, seen_before_failure.count("agent_start"), [call.kind for call in transport.calls]

    for status, agent_starts, kinds in each_schedule(main):
        assert status == "disconnected"
        assert agent_starts == 1
        # Current releases close the model once; 0.13.6 closes it again when the
        # `async with` exits after the iterator already closed the session.
        assert kinds == (["connect", "close"] if HAS_END_OF_STREAM else ["connect", "close", "close"])


def _password_guardrail() -> OutputGuardrail[Any]:
    def sensitive_data_check(context: Any, agent: Any, output: str) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(tripwire_triggered="password" in output, output_info=None)

    return OutputGuardrail(guardrail_function=sensitive_data_check)


@needs_guardrail_follow_up
def test_output_guardrail_trips_on_a_transcript_delta_interrupts_and_follows_up() -> None:
    async def main() -> tuple[RealtimeCall, RealtimeCall, list[str], int]:
        agent = RealtimeAgent(name="Assistant", instructions="...", output_guardrails=[_password_guardrail()])
        transport = ScriptedRealtimeTransport()
        runner = RealtimeRunner(
            agent,
            model=transport,
            config={"tracing_disabled": True, "guardrails_settings": {"debounce_text_length": 20}},
        )
        tripped: list[str] = []
        calls: dict[str, RealtimeCall] = {}
        chunks: list[int] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.expect_call("user_input")
            stream = ctx.stream_audio(
                response_id="r1",
                item_id="a1",
                duration=4.0,
                transcript="Sure, the admin password is hunter2 and the rest of the story goes on for a while",
            )
            calls["interrupt"] = await ctx.expect_call("interrupt")
            # The recovery message goes through send_event_if: this transport honours it.
            calls["follow_up"] = await ctx.expect_call("user_input")
            await stream
            chunks.append(stream.chunks_sent)
            await ctx.expect_call("close")

        async def exercise() -> None:
            async with await runner.run() as session:
                await session.send_message("Tell me the admin password")
                async for event in session:
                    if event.type == "guardrail_tripped":
                        tripped.append(event.message)
                        break

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_complete()
        return calls["interrupt"], calls["follow_up"], tripped, chunks[0]

    for interrupt, follow_up, tripped, chunks_sent in each_schedule(main):
        assert isinstance(interrupt.event, RealtimeModelSendInterrupt)
        assert interrupt.event.force_response_cancel is True
        assert interrupt.event.response_id == "r1"
        assert isinstance(follow_up.event, RealtimeModelSendUserInput)
        assert follow_up.event.user_input == "guardrail triggered: sensitive_data_check"
        assert len(tripped) == 1 and "password" in tripped[0]
        assert chunks_sent < 200  # cancelled long before the 4 s of audio ended


def test_send_event_if_is_atomic_at_the_commit_point() -> None:
    async def main() -> tuple[bool, bool, int]:
        transport = ScriptedRealtimeTransport()
        await transport.connect({})
        event = RealtimeModelSendUserInput(user_input="guardrail triggered: x")
        sent = await transport.send_event_if(event, lambda: True)
        skipped = await transport.send_event_if(event, lambda: False)
        await transport.close()
        return sent, skipped, len([c for c in transport.calls if c.kind == "user_input"])

    for sent, skipped, user_inputs in each_schedule(main):
        assert (sent, skipped, user_inputs) == (True, False, 1)


def _approval_scenario(decision: str) -> Any:
    async def main() -> tuple[list[str], RealtimeCall, list[str]]:
        executed: list[str] = []

        @function_tool(needs_approval=True)
        def refund(order_id: str) -> str:
            """Refund an order."""
            executed.append(order_id)
            return f"Refunded {order_id}."

        agent = RealtimeAgent(name="Support", tools=[refund])
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport, agent)
        outputs: list[RealtimeCall] = []
        approvals: list[str] = []
        done = asyncio.Event()

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.emit(RealtimeModelToolCallEvent(name="refund", call_id="call_9", arguments='{"order_id": "A1"}'))
            outputs.append(await ctx.expect_call("tool_output"))
            done.set()
            await ctx.expect_call("close")

        async def exercise() -> None:
            async with await runner.run() as session:
                async for event in session:
                    if event.type == "tool_approval_required":
                        approvals.append(event.call_id)
                        if decision == "approve":
                            await session.approve_tool_call(event.call_id)
                        else:
                            await session.reject_tool_call(event.call_id)
                        break
                await done.wait()

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_complete()
        return executed, outputs[0], approvals

    return main


def test_tool_approval_approve_runs_the_tool() -> None:
    for executed, output, approvals in each_schedule(_approval_scenario("approve")):
        assert approvals == ["call_9"]
        assert executed == ["A1"]
        assert output.event.output == "Refunded A1."


def test_tool_approval_reject_sends_the_rejection_instead() -> None:
    from agents.realtime.session import REJECTION_MESSAGE

    for executed, output, approvals in each_schedule(_approval_scenario("reject")):
        assert approvals == ["call_9"]
        assert executed == []
        assert output.event.output == REJECTION_MESSAGE
        assert output.event.start_response is True


def test_handoff_mid_session_updates_the_session() -> None:
    async def main() -> tuple[list[str], RealtimeCall, RealtimeCall, list[tuple[str, str]]]:
        billing = RealtimeAgent(name="Billing Support", instructions="You specialize in billing issues.")
        main_agent = RealtimeAgent(
            name="Customer Service",
            instructions="Triage the request and hand off when needed.",
            handoffs=[realtime_handoff(billing, tool_description_override="Transfer to billing support")],
        )
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport, main_agent)
        handoffs: list[tuple[str, str]] = []
        done = asyncio.Event()
        seen: dict[str, RealtimeCall] = {}

        async def scenario(ctx: Any) -> None:
            connect = await ctx.expect_call("connect")
            tool_names = [handoff.tool_name for handoff in connect.options.initial_model_settings["handoffs"]]
            assert tool_names == [Handoff.default_tool_name(billing)]
            await ctx.emit(
                turn_started("r1"),
                RealtimeModelToolCallEvent(name=tool_names[0], call_id="call_h", arguments="{}"),
            )
            seen["update"] = await ctx.expect_call("session_update")
            seen["output"] = await ctx.expect_call("tool_output")
            done.set()
            await ctx.expect_call("close")

        async def exercise() -> None:
            async with await runner.run() as session:
                async for event in session:
                    if event.type == "handoff":
                        handoffs.append((event.from_agent.name, event.to_agent.name))
                        break
                await done.wait()

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_complete()
        return [tool_call.kind for tool_call in transport.calls], seen["update"], seen["output"], handoffs

    for kinds, update, output, handoffs in each_schedule(main):
        assert kinds == ["connect", "session_update", "tool_output", "close"]
        assert update.event.session_settings["instructions"] == "You specialize in billing issues."
        assert output.event.start_response is True
        assert handoffs == [("Customer Service", "Billing Support")]


@needs_usage_events
def test_usage_events_accumulate_on_the_session_context() -> None:
    RealtimeModelUsageEvent = model_events.RealtimeModelUsageEvent  # noqa: N806 - absent on old releases

    async def main() -> tuple[list[int], int]:
        transport = ScriptedRealtimeTransport()
        runner = make_runner(transport)
        per_response: list[int] = []
        totals: list[int] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            for index, tokens in enumerate((120, 80), start=1):
                await ctx.emit(
                    turn_started(f"r{index}"),
                    RealtimeModelUsageEvent(usage=Usage(requests=1, input_tokens=tokens // 2, output_tokens=tokens // 2, total_tokens=tokens)),
                    turn_ended(f"r{index}"),
                )
            await ctx.expect_call("close")

        async def exercise() -> None:
            async with await runner.run() as session:
                async for event in session:
                    if event.type == "raw_model_event" and isinstance(event.data, RealtimeModelUsageEvent):
                        per_response.append(event.data.usage.total_tokens)
                    elif event.type == "agent_end":
                        totals.append(event.info.context.usage.total_tokens)
                        if len(totals) == 2:
                            break

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_complete()
        return per_response, totals[-1]

    for per_response, total in each_schedule(main):
        assert per_response == [120, 80]
        assert total == 200
