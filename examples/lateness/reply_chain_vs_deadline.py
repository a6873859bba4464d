"""Lateness, two stages: a reply whose latency is processing plus network,
against a deadline the app arms after the request started.

A pharmacy bot asks the stock service for a drug (processing 0.2-0.6 s, then
0.05-0.25 s on the network). Meanwhile it greets the caller (50 ms) and only
then gives the answer 0.72 s. When both delays run long, the deadline fires
first: the racy bot tells the caller "out of stock" and forgets the reply,
which then lands and reserves a box nobody asked for.

No order of the windows' nominal instants breaks it: both delays must land
*late*. The windows overlap nothing when they are set, so ``random`` and
``pct`` never move them; ``timed`` tries late landings; sampling (``jitter``)
hits the corner (sum above 0.77 s) in about 1 run of 25.

``racy``: ignores the late reply's side effect. ``fixed``: cancels the
request when the deadline fires.
"""

from __future__ import annotations

import asyncio

from agentsim.timing import sleep_between


class OrphanReservation(Exception):
    """A box was reserved for a request the caller was told had failed."""


async def _ask(cancel_on_deadline: bool) -> None:
    reserved: list[str] = []

    async def stock_service() -> None:
        await sleep_between(0.2, 0.6)  # processing
        await sleep_between(0.05, 0.25)  # the network back
        reserved.append("box-7")

    request = asyncio.create_task(stock_service(), name="stock request")
    await asyncio.sleep(0.05)  # greeting the caller first
    told = "in stock"
    try:
        await asyncio.wait_for(asyncio.shield(request), 0.72)
    except TimeoutError:
        told = "out of stock"
        if cancel_on_deadline:
            request.cancel()
    await asyncio.gather(request, return_exceptions=True)
    if told == "out of stock" and reserved:
        raise OrphanReservation(f"told the caller 'out of stock' but reserved {reserved}")


async def racy() -> None:
    await _ask(cancel_on_deadline=False)


async def fixed() -> None:
    await _ask(cancel_on_deadline=True)
