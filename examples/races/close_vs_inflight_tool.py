"""Race: the session closes while a tool call is finishing.

The user asks to book a table; the ``book_table`` tool takes 3 s and writes
the booking. The user hangs up at 3.0 s, the instant the tool returns. If
the close wins, the SDK cancels the tool task after the booking was written
but before its output went out: the restaurant has a booking the user was
never told about.

``racy``: closes on hang-up. ``fixed``: on hang-up, waits for tools in
flight to finish and report (``tool_end``) before closing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from agents import RunContextWrapper, function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner
from agents.realtime.model_events import RealtimeModelToolCallEvent

import agentsim.timing
from agentsim.realtime import ScriptedRealtimeTransport, turn_started
from agentsim.timing import DelaySpec

TOOL_SECONDS = 3.0
HANG_UP_AT = 3.0


class UnconfirmedBooking(Exception):
    """A booking was written but its confirmation never reached the model."""


@dataclass
class Restaurant:
    """The tool's context: how long booking takes, and what was booked."""

    booking_takes: DelaySpec
    bookings: list[str] = field(default_factory=list)


@function_tool
async def book_table(ctx: RunContextWrapper[Restaurant], restaurant: str) -> str:
    """Book a table."""
    await agentsim.timing.sleep(ctx.context.booking_takes)
    ctx.context.bookings.append(restaurant)  # the booking is written
    return f"Booked {restaurant} for 8pm."


AGENT = RealtimeAgent(name="Concierge", tools=[book_table])


async def call(graceful: bool, *, booking_takes: DelaySpec = TOOL_SECONDS) -> None:
    """One call that hangs up at 3.0 s (``examples/windows`` reuses it with a
    booking time that is a narrow window around the hang-up)."""
    context = Restaurant(booking_takes)
    bookings = context.bookings
    transport = ScriptedRealtimeTransport()
    runner = RealtimeRunner(AGENT, model=transport, config={"tracing_disabled": True})

    async def server(ctx: Any) -> None:
        await ctx.expect_call("connect")
        await ctx.emit(
            turn_started("r1"),
            RealtimeModelToolCallEvent(name="book_table", call_id="call_1", arguments='{"restaurant": "Noma"}'),
        )

    async def app() -> None:
        async with await runner.run(context=context) as session:
            tools_in_flight: set[str] = set()
            idle = asyncio.Event()
            idle.set()

            async def listen() -> None:
                async for event in session:
                    if event.type == "tool_start":
                        tools_in_flight.add(event.tool.name)
                        idle.clear()
                    elif event.type == "tool_end":
                        tools_in_flight.discard(event.tool.name)
                        if not tools_in_flight:
                            idle.set()

            listener = asyncio.create_task(listen(), name="listener")
            await asyncio.sleep(HANG_UP_AT)  # the user hangs up
            if graceful:
                await asyncio.sleep(0)
                await idle.wait()
            listener.cancel()

    await transport.run_scenario(scenario=server, exercise=app)
    confirmed = [call for call in transport.calls if call.kind == "tool_output"]
    if len(bookings) != len(confirmed):
        raise UnconfirmedBooking(f"{len(bookings)} booking(s) written, {len(confirmed)} confirmed to the model")


async def racy() -> None:
    await call(graceful=False)


async def fixed() -> None:
    await call(graceful=True)
