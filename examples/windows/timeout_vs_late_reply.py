"""Narrow window: a reply that is rarely a hair later than the caller's timeout.

A booking service answers in 0.5-1.0005 s; the caller gives it 1.0 s. It holds
a seat before asking and turns the hold into a booking when the answer comes.
On a timeout the racy caller forgets the hold (it assumes the service is
never that slow); the seat leaks.

Seeded jitter hits the 0.5 ms overlap in 0.1% of runs; as windows, "timeout
first" is one of two choices.
"""

from __future__ import annotations

import asyncio

from agentsim.timing import sleep_between


class LeakedHold(Exception):
    """A seat stayed on hold after the booking attempt ended."""


async def _book(release_on_timeout: bool) -> None:
    holds = {"seat-12"}
    try:
        async with asyncio.timeout(1.0):
            await sleep_between(0.5, 1.0005)  # the booking service
        holds.discard("seat-12")  # booked
    except TimeoutError:
        if release_on_timeout:
            holds.discard("seat-12")
    if holds:
        raise LeakedHold(f"still on hold: {sorted(holds)}")


async def racy() -> None:
    await _book(release_on_timeout=False)


async def fixed() -> None:
    await _book(release_on_timeout=True)
