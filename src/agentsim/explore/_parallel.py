"""One sweep over several processes (or any ``concurrent.futures.Executor``).

The coordinator cuts the seed range into chunks, workers run them and send
back, per run, what the report needs (its schedule, its counters, its two
digests, whether it failed) but not the run itself: a trace or an exception
does not always travel between processes. The coordinator reads the outcomes
in seed order, exactly as a serial sweep runs them, and replays a failing
schedule locally (a schedule replays exactly) to shrink it, report it and save
it. So a parallel sweep's report is the serial sweep's report: same
failures in the same order, same counts, same shrunk schedules; runs a
serial sweep would not have made (past the first failure) are dropped.

Our own process pool forks its workers where the platform can (the program's
module and the SDK are then imported once, in the coordinator); a worker
that dies takes its chunk with it, and the chunks it had not finished are
run again on a fresh pool.
"""

from __future__ import annotations

import dataclasses
import gc
import multiprocessing
import os
import pickle
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

from .._kernel.errors import SimulationConfigError, TaskSnapshot
from .._kernel.scheduling import SchedulingPolicy
from .._kernel.simulation import SimulationResult, patches_held
from ._runner import Runner
from ._schedule import Schedule

#: How many times the chunks of a dead worker are run again before giving up.
_RESTARTS = 3

#: What a parallel job takes (a seed, a schedule's deviations) and gives back.
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class SweepPlan:
    """What every run of a sweep shares: the program and how each seed is run."""

    async_fn: Callable[..., Awaitable[Any]]
    args: tuple[Any, ...]
    backend: str
    options: dict[str, Any]
    #: The strategy name (PCT with its measured parameters), or a policy template.
    strategy: str | SchedulingPolicy
    #: The sweep's first seed: its run is the stock schedule with nominal timing.
    base_seed: int
    check_determinism: bool
    #: The function by value, pickled before the coordinator ran anything
    #: (see :func:`function_by_value`); None: it travels by reference.
    function_payload: bytes | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        fields = tuple(getattr(self, field.name) for field in dataclasses.fields(self))
        payload = self.function_payload or function_by_value(self.async_fn)
        if payload is not None:
            return (_plan_with_function_by_value, (payload, fields[1:-1]))
        return (SweepPlan, fields)


def function_by_value(async_fn: Callable[..., Any]) -> bytes | None:
    """A function from a module the workers cannot import (the command line
    loads targets from a path), pickled by value through cloudpickle
    (installed with the cluster extra, and all that needs it); None for one
    that travels by reference. Taken before the coordinator runs the program:
    a run leaves state in the module's globals (an SDK agent's weak
    references) that pickles no more."""
    module = sys.modules.get(getattr(async_fn, "__module__", "") or "")
    if module is None or not getattr(module, "__agentsim_by_value__", False):
        return None
    import cloudpickle

    cloudpickle.register_pickle_by_value(module)
    return cloudpickle.dumps(async_fn)  # type: ignore[no-any-return]


def _plan_with_function_by_value(function: bytes, rest: tuple[Any, ...]) -> SweepPlan:
    return SweepPlan(pickle.loads(function), *rest)


@dataclass(frozen=True)
class RunOutcome:
    """One run, as the report needs it. ``result`` is the run itself when it
    ran in this process (serial sweeps), None when it came from a worker."""

    seed: int
    #: The schedule the report names, and the one that was run (they differ for run 0).
    schedule: Schedule
    ran: Schedule
    failed: bool
    choice_points: int
    windowed_timers: int
    jitter_draws: int
    digest: str
    order_digest: str
    #: check_determinism: the second run's digest differed.
    differs: bool = False
    #: Tasks the run left running when its main function returned.
    leftover_tasks: tuple[TaskSnapshot, ...] = ()
    #: The moments the run named (``agentsim.sometimes``): (label, held at least once).
    coverage: tuple[tuple[str, bool], ...] = ()
    result: SimulationResult[Any] | None = None


def run_seed(plan: SweepPlan, run_seed: int, first: bool, run: Callable[[Schedule], SimulationResult[Any]], run_policy: Callable[[int, SchedulingPolicy], SimulationResult[Any]]) -> tuple[RunOutcome, SimulationResult[Any]]:
    """Run one seed of the sweep (in whichever process)."""
    strategy = plan.strategy
    if first and run_seed == plan.base_seed and strategy != "fifo":
        schedule, ran = Schedule(run_seed, "fifo"), Schedule.nominal(run_seed)
        result = run(ran)
    elif isinstance(strategy, SchedulingPolicy):
        policy = strategy.for_seed(run_seed)
        result = run_policy(run_seed, policy)
        schedule = ran = Schedule(run_seed, "replay", dict(result.trace.deviations), policy.jitter_scale, windows=policy.windows, delays=policy.times_delays)
    else:
        schedule = ran = Schedule(run_seed, strategy)
        result = run(schedule)
    differs = plan.check_determinism and run(ran).trace.digest() != result.trace.digest()
    return outcome_of(result, schedule, ran, differs=differs), result


def outcome_of(result: SimulationResult[Any], schedule: Schedule, ran: Schedule, *, differs: bool = False) -> RunOutcome:
    """What the report needs of one run (``schedule`` as named, ``ran`` as run)."""
    return RunOutcome(
        seed=schedule.seed,
        schedule=schedule,
        ran=ran,
        failed=result.exception is not None,
        choice_points=result.choice_points,
        windowed_timers=result.windowed_timers,
        jitter_draws=result.jitter_draws,
        digest=result.trace.digest(),
        order_digest=result.trace.order_digest(),
        differs=differs,
        leftover_tasks=result.leftover_tasks,
        coverage=tuple(result.coverage.items()),
    )


def _run_chunk(plan: SweepPlan, seeds: Sequence[int], first: bool) -> list[RunOutcome]:
    """A worker's job: every seed of one chunk, in order (no run objects sent back)."""
    runner = Runner(plan.async_fn, plan.args, plan.backend, plan.options)
    with patches_held():  # (as the sweep in the main process holds them)
        return [run_seed(plan, seed, first and index == 0, runner.run, runner.run_policy)[0] for index, seed in enumerate(seeds)]


def check_picklable(plan: SweepPlan) -> None:
    """A parallel sweep sends the program to its workers: say early if it cannot."""
    for name, value in (("async_fn", plan.async_fn), ("args", plan.args), ("strategy", plan.strategy)):
        try:
            pickle.dumps(value)
        except Exception as exc:  # noqa: BLE001 - any pickling failure means the same
            raise SimulationConfigError(
                name,
                value,
                f"something picklable for a parallel sweep ({type(exc).__name__}: {exc}); "
                "use a module-level function and plain arguments, or run serially (workers=1)",
            ) from None


def worker_count(workers: int | str) -> int:
    """``workers`` as a number of processes (``"auto"``: one per core)."""
    if workers == "auto":
        return os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise SimulationConfigError("workers", workers, "a number of worker processes >= 1, or 'auto' (one per core)")
    return workers


def check_executor(executor: object) -> None:
    """``executor`` is None or has ``submit`` (a ``concurrent.futures.Executor``)."""
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise SimulationConfigError(
            "executor", executor, "a concurrent.futures.Executor (e.g. a ProcessPoolExecutor, or a dask Client's get_executor()), or None"
        )


def _chunks(items: Sequence[T], workers: int) -> list[Sequence[T]]:
    # Small enough to balance the load and to stop soon after a failure,
    # large enough that sending work costs little beside running it.
    size = max(1, min(64, len(items) // (workers * 8) or 1))
    return [items[start : start + size] for start in range(0, len(items), size)]


def fresh_std_streams() -> None:
    """A forked worker's first act: its own stdout and stderr objects on the
    same file descriptors. A thread of the coordinator (a progress bar) may
    have held a stream's lock at the fork, and the copy of a held lock never
    opens: the worker's exit-time flush would wait forever."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        try:
            setattr(sys, name, open(fd, "w", buffering=1, closefd=False))  # noqa: SIM115 - lives as long as the worker
        except OSError:
            pass  # no such descriptor: nothing will be written there


def _new_pool(workers: int) -> ProcessPoolExecutor:
    methods = multiprocessing.get_all_start_methods()
    fork = "fork" in methods
    context = multiprocessing.get_context("fork" if fork else None)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=fresh_std_streams if fork else None)
    # Forked workers share the coordinator's memory until they write to it;
    # the cyclic GC writes to every object it scans, copying the SDK's whole
    # heap into each worker. Frozen objects are never scanned.
    gc.freeze()
    try:
        pool.submit(int).result()  # start the workers now, from the frozen heap
    finally:
        gc.unfreeze()
    return pool


def parallel_outcomes(plan: SweepPlan, seeds: Sequence[int], *, workers: int = 1, executor: Executor | None = None) -> Iterator[RunOutcome]:
    """Every run's outcome, in seed order, computed by ``executor`` (or by a
    pool of ``workers`` processes of our own). Stop iterating to cancel the rest."""
    return parallel_map(plan, seeds, _run_chunk, workers=workers, executor=executor)


def parallel_map(
    plan: SweepPlan, items: Sequence[T], job: Callable[[SweepPlan, Sequence[T], bool], list[R]], *, workers: int = 1, executor: Executor | None = None
) -> Iterator[R]:
    """``job(plan, chunk, first)`` over chunks of ``items`` (``first``: the
    chunk holding the first item), on ``executor`` or a pool of ``workers``
    processes of our own; each result in the items' order. A worker that dies
    is replaced and its chunks run again. Stop iterating to cancel the rest.
    ``job`` must be a module-level function (it is pickled)."""
    check_picklable(plan)
    chunks = _chunks(items, workers if executor is None else max(workers, 2))
    own = executor is None
    pool: Executor = _new_pool(workers) if own else executor  # type: ignore[assignment]
    futures: list[Future[list[R]]] = [pool.submit(job, plan, chunk, index == 0) for index, chunk in enumerate(chunks)]
    restarts = 0
    try:
        for index in range(len(chunks)):
            while True:
                try:
                    outcomes = futures[index].result()
                    break
                except BrokenProcessPool:
                    # A worker died: every chunk not yet back runs again on a fresh pool.
                    if not own or restarts >= _RESTARTS:
                        raise
                    restarts += 1
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = _new_pool(workers)
                    for later in range(index, len(chunks)):
                        done = futures[later]
                        if not (done.done() and not done.cancelled() and done.exception() is None):
                            futures[later] = pool.submit(job, plan, chunks[later], later == 0)
            yield from outcomes
    except BaseException:
        # (A chunk that could not be sent leaves the pool unable to shut down
        # cleanly: do not wait for it.)
        if own:
            pool.shutdown(wait=False, cancel_futures=True)
            own = False
        raise
    finally:
        for future in futures:
            future.cancel()
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
