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


async def _first(early: tuple[float, float], late: tuple[float, float]) -> str:
    """Which of two concurrent windowed sleeps ends first: "early" or "late"."""
    order: list[str] = []

    async def sleep(name: str, window: tuple[float, float]) -> None:
        await sleep_between(*window)
        order.append(name)

    async with asyncio.TaskGroup() as group:
        group.create_task(sleep("early", early), name="early")
        group.create_task(sleep("late", late), name="late")
    return order[0]


async def _turn(resend_after_cancel: bool) -> None:
    # The assistant stops speaking vs the caller barges in.
    if await _first(early=(0.400, 0.505), late=(0.500, 0.600)) == "early":
        return  # the turn ended normally
    # The interrupted turn's tool result vs the cancel.
    if await _first(early=(0.400, 0.505), late=(0.500, 0.600)) == "late" and not resend_after_cancel:
        raise LostToolResult("the tool result came after the cancel and was dropped")


async def racy() -> None:
    await _turn(resend_after_cancel=False)


async def fixed() -> None:
    await _turn(resend_after_cancel=True)
