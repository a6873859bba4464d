"""Narrow window through the scripted transport: hang-up as a booking lands.

A realtime agent books a table with a tool that takes 2.996-3.010 s; the
caller hangs up at 3.0 s. Only when the booking is written in the very
instant of the hang-up does the hang-up cancel the tool between writing the
booking and reporting it: written, never confirmed to the model.

Seeded jitter never lands on that instant; as windows it is "tool first"
(clamped to 3.0 s) and then the hang-up between two steps of the report.

``racy``: hangs up at once. ``fixed``: waits for in-flight tools to report.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents import RunContextWrapper, function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner
from agents.realtime.model_events import RealtimeModelToolCallEvent

from agentsim.realtime import ScriptedRealtimeTransport, turn_started
from agentsim.timing import sleep_between


class UnconfirmedBooking(Exception):
    """A booking was written but its confirmation never reached the model."""


@function_tool
async def book_table(ctx: RunContextWrapper[list[str]], restaurant: str) -> str:
    """Book a table."""
    await sleep_between(2.996, 3.010)
    ctx.context.append(restaurant)  # the booking is written
    return f"Booked {restaurant} for 8pm."


AGENT = RealtimeAgent(name="Concierge", tools=[book_table])


async def _call(graceful: bool) -> None:
    bookings: list[str] = []
    transport = ScriptedRealtimeTransport()
    runner = RealtimeRunner(AGENT, model=transport, config={"tracing_disabled": True})

    async def server(ctx: Any) -> None:
        await ctx.expect_call("connect")
        await ctx.emit(
            turn_started("r1"),
            RealtimeModelToolCallEvent(name="book_table", call_id="call_1", arguments='{"restaurant": "Noma"}'),
        )

    async def app() -> None:
        async with await runner.run(context=bookings) as session:
            in_flight = 0
            idle = asyncio.Event()
            idle.set()

            async def listen() -> None:
                nonlocal in_flight
                async for event in session:
                    if event.type == "tool_start":
                        in_flight += 1
                        idle.clear()
                    elif event.type == "tool_end":
                        in_flight -= 1
                        if not in_flight:
                            idle.set()

            listener = asyncio.create_task(listen(), name="listener")
            await asyncio.sleep(3.0)  # the caller hangs up
            if graceful:
                await asyncio.sleep(0)
                await idle.wait()
            listener.cancel()

    await transport.run_scenario(scenario=server, exercise=app)
    confirmed = [call for call in transport.calls if call.kind == "tool_output"]
    if len(bookings) != len(confirmed):
        raise UnconfirmedBooking(f"{len(bookings)} booking(s) written, {len(confirmed)} confirmed to the model")


async def racy() -> None:
    await _call(graceful=False)


async def fixed() -> None:
    await _call(graceful=True)
