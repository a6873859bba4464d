"""Programs for the focused-sweep tests: a two-minute call with a lateness
race in its last minute (the shape of examples/long_calls, small enough for
the fast set), its fixed twin, moments, and a trio program."""

from __future__ import annotations

import asyncio

import agentsim
from agentsim.timing import sleep_between

#: Turns of 2 s; the transfer starts at the end of turn 45's speech (90.5 s in the stock run).
TURNS, TRANSFER_TURN = 55, 45
TRANSFER_AT = TRANSFER_TURN * 2.0 + 0.5
#: The session's limit: 1.3 s after the stock transfer started; reconnecting takes 0.5 s.
SESSION_LIMIT = TRANSFER_AT + 1.3
WINDOW = (TRANSFER_AT - 0.5, TRANSFER_AT + 3.0)


class LostAnswer(Exception):
    """An answer went to a session that had closed."""


async def _call(fixed: bool) -> int:
    open_ = asyncio.Event()
    open_.set()
    frames = 0

    async def session_limit() -> None:
        await asyncio.sleep(SESSION_LIMIT)
        open_.clear()
        await asyncio.sleep(0.5)
        open_.set()

    async def microphone() -> None:
        nonlocal frames
        while True:
            await asyncio.sleep(0.25)  # (coarse frames: the fast set's call is cheap)
            frames += 1

    async def transfer() -> None:
        await sleep_between(0.5, 1.1)  # the service thinks
        await sleep_between(0.1, 0.4)  # the answer crosses the network
        if fixed:
            await open_.wait()
        if not open_.is_set():
            raise LostAnswer(f"transfer answered at {agentsim.now():.2f} s on a closed session")

    limit = asyncio.create_task(session_limit(), name="limit")
    mic = asyncio.create_task(microphone(), name="microphone")
    tasks = []
    try:
        for turn in range(TURNS):
            await asyncio.sleep(0.5)  # the caller speaks
            if turn == TRANSFER_TURN:
                tasks.append(asyncio.create_task(transfer(), name="transfer"))
            await sleep_between(0.2, 0.6)  # the model answers
            await open_.wait()
            await asyncio.sleep(1.1)  # the answer plays
        await asyncio.gather(*tasks)
    finally:
        for task in (limit, mic, *tasks):
            task.cancel()
        await asyncio.gather(limit, mic, *tasks, return_exceptions=True)
    return frames


async def racy() -> int:
    return await _call(fixed=False)


async def fixed() -> int:
    return await _call(fixed=True)


async def moments() -> None:
    """Names a moment at 10, 10.4 and 30 s (held only at 30 s)."""
    for instant, held in ((10.0, False), (10.4, False), (30.0, True)):
        await asyncio.sleep(instant - agentsim.now())
        agentsim.sometimes(held, "barge-in")
    await sleep_between(0.0, 1.0)


async def trio_race() -> None:
    """A trio program whose failure needs two tasks ordered late in the run."""
    import trio

    log: list[str] = []

    async def worker(name: str) -> None:
        await trio.sleep(50.0)
        await sleep_between(0.1, 0.3)
        log.append(name)

    for _ in range(200):
        await trio.sleep(0.1)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(worker, "a")
        nursery.start_soon(worker, "b")
    if log == ["b", "a"]:
        raise AssertionError("b answered before a")
