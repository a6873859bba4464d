"""A one-way link with latency that never reorders, like a TCP stream.

Doubles that model a network (the simulated Realtime server's connection,
the player's path to the device) need jittered latency *and* in-order
delivery. Scheduling one timer per message gives the first but not the
second: messages due at the same virtual instant are exactly what the
explorer's scheduling policy is free to reorder. So a link keeps its messages
in one queue and a single timer delivers everything due, in send order.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from .timing import DelaySource


class OrderedLink:
    """Deliver actions after a per-message delay, in the order they were sent.

    Each message departs ``delay.seconds(n)`` after it was sent, but never
    before the message sent ahead of it: jitter delays, never reorders::

        link = OrderedLink(DelaySource(uniform(0.01, 0.05), name="latency", stream="net"))
        link.send(lambda: inbox.append("first"))
        link.send(lambda: inbox.append("second"))   # arrives no earlier than "first"
    """

    def __init__(self, delay: DelaySource) -> None:
        self._delay = delay
        self._sent = 0
        self._queue: deque[tuple[float, Callable[[], None]]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._delivering = False
        #: Virtual time at which the last message sent so far arrives.
        self.free_at = 0.0

    def send(self, action: Callable[[], None]) -> float:
        """Schedule ``action`` to run on arrival; returns the arrival time."""
        loop = asyncio.get_running_loop()
        arrive = max(loop.time() + self._delay.seconds(self._sent), self.free_at)
        self._sent += 1
        self.free_at = arrive
        self._queue.append((arrive, action))
        if self._timer is None and not self._delivering:
            self._timer = loop.call_at(arrive, self._deliver_due)
        return arrive

    def clear(self) -> None:
        """Drop everything in flight (a cut connection, a flushed buffer)."""
        self._queue.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @property
    def in_flight(self) -> int:
        return len(self._queue)

    def _deliver_due(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = None
        self._delivering = True  # an action may send on this link: no second timer
        try:
            while self._queue and self._queue[0][0] <= loop.time():
                _, action = self._queue.popleft()
                action()
        finally:
            self._delivering = False
            if self._queue and self._timer is None:
                self._timer = loop.call_at(self._queue[0][0], self._deliver_due)
