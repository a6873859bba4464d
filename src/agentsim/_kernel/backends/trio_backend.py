"""Run a simulation's main function under ``trio.run`` on virtual time.

Trio already has the two hooks a simulation needs:

* a pluggable clock with an "autojump" that the run loop calls when every
  task is blocked. :class:`TrioVirtualClock` jumps to the next deadline in
  integer ticks (see ``clock.py``) and reports a deadlock when there is none.
* a deterministic-scheduling switch (meant for Hypothesis): with it, each
  batch of runnable tasks is sorted by creation order and then shuffled by
  the module's ``_r``. We swap ``_r`` for an object that asks the scheduling
  policy, so FIFO runs batches in creation order and other policies choose
  (and record) the order. Trio promises nothing about order within a batch,
  so every choice is one a real trio run could make.

Trio's deadlines are floats. Deadlines computed from different instants can
differ by an ulp while meaning the same tick; on a jump the clock therefore
reports, once, the largest float that still rounds to the target tick, so
that trio expires the whole tick in one batch (a real tie), and exact tick
time afterwards.

Windowed sleeps (``windows.py``) park the task with
``wait_task_rescheduled`` and are woken by the autojump, which orders them
against trio's own first deadline. Spawns and exits reach the trace through
trio's public ``Instrument`` hooks; explicit cancellations through the public
``CancelScope.cancel``.

Private names of trio used, each checked at start (or guarded) with a clear
error if a release renames it: ``_core._run._r`` and
``_ALLOW_DETERMINISTIC_SCHEDULING`` (batch order), ``GLOBAL_RUN_CONTEXT``
(the runner), the runner's ``deadlines`` (``next_deadline``, ``expire``),
``main_task`` and ``system_nursery`` (task snapshots and
leftovers), ``MockClock._autojump`` (rebound), ``Task._counter`` (creation
order) and ``Task._abort_func`` (which tasks are blocked, to unwind them
after an abort).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Awaitable, Callable, Iterator
from math import inf, nextafter
from typing import Any

import outcome
import trio
from trio._core import _run as trio_run_module
from trio.testing import MockClock

from .backend import Backend, Outcome, call_async_fn
from ..clock import TICKS_PER_SECOND, seconds_to_ticks, window_ticks
from ..core import SimulationCore
from ..errors import DeadlockError, SimulationError, TaskSnapshot, VirtualTimeLimitError
from ..patches.patching import PatchSet
from ..tracing.snapshots import snapshot_task
from ..scheduling.delays import landed
from ..scheduling.windows import WindowedTimers

_WALL_CHECK_EVERY = 1024


class _TrioHardStop(SimulationError):
    """Raised out of trio's run loop when an abort could not end the program."""


class TrioVirtualClock:
    """Drives a trio ``MockClock`` (threshold 0) from the simulation's tick clock.

    Trio only autojumps a ``MockClock``, and ``MockClock`` may not be
    subclassed, so :meth:`attach` rebinds the instance's methods to these.
    """

    def __init__(self, core: SimulationCore, labels: Callable[[Any], str]) -> None:
        self._core = core
        #: The simulation's clock (trio reads the time at every sleep and turn).
        self._clock = core.clock
        self._labels = labels
        #: One-shot value for the run loop's deadline expiry right after a jump.
        self._expiry: float | None = None
        #: Sleeping tasks with windows (``sleep_window``), woken by ``_autojump``.
        self._windows = WindowedTimers()
        self._window_sequence = itertools.count()

    async def sleep_window(self, earliest: float, nominal: float, latest: float) -> None:
        """``trio.sleep`` with a window: the task waits until ``_autojump`` picks it."""
        low, middle, high = window_ticks(self._core.clock.ticks, earliest, nominal, latest)
        if low == high:
            await trio.sleep(earliest)
            return
        task = trio.lowlevel.current_task()
        label = "" if self._core.policy.fifo else self._labels(task)
        timer = self._windows.add(low, middle, high, next(self._window_sequence), task, label)

        def abort(raise_cancel: Any) -> trio.lowlevel.Abort:
            self._windows.remove(timer)
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

    def attach(self) -> MockClock:
        clock = MockClock(rate=0.0, autojump_threshold=0.0)
        clock.current_time = self.current_time  # type: ignore[method-assign]
        clock.deadline_to_sleep_time = self.deadline_to_sleep_time  # type: ignore[method-assign]
        clock.jump = self.jump  # type: ignore[method-assign]
        clock._autojump = self._autojump  # type: ignore[method-assign]
        return clock

    def current_time(self) -> float:
        expiry = self._expiry
        if expiry is not None:
            self._expiry = None
            return expiry
        return self._clock.ticks / TICKS_PER_SECOND

    def deadline_to_sleep_time(self, deadline: float) -> float:
        return 0.0 if deadline <= self._clock.ticks / TICKS_PER_SECOND else 999999999.0

    def jump(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time can't go backwards")
        ticks = self._clock.ticks_after(seconds)
        if not self._clock.move_to(ticks):
            self._limit(trio_run_module.GLOBAL_RUN_CONTEXT.runner, ticks)

    def _autojump(self) -> None:
        core = self._core
        runner = trio_run_module.GLOBAL_RUN_CONTEXT.runner
        deadline = runner.deadlines.next_deadline()
        point = None if deadline == inf else max(seconds_to_ticks(deadline), self._clock.ticks)
        if self._windows.count and self._fire_windowed(runner, point):
            return
        if point is None:
            _on_idle(core, runner)
            return
        self._jump(runner, point)

    def _fire_windowed(self, runner: Any, point: int | None) -> bool:
        """Pick what fires next among windowed sleeps and the first deadline
        (see ``windows.py``); False when no windowed sleep is a candidate."""
        core = self._core
        # Trio's deadlines carry no scheduling order: a tie goes to the deadline.
        options = self._windows.options(core.clock.ticks, point, -1, "<deadline>")
        if options is None:
            return False
        chosen = 0
        if len(options) > 1 and not core.policy.fifo:
            chosen = core.chooser.window(options)
            option = options.option(chosen)
        elif core.policy.times_delays and not core.policy.fifo and options.option(0).timer is not None:
            option = landed(core.chooser, options.option(0), core.clock.ticks)  # alone: where it lands (delays.py)
        else:
            option = options.option(0)
        if option.timer is None and chosen:
            self._jump(runner, option.at)  # the deadline picked out of nominal order: alone
            return True
        if not core.clock.move_to(option.at):
            self._limit(runner, option.at)
            return True
        core.trace.record(option.at, "jump", "", "")
        # Picked out of nominal order, a timer goes alone. Nominal timing wakes
        # every sleeper nominally due now in one batch, deadlines included,
        # as plain sleeps ending at one instant would.
        fired = [option] if chosen else itertools.takewhile(lambda other: other.nominal == option.nominal, options.in_order)
        for each in fired:
            if each.timer is None:
                runner.deadlines.expire(_end_of_tick(each.at))
            else:
                self._windows.remove(each.timer)
                trio.lowlevel.reschedule(each.timer.payload)
        return True

    def _limit(self, runner: Any, ticks: int) -> None:
        core = self._core
        limit = (core.clock.limit_ticks or 0) / TICKS_PER_SECOND
        error = VirtualTimeLimitError(limit, ticks / TICKS_PER_SECOND, _snapshots(runner))
        if core.abort_error is not None:
            raise _TrioHardStop(str(error))
        core.abort(error)

    def _jump(self, runner: Any, ticks: int) -> None:
        """Move to the first point deadline, expiring its whole tick."""
        if not self._clock.move_to(ticks):
            self._limit(runner, ticks)
            return
        self._expiry = _end_of_tick(ticks)
        # (No "jump" event: the batch that runs next records its tick.)


def _end_of_tick(ticks: int) -> float:
    """The largest float time that still rounds to ``ticks``: every deadline
    of that tick lies at or before it, whatever ulp its arithmetic left."""
    return nextafter((ticks + 0.5) / TICKS_PER_SECOND, -inf)


class _PolicyShuffler(random.Random):
    """Stands in for trio's scheduler RNG: batches are ordered by the policy."""

    def __init__(self, core: SimulationCore) -> None:
        super().__init__(0)
        self._core = core
        self._steps = 0
        # Trio numbers tasks process-wide; traces need per-simulation numbers.
        self._labels: dict[Any, str] = {}
        self._chooser = core.chooser
        self._fifo = core.policy.fifo
        self._append = core.trace.append_raw
        self._extend = core.trace.extend_raw
        self._last_tick = -1

    def label(self, task: Any) -> str:
        """The task's name in traces (per-simulation numbering)."""
        label = self._labels.get(task)
        if label is None:
            main = task.name == "main" or getattr(task.coro, "cr_code", None) is _main.__code__
            label = self._labels[task] = "main" if main else f"{task.name}#{len(self._labels) + 1}"
        return label

    def shuffle(self, batch: list[Any]) -> None:  # type: ignore[override]
        core = self._core
        if not batch:
            # Trio's turn that jumps the clock runs nothing: the new tick
            # goes on the trace as below, with none of the rest's work.
            if (ticks := core.clock.ticks) != self._last_tick:
                self._append(ticks)
                self._last_tick = ticks
            return
        self._steps += len(batch)
        if self._steps >= _WALL_CHECK_EVERY:
            self._steps = 0
            core.trace.flush_if_large()
            if core.wall_time_exceeded():
                core.abort(core.wall_timeout_error())
        # Task steps go on the trace in its compact form: the tick (when it
        # moved: only this method writes ticks on trio), then each label.
        append = self._append
        ticks = core.clock.ticks
        if ticks != self._last_tick:
            append(ticks)
            self._last_tick = ticks
        # Trio runs the batch by popping from the end.
        if len(batch) == 1:
            task = batch[0]
            append(self._labels.get(task) or self.label(task))
            return
        if self._fifo:
            # The order they will run in, labelled in one C pass (every task
            # is labelled when spawned; trio's own tasks on first sight).
            try:
                in_order = list(map(self._labels.__getitem__, batch))
            except KeyError:
                in_order = [self.label(task) for task in batch]
            self._extend(in_order)
            batch.reverse()
            return
        try:
            labels = list(map(self._labels.__getitem__, batch))  # (one C pass, as FIFO's)
        except KeyError:
            labels = [self.label(task) for task in batch]
        # The strategy's order (scheduling/chooser.py), recorded by the chooser.
        order = self._chooser.batch(labels)
        self._extend([labels[position] for position in order])
        batch[:] = [batch[position] for position in reversed(order)]


class _Lifecycle(trio.abc.Instrument):
    """Puts task spawns and exits on the trace through trio's public
    instrument hooks, as the asyncio loop does from its task factory."""

    def __init__(self, core: SimulationCore, shuffler: _PolicyShuffler) -> None:
        self._core = core
        self._label = shuffler.label

    def task_spawned(self, task: Any) -> None:
        if task.name.startswith("<"):
            return  # trio's own system tasks
        parent = task.parent_nursery.parent_task if task.parent_nursery is not None else None
        by = f"by {self._label(parent)}" if parent is not None and not parent.name.startswith("<") else ""
        self._core.trace.record(self._core.clock.ticks, "spawn", self._label(task), by)

    def task_exited(self, task: Any) -> None:
        if not task.name.startswith("<"):
            # Trio's hook does not say how the task ended (returned, raised,
            # cancelled): its nursery does, to the program.
            self._core.trace.record(self._core.clock.ticks, "exit", self._label(task), "exited")


def _recording_cancel(original: Callable[..., Any]) -> Callable[..., Any]:
    """``CancelScope.cancel`` that puts the cancellation on the running
    simulation's trace, with who asked (a timeout's expiry is the exit's)."""

    def cancel(scope: Any, *args: Any, **kwargs: Any) -> Any:
        from ..core import current_core

        core = current_core()
        if core is not None and not scope.cancel_called:
            # On the canceller's track: trio does not name the tasks a scope holds.
            core.trace.record(core.clock.ticks, "cancel", core.task_label(), "a cancel scope")
        return original(scope, *args, **kwargs)

    return cancel


def _current_trio_task() -> Any:
    # trio.lowlevel.current_task() raises outside a task (timer callbacks,
    # instruments); the run context's attribute says the same without raising.
    return getattr(trio_run_module.GLOBAL_RUN_CONTEXT, "task", None)


def _label_of_current(shuffler: _PolicyShuffler) -> str:
    task = _current_trio_task()
    return shuffler.label(task) if task is not None else ""


def _walk(task: Any) -> Iterator[Any]:
    yield task
    for nursery in task.child_nurseries:
        for child in sorted(nursery.child_tasks, key=lambda t: t._counter):
            yield from _walk(child)


def _user_tasks(runner: Any) -> list[Any]:
    """The program's tasks: the main task's tree and system tasks it spawned."""
    tasks = []
    if runner.main_task is not None:
        tasks += list(_walk(runner.main_task))
    if runner.system_nursery is not None:
        tasks += [t for t in runner.system_nursery.child_tasks if t is not runner.main_task]
    return [task for task in tasks if not task.name.startswith("<")]


def _snapshots(runner: Any) -> tuple[TaskSnapshot, ...]:
    return tuple(snapshot_task(task) for task in _user_tasks(runner))


class _ForcedUnwind(BaseException):
    """Thrown into tasks still blocked after an abort's cancellation (shielded
    clean-up that waits forever), so that trio.run can return at all."""


def _on_idle(core: SimulationCore, runner: Any) -> None:
    if core.abort_error is None:
        core.abort(DeadlockError(core.now, _snapshots(runner)))
        return
    blocked = [task for task in _user_tasks(runner) if task._abort_func is not None]
    if not blocked:
        raise _TrioHardStop(f"the simulation could not be cancelled after: {core.abort_error}")
    for task in blocked:
        trio.lowlevel.reschedule(task, outcome.Error(_ForcedUnwind()))


class TrioBackend(Backend):
    name = "trio"

    def run(self, core: SimulationCore, async_fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...]) -> Outcome:
        _check_trio_internals()
        outcome = Outcome()
        patches = PatchSet()
        shuffler = _PolicyShuffler(core)
        clock = TrioVirtualClock(core, shuffler.label)
        core.sleep_window = clock.sleep_window
        core.running_task = _current_trio_task
        core.task_snapshots = lambda: _snapshots(trio_run_module.GLOBAL_RUN_CONTEXT.runner)
        core.task_label = lambda: _label_of_current(shuffler)
        patches.add(trio_run_module, "_ALLOW_DETERMINISTIC_SCHEDULING", True)
        patches.add(trio_run_module, "_r", shuffler)
        patches.add(trio.CancelScope, "cancel", _recording_cancel(trio.CancelScope.cancel))
        patches.apply()
        try:
            outcome.value = trio.run(
                _main, core, async_fn, args, outcome, clock=clock.attach(), instruments=[_Lifecycle(core, shuffler)]
            )
        except _TrioHardStop:
            pass  # core.abort_error says why
        except _ForcedUnwind:
            pass  # core.abort_error says why
        except BaseExceptionGroup as group:
            rest = group.split(_ForcedUnwind)[1]
            if rest is not None:
                outcome.exception = rest
        except trio.TrioInternalError as exc:
            if not isinstance(exc.__cause__, _TrioHardStop):
                outcome.exception = exc
        except BaseException as exc:  # noqa: BLE001 - reported, not swallowed
            outcome.exception = exc
        finally:
            patches.restore()
        return outcome


async def _main(core: SimulationCore, async_fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...], outcome: Outcome) -> Any:

    task = trio.lowlevel.current_task()
    task.name = "main"
    try:
        with trio.CancelScope() as scope:
            core.cancel_main = scope.cancel
            core.guards_armed = True
            return await call_async_fn(async_fn, args)
        return None  # cancelled by an abort; core.abort_error says why
    finally:
        # Nurseries make leftovers impossible, except system tasks the program
        # spawned; trio cancels those when the main task returns.
        runner = trio_run_module.GLOBAL_RUN_CONTEXT.runner
        assert runner.system_nursery is not None  # the main task lives in it
        outcome.leftover_tasks = tuple(
            snapshot_task(t)
            for t in sorted(runner.system_nursery.child_tasks, key=lambda t: t._counter)
            if t is not task and not t.name.startswith("<")
        )


def _check_trio_internals() -> None:
    missing = [
        name
        for name, ok in (
            ("trio._core._run._r", hasattr(trio_run_module, "_r")),
            ("trio._core._run._ALLOW_DETERMINISTIC_SCHEDULING", hasattr(trio_run_module, "_ALLOW_DETERMINISTIC_SCHEDULING")),
            ("trio._core._run.GLOBAL_RUN_CONTEXT", hasattr(trio_run_module, "GLOBAL_RUN_CONTEXT")),
        )
        if not ok
    ]
    if missing:
        raise SimulationError(
            f"this trio release ({trio.__version__}) lacks {', '.join(missing)}, which agentsim's trio "
            f"backend hooks into; install a trio version listed in agentsim's pyproject.toml."
        )

