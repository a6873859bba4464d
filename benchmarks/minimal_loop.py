"""The cost floor for virtual-time asyncio: the smallest loop that can do it.

About sixty lines: ``BaseEventLoop`` with a float virtual ``time()``, a heap
of timers, and a ``_run_once`` that jumps to the next timer when nothing is
ready. No determinism guarantees (float ties, heap order), no trace, no
deadlock detection, no escapes. ``benchmarks/kernel.py`` compares agentsim
against it: whatever agentsim costs above this is the price of its features.
"""

from __future__ import annotations

import asyncio
import heapq
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
        for _ in range(len(self._ready)):
            handle = self._ready.popleft()
            if not handle._cancelled:
                handle._run()


def run_minimal(main: Callable[[], Awaitable[T]]) -> T:
    loop = MinimalVirtualLoop()
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()
