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

from collections.abc import Iterator
from typing import Any

from .._kernel.simulation import SimulationResult
from ._parallel import outcome_of
from ._runner import Runner
from ._schedule import Schedule
from ._sources import Candidate


class ExhaustiveSweep:
    """Every schedule within ``depth`` deviations of the stock schedule of
    ``seed``, fewest deviations first, at most ``budget`` runs."""

    def __init__(self, seed: int, depth: int, budget: int) -> None:
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
        self.seeds: range = range(0)  # (the pipeline's progress total: unknown ahead)

    def schedule(self, deviations: dict[int, int]) -> Schedule:
        """The schedule of ``deviations``: replayed with timed delays, no jitter."""
        return Schedule(self.seed, "replay", deviations, 0.0, windows=True, delays=True)

    def candidates(self, runner: Runner) -> Iterator[Candidate]:
        frontier: list[dict[int, int]] = [{}]
        seen: set[str] = set()
        for level in range(self.depth + 1):
            extensions: list[dict[int, int]] = []
            for deviations in frontier:
                if self.runs >= self.budget:
                    return
                schedule = self.schedule(deviations)
                result = runner.run(schedule)
                self.runs += 1
                digest = result.trace.digest()
                new = digest not in seen  # (else the same run as one already extended: the same extensions)
                if new:
                    seen.add(digest)
                    self.distinct += 1
                yield Candidate(schedule, schedule, result, outcome=outcome_of(result, schedule, schedule))
                if new and level < self.depth:
                    extensions += self._extensions(deviations, result)
            self.complete_depth = level
            frontier = extensions
        self.exhausted = self.incomplete is None

    def _extensions(self, deviations: dict[int, int], result: SimulationResult[Any]) -> list[dict[int, int]]:
        """``deviations`` plus one more, at each choice after its last, at each non-stock option."""
        choices = result.trace.choices
        if choices.dropped:
            self.incomplete = f"a run made {len(choices)} choices and kept only the last {len(choices) - choices.dropped}"
            return []
        after = max(deviations, default=-1)
        found = []
        for number, choice in enumerate(choices):
            if number > after:
                found += [{**deviations, number: option} for option in range(choice.options) if option != choice.fifo]
        return found

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
