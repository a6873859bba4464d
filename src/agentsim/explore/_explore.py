"""``explore`` and ``replay``: sweep seeds for failing interleavings, replay one exactly."""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from typing import Unpack

from .._kernel.errors import LeftoverTasksWarning, SimulationConfigError, UsageError
from .._kernel.policy import SchedulingPolicy
from .._kernel.simulation import SimulationResult, simulate
from ._database import DEFAULT_DIRECTORY, FailureDatabase
from ._report import ExploreReport, Failure, MinimalSchedule, Nondeterminism, SingleScheduleWarning, leaf_exception
from ._schedule import Schedule
from ._shrink import shrink
from .._kernel.options import BackendName, RunOptions
from .._kernel.policy import STRATEGY_EXPECTED, is_strategy
from ._options import ExploreOptions, ExploreSettings
from ._parallel import RunOutcome, SweepPlan, check_executor, parallel_outcomes, worker_count
from ._parallel import run_seed as run_seed_of
from .._kernel.validation import whole

Repro = Callable[[Schedule], str]


class ReplaySettings(TypedDict, total=False):
    """How a replay runs, as keywords (its schedule is ``schedule`` or ``seed`` and ``strategy``)."""

    backend: BackendName
    max_virtual_time: float | None
    wall_timeout: float | None
    allow_escapes: tuple[str, ...]

#: Strategy names ``explore`` sweeps with (see :func:`explore`).
EXPLORE_STRATEGIES = ("random", "pct", "fifo", "jitter")


def function_key(async_fn: Callable[..., Any]) -> str:
    """``module:qualname`` of a function: its key in the failure database."""
    return f"{getattr(async_fn, '__module__', '?')}:{getattr(async_fn, '__qualname__', repr(async_fn))}"


def python_repro(async_fn: Callable[..., Any]) -> Repro:
    """Repro lines as a Python call: ``agentsim.replay(module.fn, schedule='17:random')``."""
    name = f"{getattr(async_fn, '__module__', '?')}.{getattr(async_fn, '__qualname__', '?')}"
    return lambda schedule: f"agentsim.replay({name}, schedule={schedule.encode()!r})"


@contextmanager
def _quiet_leftovers() -> Iterator[None]:
    # A sweep would repeat the same leftover-task warning hundreds of times.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LeftoverTasksWarning)
        yield


class _Runner:
    """Runs one schedule of the explored function with the sweep's settings."""

    def __init__(self, async_fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...], backend: str, options: dict[str, Any]) -> None:
        self.async_fn, self.args, self.backend, self.options = async_fn, args, backend, options

    def run(self, schedule: Schedule) -> SimulationResult[Any]:
        return self.run_policy(schedule.seed, schedule.policy())

    def run_policy(self, seed: int, policy: SchedulingPolicy) -> SimulationResult[Any]:
        with _quiet_leftovers():
            return simulate(
                self.async_fn,
                *self.args,
                seed=seed,
                strategy=policy,
                backend=self.backend,  # type: ignore[arg-type]
                **self.options,
            )


def _propagate(result: SimulationResult[Any], passthrough: tuple[type[BaseException], ...]) -> None:
    """Re-raise what is not a failing schedule: an interrupt, an exit, a skip,
    or a usage error (a sync function given to ``explore``, agentsim's API
    called with bad arguments): no schedule fixes those, so they are the
    caller's to see at once, not failures to shrink."""
    if result.exception is None:
        return
    error = leaf_exception(result.exception)
    if isinstance(error, (KeyboardInterrupt, SystemExit, UsageError, *passthrough)):
        raise error


def _first_difference(first: SimulationResult[Any], second: SimulationResult[Any]) -> Nondeterminism:
    a, b = first.trace.events, second.trace.events
    for index in range(max(len(a), len(b))):
        left = a[index] if index < len(a) else None
        right = b[index] if index < len(b) else None
        if left is None or right is None or (left.ticks, left.kind, left.task, left.detail) != (right.ticks, right.kind, right.task, right.detail):
            offset = first.trace.dropped
            return Nondeterminism(first.seed, first.strategy, offset + index, left, right)
    return Nondeterminism(first.seed, first.strategy, len(first.trace), None, None)


def explore(
    async_fn: Callable[..., Awaitable[Any]],
    *args: Any,
    options: ExploreOptions | None = None,
    key: str | None = None,
    seeds: range | None = None,
    repro: Repro | None = None,
    progress: Callable[[int, int], None] | None = None,
    passthrough: tuple[type[BaseException], ...] = (),
    observer: Callable[[str, int], None] | None = None,
    workers: int | str = 1,
    executor: Executor | None = None,
    **settings: Unpack[ExploreSettings],
) -> ExploreReport:
    """Run ``async_fn(*args)`` under many schedules and report the ones that fail.

    Run 0 is the stock schedule with nominal timing (what ``"fifo"`` runs);
    run ``i`` uses seed ``seed + i`` and ``strategy``: ``"random"``, ``"pct"``,
    ``"fifo"``, ``"jitter"`` (stock order, delays drawn instead of windowed:
    sampling, the baseline), or a :class:`SchedulingPolicy` instance (each run
    gets ``policy.for_seed(seed + i)``). Failing schedules found before (in
    ``database``, a directory; None to disable) are replayed first, and new
    ones are saved there. Each failure is shrunk to the fewest deviations from FIFO order
    and the least delay jitter that still fail the same way, and carries a
    ``repro`` line that replays it::

        report = agentsim.explore(interrupt_race, runs=200, strategy="pct")
        for failure in report.failures:
            print(failure.format())          # seed, minimal timeline, replay line

    ``check_determinism`` runs every schedule twice and reports traces that
    differ (naming the first differing event). ``seeds`` overrides the range
    of seeds (the pytest plugin shards sweeps with it). ``progress`` is called
    with (done, total) after each run; ``observer`` with ``("shrinking", seed)``
    when a failure is found and ``("failure", seed)`` once it is shrunk (the
    command line's progress bar shows both). A run that raises ``KeyboardInterrupt``,
    ``SystemExit`` or one of ``passthrough`` (the pytest plugin passes pytest's
    skip and xfail) ends the sweep by raising it: it is not a failing schedule,
    and nothing is saved. The settings are those of
    :class:`ExploreOptions`, given whole as ``options=`` or field by field
    as keywords (``runs=``, ``strategy=``, ``seed=``, ``backend=``,
    ``stop_on_first=``, ``shrink_failures=``, ``check_determinism=``,
    ``database=``, ``pct_depth=``, ``max_virtual_time=``, ``wall_timeout=``,
    ``allow_escapes=``); keywords go over ``options``.

    ``workers`` runs the sweep over that many local processes (``"auto"``:
    one per core); ``executor`` over any ``concurrent.futures.Executor``
    (a dask ``Client.get_executor()`` for a cluster). Either way the report
    is the serial sweep's for the same seeds (same failures, counts and
    shrunk schedules): workers send back what each run did, and the
    coordinator replays failing schedules to shrink, report and save them.
    The function, its arguments and a policy ``strategy`` must then be
    picklable (a module-level function).
    """
    options = ExploreOptions.resolve(options, settings, where="agentsim.explore")
    runs, strategy, seed = options.runs, options.strategy, options.seed
    stop_on_first, shrink_failures, check_determinism, pct_depth = options.stop_on_first, options.shrink_failures, options.check_determinism, options.pct_depth
    database = options.database
    # Checked before anything runs, as the options above are.
    processes = worker_count(workers)
    check_executor(executor)
    _check_sweep_hooks(async_fn, seeds, key, repro, progress, observer, passthrough)
    template = strategy if isinstance(strategy, SchedulingPolicy) else None
    runner = _Runner(
        async_fn,
        args,
        options.backend,
        {"max_virtual_time": options.max_virtual_time, "wall_timeout": options.wall_timeout, "allow_escapes": options.allow_escapes},
    )
    key = key or function_key(async_fn)
    db = FailureDatabase(database) if database is not None else None
    repro = repro or python_repro(async_fn)
    report = ExploreReport()

    def record_failure(
        schedule: Schedule, result: SimulationResult[Any], from_database: bool, ran: Schedule, minimal: MinimalSchedule | None = None
    ) -> None:
        assert result.exception is not None
        if minimal is None and shrink_failures:
            if observer is not None:
                observer("shrinking", schedule.seed)
            minimal = shrink(runner.run, result, windows=schedule.windows and schedule.strategy != "jitter")
            if minimal is None:
                # The recorded schedule did not fail the same way when replayed:
                # say so loudly, with the first event that differed.
                report.nondeterminism.append(_first_difference(result, runner.run(ran)))
        replay_schedule = minimal.schedule if minimal is not None else schedule
        report.failures.append(
            Failure(
                seed=schedule.seed,
                strategy=schedule.strategy,
                exception=result.exception,
                trace=result.trace,
                repro=repro(replay_schedule),
                schedule=schedule,
                minimal=minimal,
                from_database=from_database,
            )
        )
        if db is not None:
            db.save(key, schedule, minimal.schedule if minimal is not None else None)
        if observer is not None:
            observer("failure", schedule.seed)

    # 1. Failures from earlier sweeps first, as hypothesis does: the minimal
    #    schedule when one was saved (no shrinking again), else the original.
    for entry in db.fetch(key) if db is not None else []:
        report.replayed_from_database += 1
        if entry.minimal is not None:
            result = runner.run(entry.minimal)
            _propagate(result, passthrough)
            if result.exception is not None:
                known = MinimalSchedule(entry.minimal, result.exception, result.trace, shrink_runs=0)
                record_failure(entry.schedule, result, from_database=True, ran=entry.minimal, minimal=known)
                if stop_on_first:
                    return report
                continue
        result = runner.run(entry.schedule)
        _propagate(result, passthrough)
        if result.exception is not None:
            record_failure(entry.schedule, result, from_database=True, ran=entry.schedule)
            if stop_on_first:
                return report
        elif db is not None:
            db.delete(key, entry.schedule)  # fixed since: forget it

    # 2. The sweep. Run 0 (the base seed) is the stock schedule with nominal
    #    timing: a failure there needs no exploring, and its choice points
    #    bound PCT's change points.
    seed_range = seeds if seeds is not None else range(seed, seed + runs)
    total = len(seed_range)
    nominal: SimulationResult[Any] | None = None
    pct_strategy = None
    if strategy == "pct":
        nominal = runner.run(Schedule.nominal(seed))
        pct_strategy = f"pct/{pct_depth}/{max(8, nominal.choice_points)}"
    plan = SweepPlan(async_fn, args, options.backend, runner.options, template or pct_strategy or str(strategy), seed, check_determinism)
    if processes == 1 and executor is None:
        outcomes = _serial_outcomes(plan, seed_range, runner, nominal)
    else:
        outcomes = parallel_outcomes(plan, seed_range, workers=processes, executor=executor)
    digests: set[str] = set()
    orders: set[str] = set()
    try:
        for done, outcome in enumerate(outcomes, start=1):
            run = outcome.result
            if run is None and outcome.failed:
                # A worker's failing run: replayed here (exactly) to report and shrink it.
                run = runner.run(outcome.ran)
            if run is not None:
                _propagate(run, passthrough)
            report.runs_executed += 1
            report.choice_points.append(outcome.choice_points)
            report.windowed_timers += outcome.windowed_timers
            report.jitter_draws += outcome.jitter_draws
            digests.add(outcome.digest)
            orders.add(outcome.order_digest)
            # A failing run's leftovers are the failure's consequence: only a passing run leaks.
            if outcome.leftover_tasks and not outcome.failed and not report.leftover_tasks:
                report.leftover_tasks = outcome.leftover_tasks
            if outcome.differs:
                report.nondeterminism.append(_first_difference(run or runner.run(outcome.ran), runner.run(outcome.ran)))
            if progress is not None:
                progress(done, total)
            if outcome.failed:
                assert run is not None
                if run.exception is None:
                    # Failed in the worker, passed here: the program is not deterministic.
                    report.nondeterminism.append(_first_difference(run, runner.run(outcome.ran)))
                    continue
                record_failure(outcome.schedule, run, from_database=False, ran=outcome.ran)
                if stop_on_first:
                    break
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()  # a parallel sweep cancels what is left
    report.distinct_schedules = len(orders)
    report.distinct_timings = len(digests)
    if report.runs_executed > 1 and not report.failures and report.single_schedule:
        warnings.warn(SingleScheduleWarning.after(report.runs_executed), stacklevel=2)
    if report.leftover_tasks:
        # Once per sweep, not once per run (runs are quiet about it).
        warnings.warn(LeftoverTasksWarning(report.leftover_tasks), stacklevel=2)
    return report


def _check_sweep_hooks(
    async_fn: object, seeds: object, key: object, repro: object, progress: object, observer: object, passthrough: object
) -> None:
    """``explore``'s arguments beyond the options, checked before the sweep."""
    if not callable(async_fn):
        raise SimulationConfigError("async_fn", async_fn, "an async function")
    if seeds is not None:
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, (range, list, tuple)):
            raise SimulationConfigError("seeds", seeds, "a range (or list) of whole-number seeds, or None for seed..seed+runs")
        for each in seeds:
            whole("seeds", each, minimum=-(2**63), expected="whole-number seeds")
    if key is not None and not isinstance(key, str):
        raise SimulationConfigError("key", key, "a string naming the explored function in the failure database, or None")
    for name, hook, signature in (("repro", repro, "schedule -> str"), ("progress", progress, "(done, total)"), ("observer", observer, "(what, seed)")):
        if hook is not None and not callable(hook):
            raise SimulationConfigError(name, hook, f"a function {signature}, or None")
    if not isinstance(passthrough, tuple) or not all(isinstance(kind, type) and issubclass(kind, BaseException) for kind in passthrough):
        raise SimulationConfigError("passthrough", passthrough, "a tuple of exception classes that end the sweep instead of failing a run")


def _serial_outcomes(plan: SweepPlan, seeds: range, runner: _Runner, nominal: SimulationResult[Any] | None) -> Iterator[RunOutcome]:
    """Every run of the sweep in this process, in seed order (with the runs)."""

    def run(schedule: Schedule) -> SimulationResult[Any]:
        # PCT measured the nominal run already: do not run it twice.
        if nominal is not None and schedule == Schedule.nominal(plan.base_seed):
            return nominal
        return runner.run(schedule)

    for index, run_seed in enumerate(seeds):
        outcome, result = run_seed_of(plan, run_seed, index == 0, run, runner.run_policy)
        yield dataclasses.replace(outcome, result=result)


def replay(
    async_fn: Callable[..., Awaitable[Any]],
    *args: Any,
    seed: int = 0,
    strategy: str = "random",
    schedule: Schedule | str | None = None,
    options: RunOptions | None = None,
    **settings: Unpack[ReplaySettings],
) -> SimulationResult[Any]:
    """Replay one schedule exactly and return its :class:`SimulationResult`.

    Give ``seed`` and ``strategy`` (as in a failure's report), or the
    ``schedule`` string of a failure's ``repro`` line (which may be a shrunk
    schedule); how it runs (backend, limits, allowed escapes) as a
    :class:`RunOptions` ``options=`` or as keywords. ``result.unwrap()``
    raises the failure again::

        agentsim.replay(interrupt_race, schedule="17:random").unwrap()
    """
    if isinstance(schedule, str):
        schedule = Schedule.decode(schedule)
    elif schedule is not None and not isinstance(schedule, Schedule):
        raise SimulationConfigError("schedule", schedule, "a schedule string as a report prints it ('17:random', '17:fifo+3=1:j0'), a Schedule, or None")
    if schedule is None:
        if not isinstance(strategy, str) or not is_strategy(strategy):
            raise SimulationConfigError("strategy", strategy, STRATEGY_EXPECTED)
        schedule = Schedule(whole("seed", seed), strategy)
    run_options = RunOptions.resolve(options, settings, where="agentsim.replay")
    return simulate(async_fn, *args, options=run_options.replace(seed=schedule.seed, strategy=schedule.policy()))
