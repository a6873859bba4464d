"""A first-in first-out inbox with one reader, for asyncio doubles.

A double's connection buffers what arrived until its reader takes it (a
WebSocket's received frames, a transport's pending deliveries). An
``asyncio.Queue`` does that for many readers and writers with bounds and
``join``: on a long call its bookkeeping costs more than the double's own
work per frame. This keeps what one reader needs, and wakes that reader the
way the queue does (its future gets a result when an item arrives, so it
runs at the next batch), so a schedule is the same with either.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

__all__ = ["Inbox"]

T = TypeVar("T")


class Inbox(Generic[T]):
    """``put_nowait``, ``get``, ``get_nowait`` and ``empty`` of an unbounded
    ``asyncio.Queue`` read by one task at a time::

        inbox: Inbox[str] = Inbox()
        inbox.put_nowait("frame")
        assert await inbox.get() == "frame"
    """

    __slots__ = ("items", "_waiter")

    def __init__(self) -> None:
        #: What arrived and was not taken yet, oldest first (a reader on a hot
        #: path may take from it directly, after ``await inbox.wait()``).
        self.items: deque[T] = deque()
        #: The reader's future while it waits for an item.
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: T) -> None:
        """Add ``item``; wake the reader if it waits."""
        self.items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():  # (cancelled with its reader)
                waiter.set_result(None)

    def wait(self) -> asyncio.Future[None]:
        """A future that gets its result when an item arrives (for a reader
        that found the inbox empty: ``await inbox.wait()``, then take it)."""
        if self._waiter is not None and not self._waiter.done():
            raise RuntimeError("Inbox has one reader: another task is already waiting")
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        return waiter

    async def get(self) -> T:
        """The first item, once there is one."""
        while not self.items:
            await self.wait()
        return self.items.popleft()

    def get_nowait(self) -> T:
        """The first item; ``asyncio.QueueEmpty`` if there is none."""
        if not self.items:
            raise asyncio.QueueEmpty
        return self.items.popleft()

    def empty(self) -> bool:
        return not self.items

    def __len__(self) -> int:
        return len(self.items)
