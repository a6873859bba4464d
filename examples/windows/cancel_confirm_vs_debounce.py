"""Narrow window: a follow-up request a hair before the cancel is confirmed.

The client cancels the assistant's response and asks for a new one after a
debounce of 120-160 ms; the server confirms a cancel in 80-121 ms and rejects
a request while a response is active. The windows overlap by 1 ms.

Seeded jitter needs both draws in that millisecond (about 3 runs in 10,000);
as windows, the debounce firing first is one choice of two.
"""

from __future__ import annotations

import asyncio

from agentsim.timing import sleep_between


class ActiveResponseError(Exception):
    """The server's rule: at most one active response per conversation."""


async def _conversation(wait_for_confirmation: bool) -> None:
    active = True
    confirmed = asyncio.Event()

    async def server_cancels() -> None:
        nonlocal active
        await sleep_between(0.080, 0.121)
        active = False
        confirmed.set()

    async def client() -> None:
        await sleep_between(0.120, 0.160)  # debounce: "surely done by now"
        if wait_for_confirmation:
            await confirmed.wait()
        if active:
            raise ActiveResponseError("conversation already has an active response")

    async with asyncio.TaskGroup() as group:
        group.create_task(server_cancels(), name="server")
        group.create_task(client(), name="client")


async def racy() -> None:
    await _conversation(wait_for_confirmation=False)


async def fixed() -> None:
    await _conversation(wait_for_confirmation=True)
