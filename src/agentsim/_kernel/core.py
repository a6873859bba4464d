"""State shared by a simulation's backend, patches and public functions.

One :class:`SimulationCore` exists per running simulation and is registered
for the thread that runs it, which is how :func:`agentsim.now` and the
determinism patches find "the current simulation" without any global switch
that other threads could see.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from functools import cached_property
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from .clock import TICKS_PER_SECOND, VirtualClock
from .errors import NotInSimulationError, SimulationError, SimulationEscapeError, TaskSnapshot, WallTimeoutError
from .scheduling import ChoiceKind, SchedulingPolicy
from .tracing.trace import Trace

#: The real clock, captured before any patch; only the wall-timeout watchdog reads it.
real_perf_counter: Final = time.perf_counter

#: Virtual ``time.time()`` is this Unix epoch plus virtual seconds (2025-01-01T00:00:00Z),
#: so timestamps look plausible and are the same in every run.
VIRTUAL_EPOCH: Final = 1_735_689_600


class SimulationCore:
    """Everything one simulation owns: clock, policy, trace, seed and its fate."""

    def __init__(
        self,
        *,
        seed: int,
        policy: SchedulingPolicy,
        clock: VirtualClock,
        trace: Trace,
        wall_timeout: float | None,
        backend: str,
    ) -> None:
        self.seed = seed
        self.policy = policy
        self.clock = clock
        self.trace = trace
        #: The run's decisions, as the backends ask them (scheduling/chooser.py):
        #: the strategy's own chooser, made once per run.
        self.chooser = policy.chooser(self)
        self.backend = backend
        self.wall_timeout = wall_timeout
        self._wall_deadline: float | None = None
        #: The first kernel-level failure (deadlock, limit, wall timeout, escape)
        #: that ended the simulation early; reported instead of what it caused.
        self.abort_error: SimulationError | None = None
        #: Escapes, even those the simulated code caught and swallowed.
        self.escapes: list[SimulationEscapeError] = []
        #: ``allow_escapes`` of the run, and the escapes it let through.
        self.allow_escapes: tuple[str, ...] = ()
        self.allowed_escapes: list[SimulationEscapeError] = []
        #: Escape guards only fire once the backend has finished its own set-up
        #: (trio opens a wake-up socket pair before the first task runs).
        self.guards_armed = False
        #: Set by the backend: cancel the main task so that clean-up code runs.
        self.cancel_main: Callable[[], None] = lambda: None
        #: Set by the backend: sleep until a windowed timer fires (seconds from
        #: now: earliest, nominal, latest). See ``windows.py``.
        self.sleep_window: Callable[[float, float, float], Awaitable[None]] = _no_backend_sleep
        #: Set by the backend: the task running now (None between tasks) and
        #: its label in the trace ("" between tasks). The frontend asks these
        #: and never the event loop libraries themselves.
        self.running_task: Callable[[], object | None] = lambda: None
        self.task_label: Callable[[], str] = lambda: ""
        #: Warnings found during the run, issued once it has ended.
        self.warnings: list[Warning] = []
        #: Set by the backend: a snapshot of every live task of the program.
        self.task_snapshots: Callable[[], tuple[TaskSnapshot, ...]] = lambda: ()
        #: Windowed timers set so far (for the explorer's health check).
        self.windowed_timers = 0
        #: Delays drawn from a seeded distribution so far (jitter).
        self.jitter_draws = 0
        #: The moments named by ``sometimes``/``reached``: label -> held at least once (coverage.py).
        self.coverage: dict[str, bool] = {}
        #: When a focused sweep asks (its base run): label -> the ticks at
        #: which each ``sometimes`` of it was evaluated, held or not.
        self.moment_instants: dict[str, list[int]] | None = None
        self._rngs: dict[str, random.Random] = {}

    # -- time ----------------------------------------------------------------

    @property
    def now(self) -> float:
        return self.clock.ticks / TICKS_PER_SECOND

    def start_wall_clock(self) -> None:
        if self.wall_timeout is not None:
            self._wall_deadline = real_perf_counter() + self.wall_timeout

    def wall_time_exceeded(self) -> bool:
        deadline = self._wall_deadline
        return deadline is not None and real_perf_counter() > deadline

    def wall_timeout_error(self, running: object = None, executing: tuple[str, ...] = ()) -> WallTimeoutError:
        from .tracing.snapshots import snapshot_task

        task = snapshot_task(running) if running is not None else None
        return WallTimeoutError(self.wall_timeout or 0.0, self.now, task, executing)

    # -- fate ----------------------------------------------------------------

    def abort(self, error: SimulationError) -> None:
        """End the simulation with ``error``: keep the first, cancel the main task."""
        if self.abort_error is None:
            self.abort_error = error
            self.trace.record(self.clock.ticks, "abort", "", type(error).__name__)
            self.cancel_main()

    def choose(self, kind: ChoiceKind, labels: Sequence[str], fifo: int = 0) -> int:
        """Ask the run's chooser to pick one of ``labels`` and record the choice
        (``fifo``: the stock option); see :meth:`Chooser.choose`."""
        return self.chooser.choose(kind, labels, fifo)

    def record_escape(self, error: SimulationEscapeError) -> None:
        frame: Any = sys._getframe(1)
        files: list[str] = []
        while frame is not None and len(files) < 200:
            files.append(frame.f_code.co_filename)
            frame = frame.f_back
        error.stack = tuple(files)
        self.escapes.append(error)
        self.trace.record(self.clock.ticks, "escape", "", f"{error.api} at {error.site}")

    def seeded_random(self, purpose: str) -> random.Random:
        """The simulation's generator for ``purpose`` (one per purpose, made on first use)."""
        rng = self._rngs.get(purpose)
        if rng is None:
            rng = self._rngs[purpose] = random.Random(self.derived_seed(purpose))
        return rng

    @cached_property
    def uuid_rng(self) -> random.Random:
        """The generator behind ``uuid.uuid4()`` inside this simulation."""
        return random.Random(self.derived_seed("uuid4"))

    def derived_seed(self, purpose: str) -> str:
        """A per-purpose seed string, so that streams never share state."""
        return f"agentsim:{purpose}:{self.seed}"


async def _no_backend_sleep(earliest: float, nominal: float, latest: float) -> None:
    raise RuntimeError("the simulation's backend has not started")


_local = threading.local()


def current_core() -> SimulationCore | None:
    """The simulation running in this thread, if any."""
    core: SimulationCore | None = getattr(_local, "core", None)
    return core


def require_core(api: str) -> SimulationCore:
    core: SimulationCore | None = getattr(_local, "core", None)
    if core is None:
        raise NotInSimulationError(api)
    return core


def set_current_core(core: SimulationCore | None) -> None:
    _local.core = core


def now() -> float:
    """Current virtual time of the running simulation, in seconds.

    Starts at ``0.0`` and only moves when every task is blocked, jumping to
    the next timer::

        async def main():
            await asyncio.sleep(1.5)
            assert agentsim.now() == 1.5

        agentsim.run(main)

    Raises :class:`NotInSimulationError` outside a simulation.
    """
    return require_core("agentsim.now").now


def current_task_label() -> str:
    """The trace label of the task running now ("" between tasks or outside a simulation)."""
    core: SimulationCore | None = getattr(_local, "core", None)
    return core.task_label() if core is not None else ""


def choose(kind: ChoiceKind, labels: Sequence[str]) -> int:
    """Ask the running simulation's policy to pick one of ``labels``; option 0
    is the stock choice (always taken under FIFO, and outside a simulation).

    For doubles whose behaviour has a real freedom that no timer expresses
    (frames sent together that may arrive together or apart). The choice is
    recorded like the loop's own, so it replays and shrinks the same way.
    """
    if isinstance(labels, str) or not isinstance(labels, Sequence) or not labels or not all(isinstance(label, str) for label in labels):
        from .errors import SimulationConfigError

        raise SimulationConfigError("labels", labels, "a non-empty sequence of option names (str), the stock option first")
    core: SimulationCore | None = getattr(_local, "core", None)
    if core is None or core.policy.fifo or len(labels) < 2:
        return 0
    return core.choose(kind, labels)


def task_snapshots() -> tuple[TaskSnapshot, ...]:
    """Where every live task of the running simulation is (its ``await``
    chain, into async generators); empty outside a simulation. For errors
    that end a run early (a scenario's deadline), as a deadlock shows them."""
    core: SimulationCore | None = getattr(_local, "core", None)
    return core.task_snapshots() if core is not None else ()


def record_event(kind: str, detail: str = "") -> None:
    """Add an event to the running simulation's trace; a no-op outside one.

    Doubles use it to put what they see on the same timeline as the tasks
    (``"send"`` of a call, ``"emit"`` of an event); tests mark their own
    milestones with ``kind="milestone"``, which failure reports always show
    with what happened around them::

        agentsim.record_event("emit", "audio response_1 chunk 3")
        agentsim.record_event("milestone", "caller barged in")
    """
    core: SimulationCore | None = getattr(_local, "core", None)
    if core is not None:
        core.trace.record(core.clock.ticks, kind, core.task_label(), detail)


def seeded_random(purpose: str) -> random.Random:
    """A random generator for ``purpose``, seeded from the running simulation's seed.

    Doubles draw their jitter from it (model latency, chunk pacing), so one
    seed fixes the timing too; different purposes get independent streams.
    Outside a simulation it is seeded by ``purpose`` alone (still
    deterministic)::

        delay = agentsim.seeded_random("my-double:latency").uniform(0.1, 0.3)
    """
    core: SimulationCore | None = getattr(_local, "core", None)
    if core is None:
        return random.Random(f"agentsim:{purpose}:outside")
    return core.seeded_random(purpose)
