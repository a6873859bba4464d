"""Where the explorer's schedules come from.

A source yields :class:`Candidate` runs, one at a time, in the order the
report tells them; the explorer's pipeline (``_explore``) counts them,
shrinks and reports the failing ones and stops where it is told to. Two
sources exist:

* :class:`SavedFailures`: the failing schedules an earlier sweep kept in the
  failure database, tried first (as hypothesis replays its examples first);
* :class:`SeedSweep`: a seeded sweep (random, PCT, jitter, a policy), in this
  process, on local workers or on any executor.

A new way to find schedules (an exhaustive enumeration, a recorded session,
hypothesis) is one more class with a ``candidates`` method.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Protocol

from .._kernel.scheduling import SchedulingPolicy, sized_for_a_sweep
from .._kernel.simulation import SimulationResult
from ._database import FailureDatabase
from ._parallel import RunOutcome, SweepPlan, function_by_value, parallel_outcomes, run_seed
from ._report import MinimalSchedule
from ._runner import Runner
from ._schedule import Schedule


@dataclass(frozen=True)
class Candidate:
    """One run a source made: the ``schedule`` the report names, the one that
    ``ran`` (they differ for a sweep's run 0 and a saved minimal schedule),
    and its ``result`` (None for a run a worker made that passed)."""

    schedule: Schedule
    ran: Schedule
    result: SimulationResult[Any] | None
    #: A sweep's run, as the report counts it (None: not counted as explored).
    outcome: RunOutcome | None = None
    #: The failure's minimal schedule when it is known already (saved).
    minimal: MinimalSchedule | None = None
    from_database: bool = False
    #: How the report names the run when its schedule's strategy does not
    #: say it (a focused branch: its member, checkpoint and window).
    label: str = ""
    #: How the shrinker runs this failure's schedules, when not from scratch
    #: here (a focused branch: from its parked checkpoint).
    shrink_run: Callable[[Schedule], Any] | None = None

    @property
    def failed(self) -> bool:
        return self.result is not None and self.result.exception is not None


class ScheduleSource(Protocol):
    """Yields the runs of one way of choosing schedules."""

    def candidates(self, runner: Runner) -> Iterator[Candidate]: ...


class SavedFailures:
    """The failures an earlier sweep saved under ``key``: the minimal schedule
    when one was saved (no shrinking again), else — or when that one passes
    now — the original. An entry whose schedules all pass is forgotten (the
    bug is fixed); one candidate per entry either way."""

    def __init__(self, database: FailureDatabase | None, key: str) -> None:
        self.database = database
        self.key = key

    def candidates(self, runner: Runner) -> Iterator[Candidate]:
        if self.database is None:
            return
        for entry in self.database.fetch(self.key):
            if entry.minimal is not None:
                result = runner.run(entry.minimal)
                if result.exception is not None:
                    known = MinimalSchedule(entry.minimal, result.exception, result.trace, shrink_runs=0)
                    yield Candidate(entry.schedule, entry.minimal, result, minimal=known, from_database=True)
                    continue
            result = runner.run(entry.schedule)
            if result.exception is None:
                self.database.delete(self.key, entry.schedule)  # fixed since: forget it
            yield Candidate(entry.schedule, entry.schedule, result, from_database=True)


class ParallelSource:
    """A source that may run on ``processes`` local workers or an ``executor``."""

    def __init__(self, processes: int = 1, executor: Executor | None = None) -> None:
        self._processes = processes
        self._executor = executor
        #: A function sent by value, pickled now: before any run leaves state
        #: in its module (a saved failure's replay, PCT's measuring run).
        self._function_payload: bytes | None = None

    def prepare(self, async_fn: Callable[..., Any]) -> None:
        """Take what must be taken before anything runs: a parallel sweep's
        function, if it travels by value (``function_by_value``)."""
        if self._processes > 1 or self._executor is not None:
            self._function_payload = function_by_value(async_fn)


class SeedSweep(ParallelSource):
    """The seeded sweep over ``seeds``. Run 0 (the base seed) is the stock
    schedule with nominal timing: a failure there needs no exploring, and its
    choice points bound PCT's change points (measured first, for PCT)."""

    def __init__(
        self,
        strategy: str | SchedulingPolicy,
        seeds: Sequence[int],
        *,
        base_seed: int,
        pct_depth: int,
        check_determinism: bool,
        processes: int = 1,
        executor: Executor | None = None,
    ) -> None:
        super().__init__(processes, executor)
        self.seeds = seeds
        self._strategy = strategy
        self._base_seed = base_seed
        self._pct_depth = pct_depth
        self._check_determinism = check_determinism

    def candidates(self, runner: Runner) -> Iterator[Candidate]:
        if not self.seeds:
            return  # (zero runs: not even a strategy's measuring run)
        nominal: SimulationResult[Any] | None = None

        def nominal_choice_points() -> int:
            nonlocal nominal
            nominal = runner.run(Schedule.nominal(self._base_seed))
            return nominal.choice_points

        strategy = sized_for_a_sweep(self._strategy, self._pct_depth, nominal_choice_points)
        plan = SweepPlan(
            runner.async_fn, runner.args, runner.backend, runner.options, strategy, self._base_seed, self._check_determinism, self._function_payload
        )
        if self._processes == 1 and self._executor is None:
            outcomes: Iterator[RunOutcome] = _serial_outcomes(plan, self.seeds, runner, nominal)
        else:
            outcomes = parallel_outcomes(plan, self.seeds, workers=self._processes, executor=self._executor)
        try:
            for outcome in outcomes:
                result = outcome.result
                if result is None and outcome.failed:
                    # A worker's failing run: replayed here (exactly) to report and shrink it.
                    result = runner.run(outcome.ran)
                yield Candidate(outcome.schedule, outcome.ran, result, outcome=outcome)
        finally:
            close = getattr(outcomes, "close", None)
            if close is not None:
                close()  # a parallel sweep cancels what is left


def _serial_outcomes(plan: SweepPlan, seeds: Sequence[int], runner: Runner, nominal: SimulationResult[Any] | None) -> Iterator[RunOutcome]:
    """Every run of the sweep in this process, in seed order (with the runs)."""

    def run(schedule: Schedule) -> SimulationResult[Any]:
        # PCT measured the nominal run already: do not run it twice.
        if nominal is not None and schedule == Schedule.nominal(plan.base_seed):
            return nominal
        return runner.run(schedule)

    for index, seed in enumerate(seeds):
        outcome, result = run_seed(plan, seed, index == 0, run, runner.run_policy)
        yield dataclasses.replace(outcome, result=result)
