# This module subclasses asyncio's loop and handles on purpose: it uses their
# private state (_ready, _stopping, handle slots), which typeshed does not
# declare, keeps its due timers in a list or an (untyped) SortedList, and
# overrides methods whose stub signatures are stricter than asyncio.
# mypy: disable-error-code="attr-defined,override,union-attr"
"""An asyncio event loop that runs on virtual time.

It is ``asyncio.BaseEventLoop`` with three things replaced:

* **Time.** ``time()`` reads the simulation's integer-tick clock. Timers live in
  a heap of ``(tick, sequence, handle, creator)``; when the ready queue is
  empty the clock jumps straight to the earliest timer. There is no selector:
  nothing real can ever become ready, so there is nothing to poll.
* **Order.** The ready queue stays FIFO, exactly as in asyncio. The only
  freedom a real loop has without I/O is *when* each timer due at the same
  instant fires relative to the others and to the work already queued;
  under a non-FIFO policy that is asked at each step (see ``policy.py``).
* **Escapes.** Executor work (``asyncio.to_thread``) runs inline while virtual
  time stands still; DNS lookups and other real I/O raise
  :class:`~agentsim.SimulationEscapeError`.

Tasks get per-simulation names (``Task-1`` …) and hashes equal to their
creation number, so sets of tasks (anyio keeps its cancel scopes' tasks in
sets) iterate in the same order in every process.
"""

from __future__ import annotations

import asyncio
import itertools
import types
from asyncio import events
from bisect import insort
from collections.abc import Callable
from contextvars import copy_context
from heapq import heapify, heappop, heappush
from operator import itemgetter
from typing import Any, Final, TypeAlias

from sortedcontainers import SortedList

from ..clock import TICKS_PER_SECOND, seconds_to_ticks, window_ticks
from ..core import SimulationCore
from ..errors import SimulationEscapeError, SwallowedCancellationWarning
from ..scheduling.delays import landed
from ..scheduling.kinds import CONTINUE
from .asyncio_handles import (
    LateTimerHandle,
    SimTask,
    VirtualHandle,
    VirtualTimerHandle,
    WindowTimerHandle,
    current_task,
    settle_later,
    task_label,
    trace_label,
)
from ..tracing.snapshots import caller_site, describe_callable, snapshot_task
from ..scheduling.windows import WindowedTimer, WindowedTimers

__all__ = ["VirtualEventLoop", "current_task", "task_label", "trace_label"]

#: Check the wall clock, chunk the trace and compact the timer heap once per
#: this many loop turns (kept off the per-turn path).
_MAINTAIN_EVERY: Final = 2048

#: Rebuild the timer heap when more than this many entries are cancelled and
#: they are over half of it (asyncio's own rule, which keeps memory bounded
#: under heavy ``wait_for``/``timeout`` use).
_MIN_CANCELLED_FOR_COMPACTION: Final = 100

TimerEntry = tuple[int, int, events.TimerHandle, str]

#: A policy fires the due timers of an instant one at a time, any of them
#: next: removing the i-th of a list moves everything after it (O(n), but one
#: memmove in C). So a due list longer than this becomes a ``SortedList``
#: (O(log n) removal, but each of its operations Python code) until it is
#: back under the lower bound. Measured in wall time (random, every wake-up
#: a tie): the list is 15-20% faster per wake-up at 10,000 and still 10% at
#: 25,000 timers due together; a bare pop breaks even near 30,000.
_SORTED_DUE_ABOVE: Final = 16384
_LISTED_DUE_BELOW: Final = 4096
DueTimers: TypeAlias = "list[TimerEntry] | SortedList"
_INFINITY: Final = float("inf")
#: Delays and instants from here on never fire, as infinity does: the clock
#: counts integer nanoseconds, and a float this large times 1e9 overflows.
_NEVER: Final = 1e290
#: A timer entry's scheduling order.
_SEQUENCE: Final = itemgetter(1)

#: asyncio's eager task factory (Python 3.12+), None before.
_EAGER_TASK_FACTORY: Final = getattr(asyncio, "eager_task_factory", None)
_FunctionType = types.FunctionType
#: Handles are built slot by slot (see call_soon).
_new_object: Final = object.__new__


def _no_process(api: str) -> None:
    """Report a process the program started: an escape, and even when the user
    allows subprocesses, the virtual loop has no process machinery to run it."""
    import sys

    from ..patches.escapes import escape
    from ..frames import first_program_frame, frame_site

    escape("subprocess", api)
    frame = first_program_frame(sys._getframe(1))
    raise SimulationEscapeError("subprocess", f"{api} (allowed, but the virtual loop runs no processes)", frame_site(frame) if frame else "")


class VirtualEventLoop(asyncio.BaseEventLoop):
    """The asyncio loop of one simulation. Create through the asyncio backend."""

    def __init__(self, core: SimulationCore) -> None:
        super().__init__()
        self._core = core
        self._clock = core.clock
        self._now = 0.0
        #: True once the kernel itself cancels tasks (an abort, the leftovers
        #: after main): those cancellations are not the program's to honour.
        self.cleaning_up = False
        #: This loop's unfinished tasks, by creation order: asyncio.all_tasks
        #: scans a process-wide weak set, which costs per run what every
        #: other simulation's tasks left behind.
        self._live_tasks: dict[asyncio.Task[Any], None] = {}
        self._timers: list[TimerEntry] = []
        self._timer_sequence = itertools.count()
        self._cancelled_timers = 0
        #: Timers with windows (``call_window``), fired when time must move.
        self._windows = WindowedTimers()
        #: Timers due now that a non-FIFO policy has not fired yet, in (tick, sequence) order.
        self._due: DueTimers = []
        #: The run's decisions (scheduling/chooser.py): the loop asks it where
        #: its order is open and never knows which strategy runs.
        chooser = core.chooser
        self._chooser = chooser
        #: The options of a timer choice: one view, refreshed at each choice
        #: (ranked when the chooser ranks options).
        self._timer_options = chooser.timer_options(self._due)
        self._ranks_options = chooser.ranks_options
        #: Callbacks of the current batch not yet run (non-FIFO policies only).
        self._batch_left = 0
        self._fifo = core.policy.fifo
        #: Each windowed timer is also a "delay" choice (scheduling/delays.py).
        self._times_delays = core.policy.times_delays and not self._fifo
        self._record = core.trace.record
        self._append_event = core.trace.append_raw
        #: The choice log's and the deviations' appends (trace.py, choices.py).
        self._record_choice = core.trace.choices.pending.extend
        self._append_deviation = core.trace.append_deviation
        self._task_numbers = itertools.count(1)
        self._countdown = _MAINTAIN_EVERY
        #: Called when no callback is ready and no timer is left.
        self.on_idle: Callable[[], None] = self.stop
        self.set_debug(self._debug)

    def set_debug(self, enabled: bool) -> None:
        super().set_debug(enabled)
        # Every future asks (asyncio's C Future calls loop.get_debug() when
        # built: once per sleep). Outside debug mode, answer with a C call
        # returning False instead of a Python frame.
        if enabled:
            self.__dict__.pop("get_debug", None)
        else:
            self.get_debug = bool  # type: ignore[method-assign]

    # -- time ----------------------------------------------------------------

    def time(self) -> float:
        return self._now

    def _past_limit(self, ticks: int) -> None:
        """Time would pass ``max_virtual_time`` (the clock refused to move to
        ``ticks``): end the run."""
        self._core.abort(self._limit_error(ticks))
        if not self._ready:
            self.on_idle()

    def call_soon(self, callback: Callable[..., object], *args: Any, context: Any = None) -> events.Handle:
        if self._closed:
            raise RuntimeError("Event loop is closed")
        # The one place handles are built (every wake-up comes here: a
        # future's result schedules its task). Built slot by slot, as
        # Handle.__init__ would without debug mode: a constructor's frame
        # costs ~4% of a wake-up.
        handle = _new_object(VirtualHandle)
        handle._context = copy_context() if context is None else context
        handle._loop = self
        handle._callback = callback
        handle._args = args
        handle._cancelled = False
        handle._repr = None
        handle._source_traceback = None
        self._ready.append(handle)
        return handle

    def _call_soon(self, callback: Callable[..., object], args: tuple[Any, ...], context: Any) -> events.Handle:
        return self.call_soon(callback, *args, context=context)

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any, context: Any = None) -> events.TimerHandle:
        # Every asyncio.sleep() comes here, so _schedule_timer is inlined.
        if delay is None:
            raise TypeError("delay must not be None")
        if self._closed:
            raise RuntimeError("Event loop is closed")
        if delay >= _NEVER:
            return self._never(callback, args, context)
        ticks = self._clock.ticks_after(delay)  # (clock.py: the rounding rule)
        # VirtualTimerHandle(...) built slot by slot, as call_soon builds its
        # handles (keep alike with VirtualTimerHandle.__init__, which the
        # other, rarer timers use).
        handle = _new_object(VirtualTimerHandle)
        handle._context = copy_context() if context is None else context
        handle._loop = self
        handle._callback = callback
        handle._args = args
        handle._cancelled = False
        handle._repr = None
        handle._source_traceback = None
        handle._when = ticks / TICKS_PER_SECOND
        handle._scheduled = True
        # The creator labels policy choices; FIFO asks no policy, so skip it.
        # (task_label inlined for the usual creator, a simulation's task.)
        creator = "" if self._fifo else (task._agentsim_label if (task := current_task(self)).__class__ is SimTask else task_label(task))
        heappush(self._timers, (ticks, next(self._timer_sequence), handle, creator))
        return handle

    def call_at(self, when: float, callback: Callable[..., object], *args: Any, context: Any = None) -> events.TimerHandle:
        if when is None:
            raise TypeError("when cannot be None")
        if when >= _NEVER:
            return self._never(callback, args, context)
        ticks = seconds_to_ticks(when)
        if ticks / TICKS_PER_SECOND < when:
            return self._schedule_timer(ticks, callback, args, context, when=when)
        return self._schedule_timer(ticks, callback, args, context)

    def _never(self, callback: Callable[..., object], args: tuple[Any, ...], context: Any) -> events.TimerHandle:
        """A timer at infinity (``anyio.sleep_forever``, ``timeout(math.inf)``,
        or a delay past what the clock can count, ``sleep(1e300)``):
        it never fires, so it is kept nowhere; the loop can still go idle and a
        program waiting only on it is a deadlock, as it would be for real."""
        if self._closed:
            raise RuntimeError("Event loop is closed")
        handle = VirtualTimerHandle(_INFINITY, callback, args, self, context)
        handle._scheduled = False
        return handle

    def _schedule_timer(self, ticks: int, callback: Callable[..., object], args: tuple[Any, ...], context: Any, *, when: float | None = None) -> events.TimerHandle:
        if self._closed:
            raise RuntimeError("Event loop is closed")
        if when is None:
            handle: events.TimerHandle = VirtualTimerHandle(ticks / TICKS_PER_SECOND, callback, args, self, context)
        else:
            handle = LateTimerHandle(when, callback, args, self, context)
        creator = "" if self._fifo else task_label(current_task(self))
        heappush(self._timers, (ticks, next(self._timer_sequence), handle, creator))
        return handle

    def call_window(
        self, earliest: float, nominal: float, latest: float, callback: Callable[..., object], *args: Any, context: Any = None
    ) -> events.TimerHandle:
        """Call ``callback(*args)`` once, at some instant between ``earliest`` and
        ``latest`` seconds from now; ``nominal`` is where nominal timing puts it.

        Which instant, relative to the other pending timers, is the scheduling
        policy's choice (see ``windows.py``); FIFO takes ``nominal``.
        """
        if self._closed:
            raise RuntimeError("Event loop is closed")
        now = self._clock.ticks
        low, middle, high = window_ticks(now, earliest, nominal, latest)
        if low == high:
            return self._schedule_timer(low, callback, args, context)
        if self._fifo and middle > now:
            # FIFO fires a window at its nominal instant, with the timers due
            # then, in scheduling order: exactly what a point timer there does.
            # (Not a window nominally due now: that one fires once the instant
            # is idle, which a point timer would not wait for.)
            return self._schedule_timer(middle, callback, args, context)
        handle = WindowTimerHandle(middle / TICKS_PER_SECOND, callback, args, self, context)
        # The creator labels policy choices; FIFO asks no policy, so skip it.
        creator = "" if self._fifo else task_label(current_task(self))
        handle._window = self._windows.add(low, middle, high, next(self._timer_sequence), handle, creator)
        return handle

    def _timer_handle_cancelled(self, handle: events.TimerHandle) -> None:
        if handle.__class__ is WindowTimerHandle:
            self._windows.remove(handle._window)
        elif handle._scheduled:
            self._cancelled_timers += 1

    # -- the loop ------------------------------------------------------------

    def _run_once(self) -> None:
        ready = self._ready
        timers = self._timers
        if not ready and not self._due and not self._batch_left:
            # Nothing runnable: jump the clock to the earliest live timer.
            while timers and timers[0][2]._cancelled:
                heappop(timers)[2]._scheduled = False
                self._cancelled_timers -= 1
            if self._windows.count and self._fire_windowed():
                pass  # the clock moved to the chosen windowed timer (or the limit)
            elif not timers:
                self.on_idle()
                return
            elif self._clock.move_to(ticks := timers[0][0]):
                self._now = self._clock.ticks / TICKS_PER_SECOND
            else:
                self._past_limit(ticks)
                return
        if not self._fifo:
            now = self._clock.ticks
            self._append_event(now)  # the tick of the task steps recorded below (compact form)
            # Most instants leave the policy nothing to decide: they run as
            # on the FIFO path, without the general loop's set-up.
            if (
                self._due
                or self._batch_left
                # (A choice at once, as _run_batches_without_choices would find
                # first: a due timer and a ready callback, or two due timers.)
                or (timers and timers[0][0] <= now and (ready or (len(timers) > 1 and timers[1][0] <= now) or (len(timers) > 2 and timers[2][0] <= now)))
                or not self._run_batches_without_choices(now)
            ):
                self._run_instant_with_policy(now)
            return
        # FIFO, asyncio's own rule: fire every due timer in schedule order,
        # then run the batch that was ready at that point; repeat while this
        # instant has work (saving a trip through run_forever per batch).
        now = self._clock.ticks
        append_event = self._append_event
        append_event(now)  # the tick of the task steps recorded below
        while True:
            self._countdown -= 1
            if not self._countdown:
                self._maintain()
                timers = self._timers  # compaction may have replaced the heap
            # (Timer firings are not traced here: under FIFO their order is
            # fixed, and the task steps they cause are.)
            while timers and timers[0][0] <= now:
                handle = heappop(timers)[2]
                handle._scheduled = False
                if handle._cancelled:
                    self._cancelled_timers -= 1
                    continue
                ready.append(handle)
            # The batch, as _run_ready runs it (inlined: see there).
            for _ in range(len(ready)):
                handle = ready.popleft()
                if not handle._cancelled:
                    callback = handle._callback
                    if callback.__class__ is not _FunctionType:
                        owner = getattr(callback, "__self__", None)
                        if owner.__class__ is SimTask:
                            append_event(owner._agentsim_label)
                    handle._run()
            if not ready or self._stopping:
                return

    def _run_ready(self, count: int, append_event: Callable[[Any], None]) -> None:
        """Run the first ``count`` callbacks of the ready queue (a batch, or one
        step of it), each task step on the trace.

        The hot paths run the same loop inline (the FIFO turn, the policy
        loop's single step, ``_run_batches_without_choices``): a call per
        batch or step costs 2-5% of a wake-up there. Keep the copies alike."""
        ready = self._ready
        for _ in range(count):
            handle = ready.popleft()
            if not handle._cancelled:
                # Task steps are the schedule: record which task ran, in order.
                # (Plain functions are timer callbacks: skip the failing lookup.)
                callback = handle._callback
                if callback.__class__ is not _FunctionType:
                    owner = getattr(callback, "__self__", None)
                    if owner.__class__ is SimTask:
                        append_event(owner._agentsim_label)
                handle._run()

    def _fire_windowed(self) -> bool:
        """Time must move and windowed timers are pending: pick what fires next.

        Returns False when no windowed timer can fire before the first point
        timer (the caller then jumps to it as usual). Otherwise the clock
        moves to the chosen option's instant and a chosen windowed timer is
        queued first (FIFO: ready; policy: due), ahead of point timers due
        at the same instant, because it was chosen to be first.
        """
        timers = self._timers
        clock = self._clock
        if timers:
            top = timers[0]
            options = self._windows.options(clock.ticks, top[0], top[1], top[3] or "-")
        else:
            options = self._windows.options(clock.ticks, None, 0, "")
        if options is None:
            return False
        in_order = options.in_order
        chosen = 0
        if len(in_order) > 1 and not self._fifo:
            chosen = self._chooser.window(options)
        elif self._times_delays and in_order[0].timer is not None:
            in_order[0] = landed(self._chooser, in_order[0], clock.ticks)  # alone: where it lands (delays.py)
        option = in_order[chosen]
        if not clock.move_to(option.at):
            self._past_limit(option.at)
            return True
        self._now = clock.ticks / TICKS_PER_SECOND
        if chosen:
            fired = [option]  # picked out of nominal order: it goes alone, first
        else:
            # Nominal timing: every timer nominally due now fires in this
            # batch, in scheduling order, as plain timers of one instant do.
            nominal = option.nominal
            fired = []
            for other in in_order:
                if other.nominal != nominal:
                    break
                fired.append(other)
        entries: list[TimerEntry] = []
        for each in fired:
            timer = each.timer
            if timer is not None:
                self._windows.remove(timer)
                timer.payload._scheduled = False
                entries.append((each.at, timer.sequence, timer.payload, timer.label))
            elif not chosen:
                while timers and timers[0][0] == each.at:
                    entry = heappop(timers)
                    entry[2]._scheduled = False
                    if entry[2]._cancelled:
                        self._cancelled_timers -= 1
                    else:
                        entries.append(entry)
        if len(entries) > 1:
            entries.sort(key=_SEQUENCE)
        if self._fifo:
            self._ready.extend(entry[2] for entry in entries)
        else:
            due = self._due
            for entry in entries:
                if due.__class__ is list and not due and not self._ranks_options:
                    due.append(entry)  # (_add_due's usual case here: nothing due yet, nothing ranked)
                else:
                    self._add_due(entry)
        return True

    def _maintain(self) -> None:
        """Every few thousand turns: wall clock, trace chunking, heap compaction."""
        self._countdown = _MAINTAIN_EVERY
        self._core.trace.flush_if_large()
        if self._cancelled_timers > _MIN_CANCELLED_FOR_COMPACTION and self._cancelled_timers * 2 > len(self._timers):
            live = []
            for entry in self._timers:
                if entry[2]._cancelled:
                    entry[2]._scheduled = False
                else:
                    live.append(entry)
            heapify(live)
            self._timers = live
            self._cancelled_timers = 0
        if self._core.wall_time_exceeded():
            self._core.abort(self._core.wall_timeout_error())

    def _run_instant_with_policy(self, now: int) -> None:
        """This instant's steps when the chooser decides, in this one turn: each
        fires a due timer or runs one callback. The ready queue is never
        reordered (it holds what already-run work caused, in order); only
        timers due now enter it, at a point of the chooser's choosing, as a
        late-firing timer would. Steps keep asyncio's batches (timers falling
        due mid-batch wait for the next), so always taking the stock option
        reproduces the FIFO path exactly: a schedule is "FIFO plus deviations".
        """
        due, ready = self._due, self._ready
        options, decide = self._timer_options, self._chooser.timer
        append_event, record_choice, append_deviation = self._append_event, self._record_choice, self._append_deviation
        # The last timer choice was "continue the batch" and the due timers
        # are unchanged since (a chooser may repeat its answer: chooser.py).
        unchanged = False
        # Callbacks of the current batch not yet run, kept in a local while
        # this instant runs (nothing else changes it meanwhile).
        batch_left = self._batch_left
        # How many timers are due: only collecting a batch adds to them, only
        # firing one takes one (len() of a SortedList is a Python call).
        count = len(due)
        try:
            while True:
                if not batch_left:
                    # A new batch: what is ready now, plus the timers due now.
                    self._countdown -= 1
                    if not self._countdown:
                        self._maintain()
                    if (timers := self._timers) and timers[0][0] <= now:
                        due = self._collect_due(now)
                        unchanged = False  # (the options change with the due timers)
                    elif due.__class__ is not list and len(due) < _LISTED_DUE_BELOW:
                        due = self._set_due(list(due))  # (back to a list: see _SORTED_DUE_ABOVE)
                    count = len(due)
                    batch_left = len(ready)
                if count:
                    if not batch_left and count == 1:
                        chosen = 0  # nothing to decide: the only due timer fires
                    else:
                        fifo = 1 if batch_left else 0  # (the stock option fires the first due timer)
                        chosen = decide(count + fifo, fifo, unchanged)
                        # Recorded here, for every strategy (chooser.py), compactly (trace.py).
                        record_choice((0, count + fifo, chosen, fifo))
                        if chosen != fifo:  # a deviation (trace.py)
                            append_event(None)
                            append_deviation((now, "choice", CONTINUE if fifo and not chosen else due[chosen - fifo][3], "timer", chosen, count + fifo, fifo, due[0][3]))
                        # Continuing leaves the options as they are (the due
                        # timers wait, the batch only shrinks).
                        unchanged = not chosen and fifo == 1
                    if not batch_left or chosen:
                        # Fire a due timer: it joins the ready queue, and the
                        # batch (as in asyncio); one cancelled meanwhile does
                        # nothing. Not traced: the choice log says which fired.
                        entry = due.pop(chosen - 1 if batch_left else chosen)
                        count -= 1
                        handle = entry[2]
                        handle._scheduled = False
                        if options.heap is not None:
                            if count:
                                options.heap.remove((entry[0], entry[1]))
                            else:
                                options.heap = None  # none due: back to scanning
                        if handle._cancelled:
                            self._cancelled_timers -= 1
                        else:
                            ready.append(handle)
                            batch_left += 1
                            continue  # something to run: no need to look further
                    else:
                        # One step of the batch, as _run_ready(1) runs it (inlined:
                        # PCT's "continue" comes here ~2 times per wake-up).
                        batch_left -= 1
                        handle = ready.popleft()
                        if not handle._cancelled:
                            callback = handle._callback
                            if callback.__class__ is not _FunctionType:
                                owner = getattr(callback, "__self__", None)
                                if owner.__class__ is SimTask:
                                    append_event(owner._agentsim_label)
                            handle._run()
                else:
                    # Nothing to decide until the batch ends (timers falling due
                    # meanwhile wait for the next one): run it as FIFO does;
                    # and the batches after it, as long as they leave nothing
                    # to decide (most of an instant's, once its timers fired).
                    self._run_ready(batch_left, append_event)
                    batch_left = 0
                    # (The instant's end is checked here: the runner would count
                    # an empty batch toward maintenance, moving the trace's chunks.)
                    if self._stopping or not (ready or ((timers := self._timers) and timers[0][0] <= now)):
                        return
                    if self._run_batches_without_choices(now):
                        return
                    continue  # a batch with a choice in it: collected above
                if self._stopping or not (ready or count or ((timers := self._timers) and timers[0][0] <= now)):
                    return
        finally:
            self._batch_left = batch_left

    def _collect_due(self, now: int) -> DueTimers:
        """The timers due at ``now`` join the due list, which starts a batch:
        in (tick, sequence) order, ranked if the chooser ranks; returns the
        due list (its form changes with its length, ``_SORTED_DUE_ABOVE``)."""
        due, timers, options = self._due, self._timers, self._timer_options
        while timers and timers[0][0] <= now:
            entry = heappop(timers)
            if entry[2]._cancelled:
                entry[2]._scheduled = False
                self._cancelled_timers -= 1
            elif due.__class__ is list and (not due or due[-1] < entry):
                due.append(entry)  # the usual case, inline: in order
                if options.heap is not None:
                    options.heap.add((entry[0], entry[1]), entry[3] or "-")
            else:
                self._add_due(entry)
        if due.__class__ is list:
            if len(due) > _SORTED_DUE_ABOVE:
                due = self._set_due(SortedList(due))
        elif len(due) < _LISTED_DUE_BELOW:
            due = self._set_due(list(due))
        return due

    def _run_batches_without_choices(self, now: int) -> bool:
        """Run this instant's batches as the FIFO path does while they leave
        the policy nothing to decide: no timer due now, or one with nothing
        ready (it fires; nothing could run before it). Many instants are like
        that, and the general loop's bookkeeping costs each ~5% of a
        one-task wake-up. Returns True when the instant is done; False at
        the first batch with a choice in it, not yet started (the general
        loop then collects it, exactly as it would have)."""
        ready = self._ready
        timers = self._timers
        append_event = self._append_event
        while True:
            if timers and timers[0][0] <= now:
                # (A heap's second-smallest entry is its [1] or its [2].)
                if ready or (len(timers) > 1 and timers[1][0] <= now) or (len(timers) > 2 and timers[2][0] <= now):
                    return False
                handle = heappop(timers)[2]
                handle._scheduled = False
                if handle._cancelled:
                    self._cancelled_timers -= 1
                else:
                    ready.append(handle)
            self._countdown -= 1
            if not self._countdown:
                self._maintain()
            for _ in range(len(ready)):  # (_run_ready, inlined)
                handle = ready.popleft()
                if not handle._cancelled:
                    callback = handle._callback
                    if callback.__class__ is not _FunctionType:
                        owner = getattr(callback, "__self__", None)
                        if owner.__class__ is SimTask:
                            append_event(owner._agentsim_label)
                    handle._run()
            timers = self._timers  # (maintenance may have replaced the heap)
            if self._stopping or not (ready or (timers and timers[0][0] <= now)):
                return True

    def _set_due(self, due: DueTimers) -> DueTimers:
        """The same due timers in another form (see ``_SORTED_DUE_ABOVE``)."""
        self._due = self._timer_options.due = due
        return due

    def _add_due(self, entry: TimerEntry) -> None:
        """Put a timer that fell due in the due list, in (tick, sequence) order."""
        due = self._due
        in_order = not due or due[-1] < entry  # (else an earlier deadline, scheduled later: call_at in the past)
        options = self._timer_options
        if self._ranks_options and options.heap is None and not in_order:
            options.start_heap()  # (its slots must be taken in the order timers were added)
        if due.__class__ is not list:
            due.add(entry)
        elif in_order:
            due.append(entry)
        else:
            insort(due, entry)
        if options.heap is not None:
            options.heap.add((entry[0], entry[1]), entry[3] or "-")

    def _limit_error(self, next_ticks: int) -> Any:
        from ..errors import VirtualTimeLimitError
        from ..tracing.snapshots import snapshot_task

        limit = (self._clock.limit_ticks or 0) / TICKS_PER_SECOND
        tasks = tuple(snapshot_task(t) for t in self.sim_tasks())
        return VirtualTimeLimitError(limit, next_ticks / TICKS_PER_SECOND, tasks)

    # -- tasks and futures ---------------------------------------------------

    def create_task(self, coro: Any, *, name: str | None = None, context: Any = None) -> asyncio.Task[Any]:
        """A task, made as the program asked: by its task factory if it set one
        (``loop.set_task_factory``); under asyncio's own ``eager_task_factory``
        whether each task starts eagerly is a choice (see below)."""
        self._check_closed()
        factory = self._task_factory
        parent = current_task(self)
        spawned_by = f"by {task_label(parent)}" if parent else ""
        if factory is not None and factory is not _EAGER_TASK_FACTORY:
            task = factory(self, coro) if context is None else factory(self, coro, context=context)
            if name is not None:
                task.set_name(name)
            self._record(self._clock.ticks, "spawn", task_label(task), spawned_by)
            self._live_tasks[task] = None
            task.add_done_callback(self._record_exit)
            return task  # type: ignore[no-any-return]
        number = next(self._task_numbers)
        name = name or f"Task-{number}"
        eager: dict[str, bool] = {}
        if factory is not None:
            # The program installed asyncio.eager_task_factory: a task runs to
            # its first await inside create_task. Code under test may run with
            # or without it (a deployment choice), and code that only works
            # one way is a race in waiting, so under a non-FIFO policy each
            # task's start is a choice: eager (the factory, option 0) or
            # deferred (asyncio's default).
            start_eagerly = True
            if not self._fifo:
                start_eagerly = self._chooser.eager()
            if start_eagerly:
                eager["eager_start"] = True
        self._record(self._clock.ticks, "spawn", trace_label(name, number, coro), spawned_by)
        task = SimTask(coro, loop=self, name=name, context=context, number=number, **eager)
        if not task.done():  # an eager task may already have finished
            self._live_tasks[task] = None
        task.add_done_callback(self._record_exit)
        return task

    def _record_exit(self, task: asyncio.Task[Any]) -> None:
        self._live_tasks.pop(task, None)
        if task.cancelled():
            outcome = "cancelled"
        elif task.exception() is not None:
            outcome = f"raised {type(task.exception()).__name__}"
        else:
            outcome = "returned"
        self._record(self._clock.ticks, "exit", task_label(task), outcome)
        cancelled_at = getattr(task, "_agentsim_cancelled_at", None)
        if cancelled_at is not None and outcome == "returned" and task.cancelling() > 0:
            # Cancelled, never uncancelled, yet it returned as if it had not
            # been (raising something else instead is a failing clean-up).
            self._record(self._clock.ticks, "swallowed", task_label(task), f"cancellation swallowed; {outcome}")
            self._core.warnings.append(SwallowedCancellationWarning(cancelled_at, outcome))  # warned after the run

    def sim_tasks(self) -> list[asyncio.Task[Any]]:
        """Unfinished tasks of this loop, in creation order."""
        return [task for task in self._live_tasks if not task.done()]

    # -- processes: none on the virtual loop -----------------------------------

    async def subprocess_exec(self, protocol_factory: Any, program: Any, *args: Any, **kwargs: Any) -> Any:
        """``asyncio.create_subprocess_exec``: a real process is an escape."""
        _no_process(f"asyncio.create_subprocess_exec({program!r}, ...)")

    async def subprocess_shell(self, protocol_factory: Any, cmd: Any, **kwargs: Any) -> Any:
        """``asyncio.create_subprocess_shell``: a real process is an escape."""
        _no_process(f"asyncio.create_subprocess_shell({cmd!r})")

    # -- executors: inline, on frozen virtual time ---------------------------

    def run_in_executor(self, executor: Any, func: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Run ``func`` inline instead of in a thread.

        No loop turn happens while it runs, so virtual time stands still and
        no wall time can leak into the schedule; to the awaiting task it looks
        exactly like a thread that finished instantly.
        """
        self._check_closed()
        future = self.create_future()
        self._record(self._clock.ticks, "inline", task_label(current_task(self)), describe_callable(func))
        try:
            result = func(*args)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self.call_soon(settle_later, future, None, exc)
        else:
            self.call_soon(settle_later, future, result, None)
        return future

    def set_default_executor(self, executor: Any) -> None:
        # Executors are never used: all executor work runs inline.
        pass

    async def shutdown_default_executor(self, timeout: float | None = None) -> None:
        return None

    # -- real I/O is an escape -----------------------------------------------

    def _escape(self, api: str) -> SimulationEscapeError:
        error = SimulationEscapeError("socket", api, caller_site(3))
        self._core.record_escape(error)
        return error

    async def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        raise self._escape(f"loop.getaddrinfo({host!r}, {port!r})")

    async def getnameinfo(self, sockaddr: Any, flags: int = 0) -> Any:
        raise self._escape(f"loop.getnameinfo({sockaddr!r})")

    def _write_to_self(self) -> None:
        # call_soon_threadsafe from the loop's own thread needs no wake-up: the
        # loop never blocks on a selector. Other threads are escapes anyway.
        pass

    def _process_events(self, event_list: Any) -> None:  # pragma: no cover - never polled
        pass

