"""``run`` and ``simulate``: start a simulation, run it, report how it ended."""

from __future__ import annotations

import asyncio
import inspect
import signal
import sys
import threading
import warnings
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from typing import Unpack

from .backends.backend import Backend, Outcome
from .clock import TICKS_PER_SECOND, VirtualClock
from .core import SimulationCore, current_core, set_current_core
from . import extensions
from .patches.determinism import SeededGlobalRandom, clock_patches, module_name_patches
from .errors import (
    ConcurrentSimulationError,
    LeftoverTasksWarning,
    NestedSimulationError,
    SimulationConfigError,
    SimulationError,
    SimulationEscapeError,
    TaskSnapshot,
)
from .patches.escapes import escape_guards
from .patches.unawaited import unawaited_hook
from .frames import frame_site, is_generated, is_loop_machinery, is_program_code
from .patches.ordered_sets import ordered_library_sets
from .patches.patching import SharedInstaller
from .options import RunOptions, RunSettings
from .scheduling import SchedulingPolicy, make_policy
from .patches.threads import inline_threads
from .tracing.trace import Trace

T = TypeVar("T")


@dataclass(frozen=True)
class SimulationResult(Generic[T]):
    """How one simulation ended.

    ``value`` is what the main function returned (None if it raised);
    ``exception`` what it raised, or the kernel error that stopped it
    (deadlock, limits, escape); ``end_time`` the virtual seconds when it
    ended; ``trace`` the ordered record, whose ``digest()`` identifies the
    schedule.
    """

    value: T | None
    exception: BaseException | None
    end_time: float
    trace: Trace
    seed: int
    strategy: str
    backend: str
    leftover_tasks: tuple[TaskSnapshot, ...] = ()
    #: Windowed timers the run set (delays known as a range, ``agentsim.timing``).
    windowed_timers: int = 0
    #: Delays the run drew from a seeded distribution (jitter).
    jitter_draws: int = 0
    #: The moments the run named (``agentsim.sometimes``/``reached``): label -> held at least once.
    coverage: dict[str, bool] = field(default_factory=dict)
    #: Escapes let through by ``allow_escapes`` (each ran for real).
    allowed_escapes: tuple[SimulationEscapeError, ...] = ()
    #: For a policy that asks (``records_moments``: a focused sweep's base
    #: run): label -> the virtual seconds at which each ``sometimes`` of it
    #: was evaluated, held or not.
    moment_instants: dict[str, tuple[float, ...]] = field(default_factory=dict)

    @property
    def choice_points(self) -> int:
        """How many open choices the scheduling policy decided in this run."""
        return len(self.trace.choices)

    @property
    def ok(self) -> bool:
        """True if the main function returned normally."""
        return self.exception is None

    def unwrap(self) -> T:
        """The value, or raise the exception (as :func:`agentsim.run` does)."""
        if self.exception is not None:
            raise self.exception
        return self.value  # type: ignore[return-value]


def _backend(name: str) -> Backend:
    # Imported on first use: an asyncio simulation never imports trio.
    if name == "trio":
        from .backends.trio_backend import TrioBackend

        return TrioBackend()
    from .backends.asyncio_backend import AsyncioBackend

    return AsyncioBackend()


def _check_async_fn(async_fn: object) -> None:
    if not callable(async_fn):
        raise SimulationConfigError("async_fn", async_fn, "an async function")


#: Threads with a running simulation (at most one: ConcurrentSimulationError).
_running: dict[int, str] = {}
_running_lock = threading.Lock()


@contextmanager
def _only_simulation_in_process() -> Iterator[None]:
    with _running_lock:
        for ident, name in _running.items():
            if ident != threading.get_ident():
                raise ConcurrentSimulationError(name)
        _running[threading.get_ident()] = threading.current_thread().name
    try:
        yield
    finally:
        with _running_lock:
            _running.pop(threading.get_ident(), None)


def _check_not_nested(backend: str) -> None:
    if current_core() is not None:
        raise NestedSimulationError("agentsim")
    if asyncio._get_running_loop() is not None:
        raise NestedSimulationError("asyncio")
    trio = sys.modules.get("trio")  # not imported: no trio run can be going on
    if trio is not None and trio.lowlevel.in_trio_run():
        raise NestedSimulationError("trio")


#: The patch sets a sweep may hold across its runs: those built once (no
#: key: what they patch does not depend on what the program imported).
_HELD_ACROSS_RUNS: tuple[SharedInstaller, ...] = (clock_patches, escape_guards, unawaited_hook, ordered_library_sets)


@contextmanager
def patches_held() -> Iterator[None]:
    """Keep the simulation's patches installed for many runs in this thread.

    A run installs ~65 patched attributes and removes them after
    (``SharedInstaller``): for a short program that is a fifth of a run's
    cost. A sweep holds them for all its runs instead, so each run only
    counts itself in. Outside a simulation every patched function calls
    the original (it dispatches on the calling thread), so code between
    the runs sees no difference. The sets whose build depends on what the
    program imported (its modules' names, trio's threads) are still
    installed per run."""
    with ExitStack() as stack:
        for installer in _HELD_ACROSS_RUNS:
            stack.enter_context(_installed(installer))
        yield


@contextmanager
def _installed(installer: SharedInstaller) -> Iterator[None]:
    installer.acquire()
    try:
        yield
    finally:
        installer.release()


@contextmanager
def _wall_alarm(core: SimulationCore) -> Iterator[None]:
    """Interrupt CPU-bound code that never yields, where signals allow it.

    The loops check the wall clock between callbacks themselves; this covers a
    ``while True`` without ``await``, which only a signal can interrupt.
    Previous handlers and timers (pytest-timeout's) are restored after.
    """
    usable = (
        core.wall_timeout is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        in_program = _safe_to_raise(frame)
        core.abort(core.wall_timeout_error(core.running_task(), _executing(frame) if in_program else ()))
        # Raise only where the program runs (its own code, or the standard
        # library it called, such as a json.dumps loop): an exception in the
        # middle of the event loop's bookkeeping would corrupt it. Elsewhere
        # the loop sees the abort at its next wall-clock check (and the alarm
        # repeats every second meanwhile).
        if in_program:
            raise core.abort_error  # type: ignore[misc]

    previous_handler = signal.signal(signal.SIGALRM, on_alarm)
    previous_timer = signal.setitimer(signal.ITIMER_REAL, core.wall_timeout, 1.0)  # type: ignore[arg-type]
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
        if previous_timer[0] > 0:
            signal.setitimer(signal.ITIMER_REAL, *previous_timer)


#: Code flags of coroutines and async generators: the program's own code that
#: a loop runs, even without a file.
_ASYNC_CODE = inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _safe_to_raise(frame: FrameType | None) -> bool:
    """Whether the innermost frames belong to the program (its code, or the
    standard library called from it) rather than to the event loop, agentsim,
    a finalizer or a garbage-collector callback."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if _in_finalizer(frame) or is_loop_machinery(filename):
            return False
        if is_program_code(filename) and (not is_generated(filename) or frame.f_code.co_flags & _ASYNC_CODE):
            return True  # the program's code (a coroutine without a file too: `python -c`)
        frame = frame.f_back  # the standard library or a generated helper: whoever called it decides
    return False


def _executing(frame: FrameType | None, limit: int = 8) -> tuple[str, ...]:
    """``file:line in function`` of the frames that were executing, innermost
    first, up to the loop running the task; a deep stack keeps both ends
    (where it spins, and the program's call that led there)."""
    sites: list[str] = []
    while frame is not None and len(sites) < 500:
        if is_loop_machinery(frame.f_code.co_filename):
            if sites:
                break  # out of the task, into the loop that runs it
        else:
            sites.append(frame_site(frame))
        frame = frame.f_back
    if len(sites) > limit:
        sites = [*sites[: limit // 2], f"... {len(sites) - limit} more ...", *sites[-(limit // 2) :]]
    return tuple(sites)


def _in_finalizer(frame: FrameType) -> bool:
    """Whether ``frame`` runs where an exception is only reported, never
    raised: a ``__del__`` or a garbage-collector callback (hypothesis
    registers one). The alarm repeats and lands elsewhere."""
    import gc

    code = frame.f_code
    return code.co_name == "__del__" or any(getattr(callback, "__code__", None) is code for callback in gc.callbacks)


def _final_exception(core: SimulationCore, outcome: Outcome) -> BaseException | None:
    # A kernel abort explains whatever the program raised after it (usually a
    # cancellation); an escape is the root cause even if the code caught it.
    if core.abort_error is not None:
        return core.abort_error
    if core.escapes:
        return core.escapes[0]
    return outcome.exception


def simulate(
    async_fn: Callable[..., Awaitable[T]],
    *args: Any,
    options: RunOptions | None = None,
    **settings: Unpack[RunSettings],
) -> SimulationResult[T]:
    """Run ``async_fn(*args)`` in a simulation and report how it ended.

    Never raises what the simulated program raised: that is in
    ``result.exception``. Raises :class:`SimulationConfigError` for invalid
    arguments and :class:`NestedSimulationError` when called inside a running
    event loop. The settings are :class:`RunOptions`, given whole as
    ``options=`` or field by field as keywords (see :func:`agentsim.run`)::

        result = agentsim.simulate(main, seed=7, strategy="random")
        result = agentsim.simulate(main, options=RunOptions(seed=7, strategy="random"))
        assert result.ok, result.exception
        print(result.end_time, result.trace.digest())
    """
    _check_async_fn(async_fn)
    options = RunOptions.resolve(options, settings, where="agentsim.simulate")
    seed, backend, max_virtual_time, wall_timeout = options.seed, options.backend, options.max_virtual_time, options.wall_timeout
    policy = make_policy(options.strategy, seed)
    _check_not_nested(backend)
    runner = _backend(backend)
    core = SimulationCore(
        seed=seed,
        policy=policy,
        clock=VirtualClock(max_virtual_time),
        trace=Trace(),
        wall_timeout=wall_timeout,
        backend=backend,
    )
    core.allow_escapes = options.allow_escapes
    if getattr(policy, "records_moments", False):
        core.moment_instants = {}
    with _only_simulation_in_process():
        return _simulate(core, runner, policy, async_fn, args)


def _simulate(core: SimulationCore, runner: Any, policy: SchedulingPolicy, async_fn: Callable[..., Awaitable[T]], args: tuple[Any, ...]) -> SimulationResult[T]:
    seed, backend = core.seed, core.backend
    library_extensions = extensions.activate()
    set_current_core(core)
    try:
        with ExitStack() as stack:
            for installer in (clock_patches, escape_guards, unawaited_hook, inline_threads, ordered_library_sets, module_name_patches):
                stack.enter_context(_installed(installer))
            stack.enter_context(SeededGlobalRandom(core))
            for extension in library_extensions:
                stack.enter_context(extension(core))
            stack.enter_context(_wall_alarm(core))
            core.start_wall_clock()
            try:
                outcome = runner.run(core, async_fn, args)
            except SimulationError as exc:  # a wall-timeout alarm that hit the loop itself
                outcome = Outcome(exception=exc)
    finally:
        core.guards_armed = False
        set_current_core(None)
    policy.finished(core.trace, seed)
    for warning in core.warnings:
        warnings.warn(warning, stacklevel=3)
    if outcome.leftover_tasks:
        warnings.warn(LeftoverTasksWarning(outcome.leftover_tasks), stacklevel=2)
    return SimulationResult(
        value=outcome.value,
        exception=extensions.explain(core, _final_exception(core, outcome)),
        end_time=core.now,
        trace=core.trace,
        seed=seed,
        strategy=policy.name,
        backend=backend,
        leftover_tasks=outcome.leftover_tasks,
        windowed_timers=core.windowed_timers,
        jitter_draws=core.jitter_draws,
        coverage=dict(core.coverage),
        allowed_escapes=tuple(core.allowed_escapes),
        moment_instants=_moment_seconds(core.moment_instants),
    )


def _moment_seconds(instants: dict[str, list[int]] | None) -> dict[str, tuple[float, ...]]:
    return {label: tuple(ticks / TICKS_PER_SECOND for ticks in each) for label, each in (instants or {}).items()}


def run(
    async_fn: Callable[..., Awaitable[T]],
    *args: Any,
    options: RunOptions | None = None,
    **settings: Unpack[RunSettings],
) -> T:
    """Run ``async_fn(*args)`` on a virtual clock and return its result.

    Like ``asyncio.run``/``trio.run``, but every sleep, timeout and deadline
    uses virtual time, which jumps to the next timer as soon as every task is
    blocked, and the order of events that the program leaves open is chosen
    by ``strategy`` from ``seed``::

        async def main():
            await asyncio.sleep(3600)   # an hour, in microseconds of real time
            return agentsim.now()

        assert agentsim.run(main) == 3600.0

    Settings (a :class:`RunOptions` as ``options=``, or its fields as keywords):
        seed: selects the schedule for non-FIFO strategies; same seed, same run.
        backend: ``"asyncio"`` (also for anyio code and the openai-agents SDK)
            or ``"trio"``.
        strategy: ``"fifo"`` (stock order), ``"random"``, or a
            :class:`SchedulingPolicy`.
        max_virtual_time: raise :class:`VirtualTimeLimitError` instead of
            moving the clock past this many virtual seconds.
        wall_timeout: raise :class:`WallTimeoutError` after this many real
            seconds (a task spinning without awaiting).

    Raises whatever the main function raised, or :class:`DeadlockError`,
    :class:`VirtualTimeLimitError`, :class:`WallTimeoutError`,
    :class:`SimulationEscapeError`.
    """
    result = simulate(async_fn, *args, options=options, **settings)
    return result.unwrap()
