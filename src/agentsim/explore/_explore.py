"""``explore`` and ``replay``: sweep seeds for failing interleavings, replay one exactly."""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from typing import Unpack

from .._kernel.errors import LeftoverTasksWarning, SimulationConfigError
from .._kernel.options import BackendName, RunOptions
from .._kernel.scheduling import STRATEGY_EXPECTED, is_strategy
from .._kernel.simulation import SimulationResult, patches_held, simulate
from .._kernel.validation import whole
from ._database import FailureDatabase
from ._options import ExploreOptions, ExploreSettings
from ._parallel import check_executor, worker_count
from ._report import ExploreReport, Failure, SingleScheduleWarning
from ._runner import Runner, first_difference, propagate
from ._schedule import Schedule
from ._shrink import shrink
from ._exhaustive import ExhaustiveSweep
from ._options import EXHAUSTIVE
from ._sources import Candidate, SavedFailures, ScheduleSource, SeedSweep
from ._branched import FocusedSweep

Repro = Callable[[Schedule], str]


class ReplaySettings(TypedDict, total=False):
    """How a replay runs, as keywords (its schedule is ``schedule`` or ``seed`` and ``strategy``)."""

    backend: BackendName
    max_virtual_time: float | None
    wall_timeout: float | None
    allow_escapes: tuple[str, ...]


#: Strategy names ``explore`` sweeps with (see :func:`explore`).
EXPLORE_STRATEGIES = ("portfolio", "random", "timed", "pct", "fifo", "jitter", "exhaustive")


def function_key(async_fn: Callable[..., Any]) -> str:
    """``module:qualname`` of a function: its key in the failure database."""
    return f"{getattr(async_fn, '__module__', '?')}:{getattr(async_fn, '__qualname__', repr(async_fn))}"


def python_repro(async_fn: Callable[..., Any]) -> Repro:
    """Repro lines as a Python call: ``agentsim.replay(module.fn, schedule='17:random')``."""
    name = f"{getattr(async_fn, '__module__', '?')}.{getattr(async_fn, '__qualname__', '?')}"
    return lambda schedule: f"agentsim.replay({name}, schedule={schedule.encode()!r})"


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
    run ``i`` uses seed ``seed + i`` and ``strategy``: ``"portfolio"`` (the
    default: each run one of the others, drawn from its seed), ``"random"``
    (orders, windows searched), ``"timed"`` (orders and where each delay
    lands in its window), ``"pct"``, ``"fifo"``, ``"jitter"`` (stock order,
    delays drawn instead of windowed: sampling), or a
    :class:`SchedulingPolicy` instance (each run gets
    ``policy.for_seed(seed + i)``). Failing schedules found before (in
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
    ``allow_escapes=``, ``focus=``); keywords go over ``options``.

    ``focus=(start, end)`` (or moment labels, a :class:`Focus`) keeps every
    deviation inside that window of virtual time, each run branched from a
    checkpoint (``report.branching``; docs/explore.md, "Focus").

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
    runner = Runner(
        async_fn,
        args,
        options.backend,
        {"max_virtual_time": options.max_virtual_time, "wall_timeout": options.wall_timeout, "allow_escapes": options.allow_escapes},
    )
    key = key or function_key(async_fn)
    db = FailureDatabase(database) if database is not None else None
    pipeline = _Pipeline(runner, db, key, repro or python_repro(async_fn), options, passthrough, observer)
    if options.focus is not None:
        return _explore_focused(pipeline, SavedFailures(db, key), _focused_sweep(options, seeds, processes, executor), progress)
    if strategy == EXHAUSTIVE:
        exhaustive = ExhaustiveSweep(seed, options.max_deviations, runs, processes=processes, executor=executor)
        exhaustive.prepare(async_fn)
        return _explore_exhaustively(pipeline, SavedFailures(db, key), exhaustive, progress)
    sweep = SeedSweep(
        strategy,
        seeds if seeds is not None else range(seed, seed + runs),
        base_seed=seed,
        pct_depth=pct_depth,
        check_determinism=check_determinism,
        processes=processes,
        executor=executor,
    )
    sweep.prepare(async_fn)
    # Failures from earlier sweeps first, as hypothesis does; then the sweep.
    for source in (SavedFailures(db, key), sweep):
        if pipeline.take(source, progress=progress, total=len(sweep.seeds)):
            break
    return pipeline.finish()


def _focused_sweep(options: ExploreOptions, seeds: range | None, processes: int, executor: Executor | None) -> FocusedSweep:
    """The focused sweep of ``options`` (``focus`` set)."""
    if executor is not None:
        raise SimulationConfigError("executor", executor, "None with focus= (a focused sweep forks its branches on this machine, one per core)")
    assert options.focus is not None
    run_seeds = seeds if seeds is not None else range(options.seed, options.seed + options.runs)
    return FocusedSweep(options.focus, options.strategy, run_seeds, pct_depth=options.pct_depth, at_once=processes if processes > 1 else None)


def _explore_focused(pipeline: _Pipeline, saved: SavedFailures, sweep: FocusedSweep, progress: Callable[[int, int], None] | None) -> ExploreReport:
    """A focused sweep: saved failures first, then the branches; the report
    says what branching did."""
    if not pipeline.take(saved):
        pipeline.take(sweep, progress=progress, total=len(sweep.seeds))
    report = pipeline.finish()
    report.branching = sweep.branching
    return report


def _explore_exhaustively(pipeline: _Pipeline, saved: SavedFailures, sweep: ExhaustiveSweep, progress: Callable[[int, int], None] | None) -> ExploreReport:
    """An exhaustive sweep: saved failures first, then the enumeration; the
    report says what it covered."""
    if not pipeline.take(saved):
        pipeline.take(sweep, progress=progress, total=sweep.budget)
    report = pipeline.finish()
    report.exhausted = sweep.exhausted
    report.exhaustive_depth = sweep.complete_depth if sweep.complete_depth >= 0 else None
    report.completeness = sweep.sentence(bool(report.failures))
    return report


class _Pipeline:
    """Takes the runs of the sources in turn: counts them into the report,
    shrinks, reports and saves each failure, and says when to stop."""

    def __init__(
        self,
        runner: Runner,
        database: FailureDatabase | None,
        key: str,
        repro: Repro,
        options: ExploreOptions,
        passthrough: tuple[type[BaseException], ...],
        observer: Callable[[str, int], None] | None,
    ) -> None:
        self.report = ExploreReport()
        self._runner, self._database, self._key, self._repro = runner, database, key, repro
        self._options, self._passthrough, self._observer = options, passthrough, observer
        self._digests: set[str] = set()
        self._orders: set[str] = set()

    def take(self, source: ScheduleSource, *, progress: Callable[[int, int], None] | None = None, total: int = 0) -> bool:
        """Every run of ``source``; True when the sweep must stop (a failure,
        ``stop_on_first``). The simulation's patches stay installed meanwhile."""
        with patches_held():
            return self._take(source, progress, total)

    def _take(self, source: ScheduleSource, progress: Callable[[int, int], None] | None, total: int) -> bool:
        done = 0
        for candidate in source.candidates(self._runner):
            propagate(candidate.result, self._passthrough)
            if candidate.from_database:
                self.report.replayed_from_database += 1
            if candidate.outcome is not None:
                done += 1
                self._count(candidate)
                if progress is not None:
                    progress(done, total)
            if candidate.outcome is not None and candidate.outcome.failed and not candidate.failed:
                # Failed in the worker, passed here: the program is not deterministic.
                assert candidate.result is not None
                self.report.nondeterminism.append(first_difference(candidate.result, self._runner.run(candidate.ran)))
                continue
            if candidate.failed:
                self._record_failure(candidate)
                if self._options.stop_on_first:
                    return True
        return False

    def _count(self, candidate: Candidate) -> None:
        outcome, report = candidate.outcome, self.report
        assert outcome is not None
        report.runs_executed += 1
        report.choice_points.append(outcome.choice_points)
        if report.stock_choice_points is None and candidate.ran == Schedule.nominal(candidate.ran.seed):
            report.stock_choice_points = outcome.choice_points  # run 0: the stock schedule
        else:
            report.explored_choice_points.append(outcome.choice_points)
        report.windowed_timers += outcome.windowed_timers
        report.jitter_draws += outcome.jitter_draws
        coverage = report.coverage
        for label, held in outcome.coverage:
            coverage[label] = coverage.get(label, 0) + held
        self._digests.add(outcome.digest)
        self._orders.add(outcome.order_digest)
        # A failing run's leftovers are the failure's consequence: only a passing run leaks.
        if outcome.leftover_tasks and not outcome.failed and not report.leftover_tasks:
            report.leftover_tasks = outcome.leftover_tasks
        if outcome.differs:
            first = candidate.result if candidate.result is not None else self._runner.run(outcome.ran)
            report.nondeterminism.append(first_difference(first, self._runner.run(outcome.ran)))

    def _record_failure(self, candidate: Candidate) -> None:
        result, schedule, minimal = candidate.result, candidate.schedule, candidate.minimal
        assert result is not None and result.exception is not None
        observer = self._observer
        if minimal is None and self._options.shrink_failures:
            if observer is not None:
                observer("shrinking", schedule.seed)
            policy = schedule.policy()  # (what the run did: drew, windowed or timed its delays)
            run = candidate.shrink_run or self._runner.run
            full_run = self._runner.run if candidate.shrink_run is not None else None
            minimal = shrink(run, result, windows=policy.windows, delays=policy.times_delays, full_run=full_run)
            if minimal is None:
                # The recorded schedule did not fail the same way when replayed:
                # say so loudly, with the first event that differed.
                self.report.nondeterminism.append(first_difference(result, self._runner.run(candidate.ran)))
        self.report.failures.append(
            Failure(
                seed=schedule.seed,
                strategy=candidate.label or schedule.strategy,
                exception=result.exception,
                trace=result.trace,
                repro=self._repro(minimal.schedule if minimal is not None else schedule),
                schedule=schedule,
                minimal=minimal,
                from_database=candidate.from_database,
            )
        )
        if self._database is not None:
            self._database.save(self._key, schedule, minimal.schedule if minimal is not None else None)
        if observer is not None:
            observer("failure", schedule.seed)

    def finish(self) -> ExploreReport:
        """The report, with the sweep's distinct counts and its health warnings."""
        report = self.report
        report.distinct_schedules = len(self._orders)
        report.distinct_timings = len(self._digests)
        report.required = self._options.require
        if report.runs_executed > 1 and not report.failures and report.single_schedule:
            warnings.warn(SingleScheduleWarning.after(report.runs_executed), stacklevel=3)
        elif not report.failures and report.single_timing:
            warnings.warn(SingleScheduleWarning.with_windows(report.runs_executed, report.windowed_timers), stacklevel=3)
        if report.leftover_tasks:
            # Once per sweep, not once per run (runs are quiet about it).
            warnings.warn(LeftoverTasksWarning(report.leftover_tasks), stacklevel=3)
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
