"""Race: a tool timeout fires a hair before the late result, and a seat leaks.

An agent books a seat with a tool: it reserves the seat, calls the airline
(0.5-1.4 s), then confirms. The SDK gives the tool 1.0 s (``timeout=1.0``).
When the airline is slow, the SDK cancels the tool mid-call: the racy tool
never releases its reservation, so the seat stays blocked although the user
was told the booking failed.

``racy``: reserve, call, confirm. ``fixed``: releases the reservation when
cancelled.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from agents import Agent, RunConfig, RunContextWrapper, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from agentsim.models import TimedModel, uniform
from agentsim.timing import DelaySource, DelaySpec


class LeakedReservation(Exception):
    """A seat is still reserved but neither confirmed nor released."""


@dataclass
class Bookings:
    release_on_cancel: bool
    airline: DelaySource
    reserved: set[str] = field(default_factory=set)
    confirmed: set[str] = field(default_factory=set)


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


async def book(release_on_cancel: bool, *, airline: DelaySpec = uniform(0.5, 1.4), model_latency: DelaySpec = uniform(0.2, 0.6)) -> None:
    """One booking through the real ``Runner`` (``examples/windows`` reuses it
    with a narrower airline latency)."""
    bookings = Bookings(release_on_cancel, airline=DelaySource(airline, name="airline latency", stream="airline"))
    model = TimedModel(
        ScriptedModel([[function_call("book_seat", {"seat": "12A"}, call_id="c1")], [assistant_message("Done.")]]),
        latency=model_latency,
    )
    agent = Agent(name="Travel agent", model=model, tools=[book_seat])
    await Runner.run(agent, "Book me seat 12A", context=bookings, run_config=RunConfig(tracing_disabled=True))
    leaked = bookings.reserved - bookings.confirmed
    if leaked:
        raise LeakedReservation(f"seat(s) {sorted(leaked)} reserved but never confirmed or released")


async def racy() -> None:
    await book(release_on_cancel=False)


async def fixed() -> None:
    await book(release_on_cancel=True)
