"""Narrow window through the SDK's Runner: a tool timeout a hair before the airline.

The airline answers in 0.5-1.001 s and the SDK gives the tool 1.0 s
(``function_tool(timeout=1.0)``). The tool reserves a seat before the call;
when the SDK cancels it, the racy tool never releases the reservation.

Seeded jitter lands in the 1 ms overlap in 0.2% of runs; as windows, the
SDK's timeout firing first is one of two choices.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from agents import Agent, RunConfig, RunContextWrapper, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from agentsim.models import TimedModel
from agentsim.timing import DelaySource, uniform


class LeakedReservation(Exception):
    """A seat is still reserved but neither confirmed nor released."""


@dataclass
class Bookings:
    release_on_cancel: bool
    reserved: set[str] = field(default_factory=set)
    confirmed: set[str] = field(default_factory=set)
    airline: DelaySource = field(default_factory=lambda: DelaySource(uniform(0.5, 1.001), name="airline", stream="airline"))


@function_tool(timeout=1.0)
async def book_seat(ctx: RunContextWrapper[Bookings], seat: str) -> str:
    """Reserve and confirm a seat with the airline."""
    bookings = ctx.context
    bookings.reserved.add(seat)
    try:
        await bookings.airline.sleep(0)  # the airline's API
    except asyncio.CancelledError:
        if bookings.release_on_cancel:
            bookings.reserved.discard(seat)
        raise
    bookings.confirmed.add(seat)
    return f"Seat {seat} confirmed."


async def _book(release_on_cancel: bool) -> None:
    bookings = Bookings(release_on_cancel)
    model = TimedModel(
        ScriptedModel([[function_call("book_seat", {"seat": "12A"}, call_id="c1")], [assistant_message("Done.")]]),
        latency=0.3,
    )
    agent = Agent(name="Travel agent", model=model, tools=[book_seat])
    await Runner.run(agent, "Book me seat 12A", context=bookings, run_config=RunConfig(tracing_disabled=True))
    leaked = bookings.reserved - bookings.confirmed
    if leaked:
        raise LeakedReservation(f"seat(s) {sorted(leaked)} reserved but never confirmed or released")


async def racy() -> None:
    await _book(release_on_cancel=False)


async def fixed() -> None:
    await _book(release_on_cancel=True)
