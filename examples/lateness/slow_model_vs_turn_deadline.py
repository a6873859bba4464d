"""Lateness through ``TimedModel``: two slow model calls against a turn
deadline the app arms after it started the run.

An agent books a table with a tool: the model asks for the tool, the tool
books (0.1 s), the model answers. Each model call takes 0.3-0.9 s. The app
starts the run, shows a spinner (0.05 s), then waits 1.7 s and, on time-out,
tells the user "booking failed". The racy app waits on a shielded run and
lets it finish anyway: the table is booked although the user was told it
was not. Only when both model calls run long (above 1.65 s together) is the
deadline first.

Runs the real ``Runner`` on the SDK's ``ScriptedModel``, timed by
:class:`~agentsim.models.TimedModel`.

``racy``: the run goes on after the time-out. ``fixed``: it is cancelled,
and what it booked already is released.
"""

from __future__ import annotations

import asyncio

from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from agentsim.models import TimedModel, uniform


class BookedAfterFailure(Exception):
    """The user was told the booking failed, and the table was booked."""


BOOKED: list[str] = []


@function_tool
async def book_table(time: str) -> str:
    """Book a table."""
    await asyncio.sleep(0.1)
    BOOKED.append(time)
    return f"Booked for {time}."


async def _turn(undo_on_timeout: bool) -> None:
    BOOKED.clear()
    model = TimedModel(
        ScriptedModel([[function_call("book_table", {"time": "19:30"}, call_id="c1")], [assistant_message("Booked.")]]),
        latency=uniform(0.3, 0.9),
    )
    agent = Agent(name="Bookings", model=model, tools=[book_table])
    run = asyncio.create_task(Runner.run(agent, "a table at 19:30", run_config=RunConfig(tracing_disabled=True)), name="run")
    await asyncio.sleep(0.05)  # the spinner
    told = "booked"
    try:
        await asyncio.wait_for(asyncio.shield(run), 1.7)
    except TimeoutError:
        told = "booking failed"
        if undo_on_timeout:
            run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    if told == "booking failed" and undo_on_timeout:
        BOOKED.clear()  # release what the run booked before it was cancelled
    if told == "booking failed" and BOOKED:
        raise BookedAfterFailure(f"told {told!r}, booked {BOOKED}")


async def racy() -> None:
    await _turn(undo_on_timeout=False)


async def fixed() -> None:
    await _turn(undo_on_timeout=True)
