"""The cost floor for virtual-time asyncio: the smallest loop that can do it.

About sixty lines: ``BaseEventLoop`` with a float virtual ``time()``, a heap
of timers, and a ``_run_once`` that jumps to the next timer when nothing is
ready. No determinism guarantees (float ties, heap order), no trace, no
deadlock detection, no escapes. ``benchmarks/kernel.py`` compares agentsim
against it: whatever agentsim costs above this is the price of its features.

:class:`TunedMinimalLoop` is the honest floor: the same loop with the two
handle tweaks any virtual loop can make (handles built without asyncio's
per-handle debug-mode checks, and ``call_soon`` skipping them too), and
timers kept as ``(when, sequence, handle)`` tuples so that the heap
compares numbers instead of calling ``TimerHandle.__lt__``.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
import random
from asyncio import events
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class MinimalVirtualLoop(asyncio.BaseEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self._virtual_now = 0.0

    def time(self) -> float:
        return self._virtual_now

    def call_at(self, when: float, callback: Callable[..., object], *args: Any, context: Any = None) -> events.TimerHandle:
        timer = events.TimerHandle(when, callback, args, self, context)
        heapq.heappush(self._scheduled, timer)
        timer._scheduled = True
        return timer

    def _write_to_self(self) -> None:
        pass

    def _process_events(self, event_list: Any) -> None:
        pass

    def _run_ready(self) -> None:
        for _ in range(len(self._ready)):
            handle = self._ready.popleft()
            if not handle._cancelled:
                handle._run()

    def _run_once(self) -> None:
        scheduled = self._scheduled
        while scheduled and scheduled[0]._cancelled:
            heapq.heappop(scheduled)._scheduled = False
        if not self._ready:
            if not scheduled:
                raise RuntimeError("deadlock")
            self._virtual_now = max(self._virtual_now, scheduled[0]._when)
        while scheduled and scheduled[0]._when <= self._virtual_now:
            handle = heapq.heappop(scheduled)
            handle._scheduled = False
            self._ready.append(handle)
        self._run_ready()


class _Handle(events.Handle):
    __slots__ = ()

    def __init__(self, callback: Callable[..., object], args: tuple[Any, ...], loop: Any, context: Any) -> None:
        self._context = contextvars.copy_context() if context is None else context
        self._loop, self._callback, self._args = loop, callback, args
        self._cancelled, self._repr, self._source_traceback = False, None, None


class _TimerHandle(events.TimerHandle):
    __slots__ = ()

    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...], loop: Any, context: Any) -> None:
        self._context = contextvars.copy_context() if context is None else context
        self._loop, self._callback, self._args = loop, callback, args
        self._cancelled, self._repr, self._source_traceback = False, None, None
        self._when, self._scheduled = when, True


class TunedMinimalLoop(MinimalVirtualLoop):
    def __init__(self) -> None:
        super().__init__()
        self._timers: list[tuple[float, float, events.TimerHandle]] = []
        #: Breaks ties between timers due together: scheduling order here.
        self._next_sequence: Callable[[], float] = itertools.count().__next__

    def call_soon(self, callback: Callable[..., object], *args: Any, context: Any = None) -> events.Handle:
        handle = _Handle(callback, args, self, context)
        self._ready.append(handle)
        return handle

    def _call_soon(self, callback: Callable[..., object], args: Any, context: Any) -> events.Handle:
        handle = _Handle(callback, args, self, context)
        self._ready.append(handle)
        return handle

    def call_at(self, when: float, callback: Callable[..., object], *args: Any, context: Any = None) -> events.TimerHandle:
        timer = _TimerHandle(when, callback, args, self, context)
        heapq.heappush(self._timers, (when, self._next_sequence(), timer))
        return timer

    def _run_once(self) -> None:
        timers = self._timers
        while timers and timers[0][2]._cancelled:
            heapq.heappop(timers)[2]._scheduled = False
        if not self._ready:
            if not timers:
                raise RuntimeError("deadlock")
            self._virtual_now = max(self._virtual_now, timers[0][0])
        while timers and timers[0][0] <= self._virtual_now:
            handle = heapq.heappop(timers)[2]
            handle._scheduled = False
            self._ready.append(handle)
        self._run_ready()


class ShuffledTunedLoop(TunedMinimalLoop):
    """The tuned loop waking the timers due together in a seeded random order.

    Waking thousands of tasks in a random order costs more than in creation
    order on any loop (their frames and futures are no longer visited in
    the order they lie in memory): this is the floor a random schedule
    compares to, where the plain floor flatters it.
    """

    def __init__(self, seed: int = 1) -> None:
        super().__init__()
        # Timers due together pop in the order of their tie-breaking keys:
        # random keys instead of a counter shuffle every instant's wake-ups.
        self._next_sequence = random.Random(seed).random


def run_minimal(main: Callable[[], Awaitable[T]], *, tuned: bool = False, shuffled: bool = False) -> T:
    """Run ``main()`` on the minimal loop (``tuned``: :class:`TunedMinimalLoop`;
    ``shuffled``: :class:`ShuffledTunedLoop`)."""
    loop: asyncio.BaseEventLoop = ShuffledTunedLoop() if shuffled else TunedMinimalLoop() if tuned else MinimalVirtualLoop()
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()
