"""The shrinker's search for the smallest schedule, and what a report claims
of it: ddmin stops at a 1-minimal schedule, and the search then runs every
schedule with fewer deviations (up to two), built from the failing run's
choices at any of their options, fewest first.

The search is tested on a stand-in program whose failure is a known function
of its schedule (so that ddmin provably stops too high); real programs in
tests/examples/test_minimality.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentsim import Schedule
from agentsim.explore._shrink import NEIGHBOURHOOD_DEPTH, shrink


class Broken(AssertionError):
    pass


def _raise() -> None:
    raise Broken("the same line every time")  # one origin for every failing run


def _failure() -> Broken:
    try:
        _raise()
    except Broken as error:
        return error
    raise AssertionError("unreachable")


@dataclass
class _Choices:
    stock: dict[int, int]
    counts: dict[int, int]

    def stock_options(self) -> dict[int, int]:
        return dict(self.stock)

    def option_counts(self) -> dict[int, int]:
        return dict(self.counts)


@dataclass
class _Trace:
    deviations: dict[int, int]
    choices: _Choices


@dataclass
class _Result:
    exception: BaseException | None
    trace: _Trace
    seed: int = 7


@dataclass
class StandIn:
    """A program whose failure is ``fails(deviations)``; its failing run took
    ``deviations``, each choice having ``counts`` options (stock option 0)."""

    fails: Callable[[dict[int, int]], bool]
    deviations: dict[int, int]
    counts: dict[int, int]
    ran: list[dict[int, int]] = field(default_factory=list)

    def run(self, schedule: Schedule) -> Any:
        deviations = dict(schedule.deviations or {})
        self.ran.append(deviations)
        return _Result(_failure() if self.fails(deviations) else None, self.trace(deviations))

    def trace(self, deviations: dict[int, int]) -> _Trace:
        return _Trace(deviations, _Choices({number: 0 for number in self.deviations}, self.counts))

    def failing(self) -> Any:
        assert self.fails(self.deviations)
        return _Result(_failure(), self.trace(self.deviations))


def test_two_deviations_found_where_ddmin_stops_at_three() -> None:
    # Fails with choices 1, 2 and 3 all deviating unless 5 does too (ddmin's
    # 1-minimal answer: three), or with exactly choice 1 at option 2 and
    # choice 6 at option 1 (an option the failing run never took).
    def fails(deviations: dict[int, int]) -> bool:
        return ({1, 2, 3} <= deviations.keys() and 5 not in deviations) or deviations == {1: 2, 6: 1}

    program = StandIn(fails, {1: 1, 2: 1, 3: 1, 6: 1}, {1: 3, 2: 2, 3: 2, 6: 3})
    minimal = shrink(program.run, program.failing())
    assert minimal is not None
    assert minimal.deviations == {1: 2, 6: 1}
    assert minimal.smallest and minimal.checked_below == 2
    assert minimal.size_claim() == (
        "the smallest: no schedule with fewer deviations fails the same way "
        "(all 7 checked: up to 1 of the failing run's 4 deviating choices, each at any option)"
    )
    # Every schedule with 0 or 1 deviation was run before it: stock, and each
    # choice at each of its other options (2 + 1 + 1 + 2).
    assert {} in program.ran
    singles = [ran for ran in program.ran if len(ran) == 1]
    assert sorted(map(tuple, (sorted(s.items()) for s in singles))) == sorted(
        [((1, 1),), ((1, 2),), ((2, 1),), ((3, 1),), ((6, 1),), ((6, 2),)]
    )


def test_ddmin_result_kept_and_called_smallest_when_nothing_smaller_fails() -> None:
    def fails(deviations: dict[int, int]) -> bool:
        return {2, 4} <= deviations.keys()

    program = StandIn(fails, {1: 1, 2: 1, 3: 1, 4: 1}, {1: 2, 2: 2, 3: 2, 4: 2})
    minimal = shrink(program.run, program.failing())
    assert minimal is not None and minimal.deviations == {2: 1, 4: 1}
    assert minimal.smallest and minimal.checked_below == 2
    assert minimal.smaller_runs == 1 + 4  # stock, and each single deviation


def test_beyond_the_depth_the_claim_says_how_far_it_checked() -> None:
    # Needs four deviations: nothing with at most two fails, nothing with three is tried.
    def fails(deviations: dict[int, int]) -> bool:
        return {1, 2, 3, 4} <= deviations.keys()

    program = StandIn(fails, {1: 1, 2: 1, 3: 1, 4: 1, 5: 1}, dict.fromkeys(range(1, 6), 2))
    minimal = shrink(program.run, program.failing())
    assert minimal is not None and len(minimal.deviations) == 4
    assert not minimal.smallest and minimal.checked_below == NEIGHBOURHOOD_DEPTH + 1
    pairs = {tuple(sorted(ran)) for ran in program.ran if len(ran) == 2}
    assert len(pairs) == 10  # every pair of the five choices (one option each besides stock)
    claim = minimal.size_claim()
    assert "no schedule with at most 2 deviation(s) fails the same way" in claim and "3 to 3 were not all tried" in claim


@pytest.mark.parametrize("smaller_budget", [0, 3])
def test_a_spent_budget_claims_nothing_it_did_not_check(smaller_budget: int) -> None:
    def fails(deviations: dict[int, int]) -> bool:
        return {1, 2, 3} <= deviations.keys()

    program = StandIn(fails, {1: 1, 2: 1, 3: 1, 4: 1}, dict.fromkeys(range(1, 5), 2))
    minimal = shrink(program.run, program.failing(), smaller_budget=smaller_budget)
    assert minimal is not None and minimal.deviations == {1: 1, 2: 1, 3: 1}
    assert not minimal.smallest
    assert "the smallest" not in minimal.size_claim()
