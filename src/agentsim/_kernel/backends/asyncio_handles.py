# Handles and tasks of the virtual loop: asyncio's own classes with their
# private slots set directly (see asyncio_loop.py's note).
# mypy: disable-error-code="attr-defined,override,union-attr"
"""The virtual asyncio loop's handles and tasks.

Handles are built on every wake-up, so they skip asyncio's debug-mode work;
tasks get per-simulation names (``Task-1`` …) and hashes equal to their
creation number, so sets of tasks iterate in the same order in every process.
"""

from __future__ import annotations

import asyncio
import contextvars
import types
from asyncio import events
from collections.abc import Callable
from typing import Any, Final

from ..errors import TaskSnapshot
from ..scheduling.windows import WindowedTimer
from ..tracing.snapshots import snapshot_task


def _current_task_lookup() -> Callable[[Any], Any]:
    # Python 3.11's asyncio.current_task is Python code around a lookup in
    # the dict the C tasks keep up to date; read that dict directly then.
    # (3.12+ has current_task in C.)
    tasks_by_loop = getattr(asyncio.tasks, "_current_tasks", None)
    if isinstance(asyncio.current_task, types.FunctionType) and isinstance(tasks_by_loop, dict):
        return tasks_by_loop.get
    return asyncio.current_task


#: ``asyncio.current_task(loop)``, the fastest way this Python offers.
current_task: Final = _current_task_lookup()
class VirtualHandle(events.Handle):
    """``Handle`` without the per-handle debug-mode checks (this loop has no
    debug mode). Built on every wake-up, so only by the loop's ``call_soon``,
    slot by slot, without a constructor's frame."""

    __slots__ = ()


class VirtualTimerHandle(events.TimerHandle):
    """``TimerHandle`` without the debug-mode checks; ``when`` is the float of
    its tick. (The loop's ``call_later``, every sleep's, builds it slot by
    slot as this constructor does: keep them alike.)"""

    __slots__ = ()

    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...], loop: Any, context: Any) -> None:
        self._context = contextvars.copy_context() if context is None else context
        self._loop = loop
        self._callback = callback
        self._args = args
        self._cancelled = False
        self._repr = None
        self._source_traceback = None
        self._when = when
        self._scheduled = True

    def cancel(self) -> None:
        # TimerHandle.cancel and Handle.cancel in one frame, without the
        # debug-mode check: every asyncio.sleep cancels its timer on the way out.
        if not self._cancelled:
            if self._scheduled:
                self._loop._cancelled_timers += 1  # the loop's _timer_handle_cancelled, inlined
            self._cancelled = True
            self._callback = None  # type: ignore[assignment]
            self._args = None  # type: ignore[assignment]


class LateTimerHandle(VirtualTimerHandle):
    """A timer whose float deadline lies a fraction of a nanosecond after its tick.

    ``call_at(when)`` rounds ``when`` to the nearest tick; when that rounds
    down, the loop fires the timer at a ``time()`` just below ``when``. Code
    that re-checks its deadline in the callback (anyio's cancel scopes do:
    ``if loop.time() >= deadline: cancel() else: call_at(deadline, ...)``)
    would re-arm forever. So while this callback runs, ``time()`` reads
    ``when`` itself; everything else keeps seeing the exact tick.
    """

    __slots__ = ()

    def _run(self) -> None:
        loop = self._loop
        exact = loop._now
        loop._now = self._when
        try:
            events.Handle._run(self)
        finally:
            loop._now = exact


class WindowTimerHandle(VirtualTimerHandle):
    """A timer with a window (``loop.call_window``); ``when()`` is its nominal instant."""

    __slots__ = ("_window",)

    _window: WindowedTimer

    def cancel(self) -> None:
        if not self._cancelled:
            self._loop._timer_handle_cancelled(self)
        events.Handle.cancel(self)


def trace_label(name: str, number: int, coro: Any) -> str:
    """A task's name in traces: unique per simulation, and saying what the task
    runs when nobody named it (``Session._process_events#11``, not ``Task-11``)."""
    if name == "main":
        return name
    if name == f"Task-{number}":
        return f"{getattr(coro, '__qualname__', None) or 'Task'}#{number}"
    return f"{name}#{number}"


class SimTask(asyncio.Task[Any]):
    """A task whose hash is its creation number in the simulation (see module doc)."""

    def __init__(self, coro: Any, *, loop: asyncio.AbstractEventLoop, name: str, context: Any, number: int, **eager: bool) -> None:
        # Set before Task.__init__, which adds the task to a weak set (hashing it).
        self._agentsim_number = number
        #: The task's name in traces: unique even when libraries reuse names
        #: (anyio names every task after its function).
        self._agentsim_label = trace_label(name, number, coro)
        super().__init__(coro, loop=loop, name=name, context=context, **eager)

    def __hash__(self) -> int:
        return self._agentsim_number

    def set_name(self, value: object) -> None:
        # TaskGroup.create_task(name=...) names the task after creating it.
        super().set_name(value)
        self._agentsim_label = f"{value}#{self._agentsim_number}"

    #: Where the program's cancellation found the task (for the swallowed-cancellation check).
    _agentsim_cancelled_at: TaskSnapshot | None = None

    def cancel(self, msg: Any = None) -> bool:
        # Cancellations (timeouts included) go on the timeline, with who asked.
        if not self.done():
            loop = self.get_loop()
            canceller = current_task(loop)
            loop._record(loop._clock.ticks, "cancel", self._agentsim_label, f"by {task_label(canceller)}" if canceller else "")
            if self._agentsim_cancelled_at is None and not loop.cleaning_up:
                self._agentsim_cancelled_at = snapshot_task(self)
        return super().cancel(msg)


def settle_later(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    # Delivered one loop turn later, as a worker thread's result would be: the
    # awaiting task suspends once, and can be cancelled meanwhile.
    if future.cancelled():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


def task_label(task: asyncio.Task[Any] | None) -> str:
    """A task's name in traces ("" for None)."""
    if task is None:
        return ""
    return task._agentsim_label if task.__class__ is SimTask else task.get_name()



