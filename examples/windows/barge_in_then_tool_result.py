"""Two narrow windows in a row: it takes both going the wrong way.

The assistant finishes speaking at 400-505 ms; the caller barges in at
500-600 ms. Only a barge-in *before* the end interrupts the turn. The
interrupted turn then waits for its tool (400-505 ms) while the cancel takes
500-600 ms: only a tool result landing *after* the cancel is lost (the app
forgets to re-send it). So the result is lost only when both overlaps
(5 ms each) go the rare way.

Seeded jitter: about 1 run in a million. As windows: two choices of two.
"""

from __future__ import annotations

import asyncio

from agentsim.timing import sleep_between


class LostToolResult(Exception):
    """A tool finished after an interruption and its result was never sent."""


async def _turn(resend_after_cancel: bool) -> None:
    events: list[str] = []

    async def speaking() -> None:
        await sleep_between(0.400, 0.505)
        events.append("spoke")

    async def caller() -> None:
        await sleep_between(0.500, 0.600)
        events.append("barge-in")

    async with asyncio.TaskGroup() as group:
        group.create_task(speaking(), name="assistant")
        group.create_task(caller(), name="caller")
    if events[0] != "barge-in":
        return  # the turn ended normally

    async def tool() -> None:
        await sleep_between(0.400, 0.505)
        events.append("tool result")

    async def cancel() -> None:
        await sleep_between(0.500, 0.600)
        events.append("cancelled")

    async with asyncio.TaskGroup() as group:
        group.create_task(tool(), name="tool")
        group.create_task(cancel(), name="cancel")
    if events[-1] == "tool result" and not resend_after_cancel:
        raise LostToolResult(f"tool result after the cancel was dropped: {events}")


async def racy() -> None:
    await _turn(resend_after_cancel=False)


async def fixed() -> None:
    await _turn(resend_after_cancel=True)
