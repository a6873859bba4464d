"""anyio's clock and sleeps, without anyio's per-call backend lookup.

anyio asks sniffio which library is running on every call: four Python
calls before the sleep itself. The doubles sleep once per 20 ms frame or
audio chunk, 180,000 times in a simulated hour, so they use these instead.
On asyncio they do exactly what anyio's asyncio backend does (read the
running loop, ``asyncio.sleep``); anywhere else they are anyio's own.
"""

from __future__ import annotations

import asyncio

import anyio

_running_loop = asyncio._get_running_loop


def current_time() -> float:
    """``anyio.current_time()``."""
    loop = _running_loop()
    return loop.time() if loop is not None else anyio.current_time()


async def sleep(seconds: float) -> None:
    """``anyio.sleep(seconds)``."""
    if _running_loop() is not None:
        await asyncio.sleep(seconds)
    else:
        await anyio.sleep(seconds)


async def sleep_until(deadline: float) -> None:
    """``anyio.sleep_until(deadline)``: at once (a checkpoint) if it has passed."""
    loop = _running_loop()
    if loop is not None:
        await asyncio.sleep(deadline - loop.time())
    else:
        await anyio.sleep_until(deadline)
