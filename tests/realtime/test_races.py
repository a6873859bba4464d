"""Timing cases only a clock can express, each asserting what the SDK does.

Each runs under FIFO and random seeds 0-15; where the outcome depends on the
order of simultaneous events, the test checks that every seed gives one of
the known outcomes, that the seeds reach all of them, and that one seed
always gives the same one.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from agents import function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner
from agents.realtime.model_events import RealtimeModelToolCallEvent

import agentsim
from agentsim.realtime import RealtimeTransportDisconnectedError, ScriptedRealtimeTransport, turn_started

from .sdk_features import needs_end_of_stream

SEEDS = range(16)


def _slow_tool_agent(seconds: float, log: list[tuple[str, float]]) -> RealtimeAgent[Any]:
    @function_tool
    async def search_flights(destination: str) -> str:
        """Search flights (slowly)."""
        log.append(("tool started", agentsim.now()))
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            log.append(("tool cancelled", agentsim.now()))
            raise
        log.append(("tool finished", agentsim.now()))
        return f"3 flights to {destination}"

    return RealtimeAgent(name="Travel", tools=[search_flights])


def _runner(transport: ScriptedRealtimeTransport, agent: RealtimeAgent[Any]) -> RealtimeRunner:
    return RealtimeRunner(agent, model=transport, config={"tracing_disabled": True})


def _tool_call() -> RealtimeModelToolCallEvent:
    return RealtimeModelToolCallEvent(name="search_flights", call_id="call_1", arguments='{"destination": "Oslo"}')


def test_user_interrupts_at_1_2s_while_a_3s_tool_runs() -> None:
    # What the SDK does: the interrupt goes out at 1.2 s, the tool is *not*
    # cancelled, and at 3.0 s its output is sent with start_response=True - so
    # the model starts a new response the user may no longer want.
    async def main() -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        log: list[tuple[str, float]] = []
        transport = ScriptedRealtimeTransport()
        runner = _runner(transport, _slow_tool_agent(3.0, log))
        output_sent = asyncio.Event()

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            ctx.stream_audio(response_id="r1", item_id="a1", duration=5.0, transcript="Let me look that up for you")
            await ctx.emit(_tool_call())
            await ctx.expect_call("interrupt")
            output = await ctx.expect_call("tool_output")
            assert output.event.start_response is True
            output_sent.set()
            await ctx.expect_call("close")

        async def exercise() -> None:
            async with await runner.run() as session:
                await asyncio.sleep(1.2)  # the user presses "stop"
                await session.interrupt()
                await output_sent.wait()

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_complete()
        return log, [(call.kind, call.time) for call in transport.calls]

    for strategy, seed in [("fifo", 0), *(("random", s) for s in SEEDS)]:
        log, calls = agentsim.run(main, strategy=strategy, seed=seed)
        assert log == [("tool started", 0.0), ("tool finished", 3.0)]
        assert calls == [("connect", 0.0), ("interrupt", 1.2), ("tool_output", 3.0), ("close", 3.0)]


@needs_end_of_stream
def test_disconnect_arriving_while_the_tool_output_is_sent() -> None:
    # The tool finishes at 2.0 s, the server drops the connection at 2.0 s.
    # Three things can happen, and the SDK ends the session cleanly in all of
    # them - but in two the tool's result never reaches the model:
    #   "sent":     the output went out before the disconnect;
    #   "send failed": the send raised (the SDK logs it and caches the output
    #               for a retry that never comes);
    #   "never sent": the session saw end-of-stream and closed first, cancelling
    #               the tool task before it could send.
    async def main() -> tuple[str, str]:
        log: list[tuple[str, float]] = []
        transport = ScriptedRealtimeTransport()
        runner = _runner(transport, _slow_tool_agent(2.0, log))
        ending: list[str] = []

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.emit(_tool_call())
            await asyncio.sleep(2.0)
            await ctx.disconnect()

        async def exercise() -> None:
            try:
                async with await runner.run() as session:
                    async for _ in session:
                        pass
                ending.append("iteration ended")
            except Exception as exc:  # noqa: BLE001 - recorded for the assertion
                ending.append(f"raised {type(exc).__name__}")

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        outputs = [call for call in transport.calls if call.kind == "tool_output"]
        if not outputs:
            outcome = "never sent"
        elif isinstance(outputs[0].error, RealtimeTransportDisconnectedError):
            outcome = "send failed"
        else:
            outcome = "sent"
        return outcome, ending[0]

    outcomes: Counter[str] = Counter()
    for seed in SEEDS:
        outcome, ending = agentsim.run(main, strategy="random", seed=seed)
        assert ending == "iteration ended"
        assert agentsim.run(main, strategy="random", seed=seed) == (outcome, ending)
        outcomes[outcome] += 1
    assert set(outcomes) == {"sent", "send failed", "never sent"}
    # FIFO always shows the same one of the three: a suite without seeds sees one.
    assert agentsim.run(main) == agentsim.run(main) == ("send failed", "iteration ended")


def test_close_racing_an_in_flight_tool_call() -> None:
    # The application closes the session while a 3 s tool runs. The SDK
    # cancels the tool (its clean-up runs) and sends no output. When the close
    # lands exactly as the tool finishes, seeds reach both orders: output sent
    # just before the close, or tool cancelled with its result dropped.
    async def main(close_at: float) -> tuple[list[str], list[str]]:
        log: list[tuple[str, float]] = []
        transport = ScriptedRealtimeTransport()
        runner = _runner(transport, _slow_tool_agent(3.0, log))

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.emit(turn_started("r1"), _tool_call())

        async def exercise() -> None:
            async with await runner.run():
                await asyncio.sleep(close_at)

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        transport.assert_closed()
        return [event for event, _ in log], [call.kind for call in transport.calls]

    for seed in SEEDS:
        tool_log, kinds = agentsim.run(main, 1.0, strategy="random", seed=seed)
        assert tool_log == ["tool started", "tool cancelled"]
        assert kinds == ["connect", "close"]

    outcomes = set()
    for seed in SEEDS:
        result = agentsim.run(main, 3.0, strategy="random", seed=seed)
        assert result in [
            (["tool started", "tool finished"], ["connect", "tool_output", "close"]),
            (["tool started", "tool finished"], ["connect", "close"]),
            (["tool started", "tool cancelled"], ["connect", "close"]),
        ]
        outcomes.add((tuple(result[0]), tuple(result[1])))
    assert ((("tool started", "tool finished"), ("connect", "tool_output", "close"))) in outcomes
    assert len(outcomes) >= 2
