"""Shrinking: the fewest deviations from FIFO order, and the least jitter, that still fail.

A failing run's schedule is "FIFO plus deviations" (its trace records every
choice and what FIFO would have chosen). Delta debugging (Zeller's ddmin)
removes deviations while the same failure persists (same exception type
raised at the same line of the program: its origin); each remaining
deviation is then moved as close to the stock option as still fails (for a
window choice, options are in nominal order: a lower option is a timer
closer to its nominal turn). ddmin's result is 1-minimal, not smallest:
two deviations elsewhere may fail where its five are each needed. So then
every schedule with fewer deviations, up to two, built from the failing
run's choices at any of their options, is run, fewest first; the first that
fails the same way wins, and a report calls the result the smallest only
when every schedule with fewer deviations was run (its
``checked_below``). Last, the delay jitter is scaled toward the nominal
delays, as far as the failure allows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Final

from .._kernel.simulation import SimulationResult
from ._report import MinimalSchedule, exception_site, leaf_exception
from ._schedule import Schedule

RunSchedule = Callable[[Schedule], SimulationResult[object]]


Origin = tuple[type[BaseException], str | None]


def origin(error: BaseException) -> Origin:
    """What identifies a failure: the leaf exception's type and the line of the
    program that raised it (hypothesis's ``InterestingOrigin`` is the model).
    Two assertions of one type on different lines are two bugs."""
    leaf = leaf_exception(error)
    return type(leaf), exception_site(leaf)


OriginKey = tuple[str, str, "str | None"]


def origin_key(error: BaseException) -> OriginKey:
    """:func:`origin` in words that travel between processes (a type
    defined inside a function does not pickle)."""
    kind, site = origin(error)
    return kind.__module__, kind.__qualname__, site


def result_origin(result: object) -> OriginKey | None:
    """The origin key of a run's failure (None: it passed). A run made in
    another process may carry it ready (``origin_key``)."""
    known = getattr(result, "origin_key", None)
    if known is not None:
        return known  # type: ignore[no-any-return]
    exception = getattr(result, "exception", None)
    return None if exception is None else origin_key(exception)


class _Shrinker:
    def __init__(self, run: RunSchedule, seed: int, target: OriginKey, budget: int, windows: bool, delays: bool) -> None:
        self._run = run
        self._seed = seed
        self._windows = windows
        self._delays = delays
        self._target = target
        self._budget = budget
        self.runs = 0
        self.best: SimulationResult[object] | None = None
        self.best_schedule: Schedule | None = None
        self._seen: dict[Schedule, SimulationResult[object]] = {}

    def fails(self, deviations: dict[int, int], jitter: float, *, force: bool = False) -> bool:
        """Whether this schedule fails the same way (False, unrun, once the
        budget is spent, unless ``force``)."""
        return self.outcome(deviations, jitter, force=force) is True

    def outcome(self, deviations: dict[int, int], jitter: float, *, force: bool = False) -> bool | None:
        """:meth:`fails`, or None when the budget is spent and the schedule was never run."""
        schedule = Schedule(self._seed, "replay", deviations, jitter, windows=self._windows, delays=self._delays)
        cached = self._seen.get(schedule)
        if cached is None:
            if self.runs >= self._budget and not force:
                return None
            self.runs += 1
            cached = self._seen[schedule] = self._run(schedule)  # a schedule is run once
        result = cached
        # Only the same failure counts: another one (even of the same type) is
        # not a smaller version of this one.
        if result_origin(result) == self._target:
            self.best, self.best_schedule = result, schedule
            return True
        return False

    def use(self, run: RunSchedule) -> None:
        """Run every schedule with ``run`` from now on (none cached: the
        winner is run again, whole)."""
        self._run = run
        self._seen.clear()

    def allow(self, runs: int) -> None:
        """Grant ``runs`` more runs (the next phase's budget)."""
        self._budget = self.runs + runs


def _ddmin(items: list[tuple[int, int]], fails: Callable[[list[tuple[int, int]]], bool]) -> list[tuple[int, int]]:
    """The classic ddmin over deviations: remove chunks while the test still fails."""
    if fails([]):
        return []
    granularity = 2
    while len(items) >= 2:
        chunk = max(1, len(items) // granularity)
        reduced = False
        for start in range(0, len(items), chunk):
            complement = items[:start] + items[start + chunk :]
            if complement and fails(complement):
                items, granularity, reduced = complement, max(granularity - 1, 2), True
                break
        if not reduced:
            if granularity >= len(items):
                break
            granularity = min(granularity * 2, len(items))
    return items


def _closer_to_stock(
    deviations: list[tuple[int, int]], fifo: dict[int, int], fails: Callable[[list[tuple[int, int]]], bool]
) -> list[tuple[int, int]]:
    """Move each deviation to the option nearest the stock one that still fails."""
    for position, (index, option) in enumerate(deviations):
        stock = fifo.get(index, 0)
        for closer in sorted(range(option), key=lambda candidate: abs(candidate - stock)):
            if closer == stock or abs(closer - stock) >= abs(option - stock):
                continue
            attempt = deviations[:position] + [(index, closer)] + deviations[position + 1 :]
            if fails(attempt):
                deviations = attempt
                break
    return deviations


#: Extra runs the search for a smaller schedule may take after ddmin.
SMALLER_BUDGET: Final = 2000
#: Schedules with up to this many deviations are all tried (the neighbourhood's depth).
NEIGHBOURHOOD_DEPTH: Final = 2


def shrink(
    run: RunSchedule,
    failing: SimulationResult[object],
    *,
    budget: int = 200,
    windows: bool = True,
    delays: bool = False,
    smaller_budget: int = SMALLER_BUDGET,
    full_run: RunSchedule | None = None,
) -> MinimalSchedule | None:
    """The smallest schedule found for ``failing`` (None if its schedule does
    not replay).

    ddmin (``budget`` runs) removes deviations while the same failure
    remains, then each is moved nearer its stock option. Then every schedule
    with fewer deviations, up to :data:`NEIGHBOURHOOD_DEPTH`, each drawn from
    the failing run's deviations at any option of that choice, is run
    (``smaller_budget`` runs; the fewest first): the first that fails the
    same way is the result, and the report says "smallest" only when every
    schedule with fewer deviations was run. ``windows`` is False for a run
    whose delays were drawn (``jitter``). ``run`` may answer with runs made
    elsewhere that carry only their ``exception`` and ``origin_key`` (a
    focused sweep's branches); ``full_run`` then runs the result once more
    from scratch, for its trace."""
    assert failing.exception is not None
    shrinker = _Shrinker(run, failing.seed, origin_key(failing.exception), budget, windows, delays)
    original = sorted(failing.trace.deviations.items())
    if not shrinker.fails(dict(original), 1.0):
        return None  # the recorded schedule does not reproduce: nondeterminism
    deviations = _ddmin(original, lambda items: shrinker.fails(dict(items), 1.0))
    stock = failing.trace.choices.stock_options()
    deviations = _closer_to_stock(deviations, stock, lambda items: shrinker.fails(dict(items), 1.0))
    shrinker.allow(smaller_budget)
    search = _FewerDeviations(dict(original), stock, failing.trace.choices.option_counts())
    smaller, checked_below = search.run(len(deviations), lambda candidate: shrinker.outcome(candidate, 1.0))
    if smaller is not None:
        deviations = sorted(smaller.items())
    shrinker.allow(_JITTER_RUNS)
    jitter = _least_jitter(dict(deviations), shrinker)
    # Re-run the winner so best matches exactly what is reported.
    if full_run is not None:
        shrinker.use(full_run)
    if not shrinker.fails(dict(deviations), jitter, force=True):
        return None  # only a nondeterministic program gets here
    assert shrinker.best is not None and shrinker.best_schedule is not None
    assert shrinker.best.exception is not None
    return MinimalSchedule(
        shrinker.best_schedule,
        shrinker.best.exception,
        shrinker.best.trace,
        shrinker.runs,
        checked_below=checked_below,
        smaller_runs=sum(runs for size, runs in search.checked.items() if size < checked_below),
        failing_deviations=len(original),
    )


#: The jitter phase's runs: nominal, then a binary search of five steps.
_JITTER_RUNS: Final = 6


def _least_jitter(deviations: dict[int, int], shrinker: _Shrinker) -> float:
    """The delay jitter scaled toward nominal as far as the failure allows (1.0:
    as drawn; only a ``jitter`` run's delays scale)."""
    if shrinker.fails(deviations, 0.0):
        return 0.0
    low, high = 0.0, 1.0  # fails at high, not at low
    for _ in range(5):
        middle = (low + high) / 2
        if shrinker.fails(deviations, middle):
            high = middle
        else:
            low = middle
    return high


class _FewerDeviations:
    """Every schedule with fewer deviations than ddmin's result, up to
    :data:`NEIGHBOURHOOD_DEPTH`, fewest first: each deviation one of the
    failing run's choices (by number, as replay addresses them) at any of
    its options but the stock one. Within a size, the nearest to stock
    first (the sum of each option's distance from the stock option)."""

    def __init__(self, failing: dict[int, int], stock: dict[int, int], counts: dict[int, int]) -> None:
        self._choices = sorted(failing)
        self._stock = stock
        self._counts = counts
        #: How many schedules of each size were checked.
        self.checked: dict[int, int] = {}

    def candidates(self, size: int) -> list[dict[int, int]]:
        """Every schedule of ``size`` deviations, nearest to stock first."""
        found = []
        for numbers in itertools.combinations(self._choices, size):
            alternatives = [[option for option in range(self._counts.get(number, 2)) if option != self._stock.get(number, 0)] for number in numbers]
            for options in itertools.product(*alternatives):
                distance = sum(abs(option - self._stock.get(number, 0)) for number, option in zip(numbers, options))
                found.append((distance, numbers, options))
        found.sort()
        return [dict(zip(numbers, options)) for _, numbers, options in found]

    def run(self, deviations: int, outcome: Callable[[dict[int, int]], bool | None]) -> tuple[dict[int, int] | None, int]:
        """The first schedule with fewer than ``deviations`` deviations whose
        ``outcome`` is a failure of the same origin (None if none), and the
        size below which every schedule was checked (the depth, or where
        the budget ran out: ``outcome`` None)."""
        for size in range(min(deviations, NEIGHBOURHOOD_DEPTH + 1)):
            for candidate in self.candidates(size):
                failed = outcome(candidate)
                if failed is None:
                    return None, size
                self.checked[size] = self.checked.get(size, 0) + 1
                if failed:
                    return candidate, size
        return None, min(deviations, NEIGHBOURHOOD_DEPTH + 1)


def simpler_failing_neighbours(run: RunSchedule, minimal: MinimalSchedule) -> list[str]:
    """The single steps from ``minimal`` toward stock order that still fail
    the same way (same origin): dropping one deviation, or moving one to an
    option nearer the stock one. Empty: the schedule is a local minimum.
    Used by the minimality test and benchmark; each neighbour is one run."""
    target = origin(minimal.exception)
    base = minimal.schedule
    deviations = minimal.deviations
    stock = minimal.trace.choices.stock_options()

    def fails(candidate: dict[int, int]) -> bool:
        result = run(Schedule(base.seed, "replay", candidate, base.jitter, windows=base.windows, delays=base.delays))
        return result.exception is not None and origin(result.exception) == target

    found = []
    for index, option in deviations.items():
        if fails({k: v for k, v in deviations.items() if k != index}):
            found.append(f"drop deviation {index}")
        home = stock.get(index, 0)
        for closer in range(option):
            if closer != home and abs(closer - home) < abs(option - home) and fails({**deviations, index: closer}):
                found.append(f"move deviation {index} to option {closer}")
    return found
