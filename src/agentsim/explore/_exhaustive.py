"""Bounded-exhaustive exploration: every schedule with at most k deviations.

A schedule is the stock schedule plus deviations (choice number → option).
The source runs the stock schedule, then every schedule with one deviation,
then two, … up to ``depth`` (as CHESS bounds preemptions): a schedule of
``d`` deviations is extended only at choices *after* its last deviation, at
every option but the stock one, read off its own run's choice log (the
choices before its last deviation are the same as its parent's, so each set
of deviations is made exactly once). Timing is included: runs time their
delays (``delays``), so a lone window's landing is a choice like any other.

Two schedules whose runs left the same trace (events and choices) have the
same extensions: only the first is extended (the rest are counted, not
repeated). When every schedule up to ``depth`` ran, the space is exhausted
and a passing report can say so; a run budget that ends it first says how
far it got.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import Executor
from functools import partial
from typing import Any

from .._kernel.simulation import SimulationResult
from ._parallel import RunOutcome, SweepPlan, outcome_of, parallel_map
from ._runner import Runner
from ._schedule import Schedule
from ._sources import Candidate, ParallelSource

#: A schedule's deviations (choice number -> option).
Deviations = dict[int, int]
#: One run of the enumeration: its outcome, and the schedules extending it
#: (a str: why they cannot be listed; None: not asked, the last level).
Extended = tuple[RunOutcome, "list[Deviations] | str | None"]


def schedule_of(seed: int, deviations: Deviations) -> Schedule:
    """The schedule of ``deviations``: replayed with timed delays, no jitter."""
    return Schedule(seed, "replay", deviations, 0.0, windows=True, delays=True)


def extensions(deviations: Deviations, result: SimulationResult[Any]) -> list[Deviations] | str:
    """``deviations`` plus one more, at each choice after its last, at each
    non-stock option (or why they cannot be listed: a run whose early
    choices are no longer kept)."""
    choices = result.trace.choices
    if choices.dropped:
        return f"a run made {len(choices)} choices and kept only the last {len(choices) - choices.dropped}"
    after = max(deviations, default=-1)
    found = []
    for number, choice in enumerate(choices):
        if number > after:
            found += [{**deviations, number: option} for option in range(choice.options) if option != choice.fifo]
    return found


def run_level(runner: Runner, seed: int, level: Sequence[Deviations], extend: bool) -> Iterator[tuple[Extended, SimulationResult[Any]]]:
    """Each schedule of ``level``, in order, with its extensions if ``extend``."""
    for deviations in level:
        schedule = schedule_of(seed, deviations)
        result = runner.run(schedule)
        yield (outcome_of(result, schedule, schedule), extensions(deviations, result) if extend else None), result


def _run_level_chunk(plan: SweepPlan, chunk: Sequence[Deviations], first: bool, *, extend: bool) -> list[Extended]:
    """A worker's job: a chunk of one level (no run objects sent back)."""
    runner = Runner(plan.async_fn, plan.args, plan.backend, plan.options)
    return [extended for extended, _ in run_level(runner, plan.base_seed, chunk, extend)]


class ExhaustiveSweep(ParallelSource):
    """Every schedule within ``depth`` deviations of the stock schedule of
    ``seed``, fewest deviations first, at most ``budget`` runs; in this
    process, or level by level on ``processes`` local workers or an
    ``executor`` (the same runs, in the same order, as serially)."""

    def __init__(self, seed: int, depth: int, budget: int, *, processes: int = 1, executor: Executor | None = None) -> None:
        super().__init__(processes, executor)
        self.seed = seed
        self.depth = depth
        self.budget = budget
        #: Schedules run, and how many of them left a trace not seen before.
        self.runs = 0
        self.distinct = 0
        #: Every schedule with at most this many deviations ran (-1: not even the stock one).
        self.complete_depth = -1
        #: True once every schedule within ``depth`` ran (the space is exhausted).
        self.exhausted = False
        #: Why the enumeration could not be complete (a run whose early choices were not kept).
        self.incomplete: str | None = None

    def candidates(self, runner: Runner) -> Iterator[Candidate]:
        frontier: list[Deviations] = [{}]
        seen: set[str] = set()
        for level in range(self.depth + 1):
            level_runs = frontier[: max(0, self.budget - self.runs)]
            extended: list[Deviations] = []
            for (outcome, more), result in self._run(runner, level_runs, level < self.depth):
                self.runs += 1
                new = outcome.digest not in seen  # (else the same run as one already extended: the same extensions)
                if new:
                    seen.add(outcome.digest)
                    self.distinct += 1
                if result is None and outcome.failed:
                    result = runner.run(outcome.ran)  # a worker's failing run, replayed here to report and shrink it
                yield Candidate(outcome.schedule, outcome.ran, result, outcome=outcome)
                if isinstance(more, str):
                    self.incomplete = more
                elif new and more is not None:
                    extended += more
            if len(level_runs) < len(frontier):
                return  # the run budget ended this level
            self.complete_depth = level
            frontier = extended
        self.exhausted = self.incomplete is None

    def _run(self, runner: Runner, level: list[Deviations], extend: bool) -> Iterator[tuple[Extended, SimulationResult[Any] | None]]:
        if self._processes == 1 and self._executor is None:
            yield from run_level(runner, self.seed, level, extend)
            return
        plan = SweepPlan(runner.async_fn, runner.args, runner.backend, runner.options, "exhaustive", self.seed, False, self._function_payload)
        job = partial(_run_level_chunk, extend=extend)
        outcomes = parallel_map(plan, level, job, workers=self._processes, executor=self._executor)
        try:
            for extended in outcomes:
                yield extended, None
        finally:
            outcomes.close()  # type: ignore[attr-defined]  # (a generator: stopping cancels what is left)

    def sentence(self, failed: bool) -> str:
        """What the sweep covered, in words (the report's completeness line)."""
        counted = f"{self.runs} schedule(s), {self.distinct} distinct"
        if self.exhausted and not failed:
            return f"exhaustive to depth {self.depth}: {counted}, all pass"
        if self.exhausted:
            return f"exhaustive to depth {self.depth}: {counted}"
        if self.incomplete is not None:
            return f"exhaustive search incomplete: {self.incomplete}, too long a run to enumerate (lower the depth, or explore it with the default strategy); {counted} ran"
        if failed:
            return f"exhaustive search stopped at the first failure after {counted}"
        reached = f"every schedule with at most {self.complete_depth} deviation(s) ran" if self.complete_depth >= 0 else "not even the stock schedule ran"
        return f"exhaustive search to depth {self.depth} stopped at the run budget ({counted}): {reached}; raise runs to finish"
