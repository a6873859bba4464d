"""Lateness, three stages: queue, work and network against a deadline armed
after the request started.

A voice agent's lookup waits in a queue (0.05-0.3 s), runs (0.2-0.5 s) and
comes back over the network (0.05-0.2 s): up to 1.0 s. The agent starts it,
speaks a 0.1 s acknowledgement, then waits 0.78 s for it. Only when all
three run long (above 0.88 s together) does the deadline win; the racy agent
then says "I couldn't find it" and still reads the late answer aloud.

``racy``: speaks the late answer anyway. ``fixed``: drops an answer that
came after the apology.
"""

from __future__ import annotations

import asyncio

from agentsim.timing import sleep_between


class SpokeAfterApology(Exception):
    """The agent apologised for a missing answer, then spoke it."""


async def _turn(drop_late_answers: bool) -> None:
    spoken: list[str] = []
    gave_up = False

    async def lookup() -> None:
        await sleep_between(0.05, 0.3)  # queued
        await sleep_between(0.2, 0.5)  # the work
        await sleep_between(0.05, 0.2)  # the network back
        if not (gave_up and drop_late_answers):
            spoken.append("your balance is 42")

    task = asyncio.create_task(lookup(), name="lookup")
    await asyncio.sleep(0.1)  # "let me check"
    try:
        await asyncio.wait_for(asyncio.shield(task), 0.78)
    except TimeoutError:
        gave_up = True
        spoken.append("sorry, I couldn't find it")
    await task
    if spoken[:1] == ["sorry, I couldn't find it"] and len(spoken) > 1:
        raise SpokeAfterApology(f"said {spoken}")


async def racy() -> None:
    await _turn(drop_late_answers=False)


async def fixed() -> None:
    await _turn(drop_late_answers=True)
