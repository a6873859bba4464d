"""``strategy="exhaustive"``: every schedule within ``max_deviations`` of the
stock schedule, orders and timings, each once; a passing sweep that covered
the bounded space says so, and one that ran out of runs says how far it got.

Held-out races need exactly 1, 2 and 3 deviations (narrow overlaps that
must each go the rare way) and a lateness race needs 2 timing deviations:
exhaustive to one less passes with ``exhausted=True``, to the depth they
need finds them; their fixed twins end exhausted with no failure."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import agentsim
from agentsim import SimulationConfigError
from agentsim.explore import ExploreReport
from agentsim.integrations.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES / "lateness"))
sys.path.insert(0, str(EXAMPLES / "windows"))

import reply_chain_vs_deadline  # noqa: E402
from barge_in_then_tool_result import _first  # noqa: E402  (which of two windows overlapping by 5 ms ends first)


class Lost(Exception):
    pass


async def rare_orders(needed: int, fixed: bool = False) -> None:
    """Fails only when ``needed`` overlaps in a row all go the rare way."""
    for _ in range(needed):
        if await _first((0.400, 0.505), (0.500, 0.600)) == "early":
            return
    if not fixed:
        raise Lost(f"{needed} rare orders in a row")


def _sweep(function: Any, *args: Any, depth: int, **settings: Any) -> ExploreReport:
    return agentsim.explore(function, *args, strategy="exhaustive", max_deviations=depth, runs=5_000, database=None, **settings)


@pytest.mark.parametrize("needed", [1, 2, 3])
def test_exhaustive_to_the_depth_a_race_needs_finds_it_and_one_less_proves_it_absent(needed: int) -> None:
    below = _sweep(rare_orders, needed, depth=needed - 1)
    assert below.ok and below.exhausted and below.exhaustive_depth == needed - 1
    assert f"exhaustive to depth {needed - 1}: " in below.format() and "all pass" in below.format()
    found = _sweep(rare_orders, needed, depth=needed)
    assert found.failures and isinstance(found.failures[0].error, Lost)
    assert found.runs_executed <= 5_000 and found.fewest_deviations == needed
    twin = _sweep(rare_orders, needed, True, depth=needed)
    assert twin.ok and twin.exhausted and f"exhaustive to depth {needed}: {twin.runs_executed} schedule(s)" in twin.format()


def test_a_lateness_race_needing_two_timing_deviations() -> None:
    assert _sweep(reply_chain_vs_deadline.racy, depth=1).exhausted  # one late delay is not enough
    found = _sweep(reply_chain_vs_deadline.racy, depth=2)
    assert found.failures and found.fewest_deviations == 2
    assert "timed+" in found.failures[0].repro  # its schedule times delays
    twin = _sweep(reply_chain_vs_deadline.fixed, depth=2)
    assert twin.ok and twin.exhausted and "all pass" in twin.format()


def test_each_schedule_runs_once_and_the_budget_says_how_far_it_got() -> None:
    whole = _sweep(rare_orders, 3, True, depth=2)
    assert whole.exhausted and whole.runs_executed == whole.distinct_timings  # every run a different trace
    depth_one = _sweep(rare_orders, 3, True, depth=1).runs_executed  # the stock schedule and every single deviation
    partial = agentsim.explore(rare_orders, 3, True, strategy="exhaustive", max_deviations=2, runs=depth_one, database=None)
    assert partial.ok and partial.exhausted is False and partial.exhaustive_depth == 1
    text = partial.format()
    assert f"stopped at the run budget ({depth_one} schedule(s)" in text and "every schedule with at most 1 deviation(s) ran" in text


def test_other_strategies_claim_nothing_and_bad_settings_are_typed_errors() -> None:
    assert agentsim.explore(rare_orders, 1, True, runs=5, database=None).exhausted is None
    with pytest.raises(SimulationConfigError, match="max_deviations"):
        agentsim.explore(rare_orders, 1, strategy="exhaustive", max_deviations=-1, database=None)
    with pytest.raises(SimulationConfigError, match="strategy"):
        agentsim.simulate(rare_orders, 1, strategy="exhaustive")  # a sweep, not a run's policy


async def two_rare_orders() -> None:
    await rare_orders(2)


def test_workers_and_a_dask_cluster_enumerate_as_the_serial_sweep_does() -> None:
    """Level by level on two local processes and on a dask LocalCluster: the
    same schedules, counts, failure and sentence as in this process."""

    def summary(report: ExploreReport) -> tuple[Any, ...]:
        failure = report.failures[0] if report.failures else None
        return (report.runs_executed, report.distinct_timings, report.exhausted, report.exhaustive_depth, report.completeness,
                failure.schedule.encode() if failure else None, failure.minimal.schedule.encode() if failure and failure.minimal else None)  # fmt: skip

    for args in ((3, True), (3,)):
        serial = _sweep(rare_orders, *args, depth=3)
        assert summary(_sweep(rare_orders, *args, depth=3, workers=2)) == summary(serial)
        distributed = pytest.importorskip("distributed")
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            with distributed.Client(cluster) as client:
                assert summary(_sweep(rare_orders, *args, depth=3, executor=client.get_executor())) == summary(serial)


def test_the_command_line_sweeps_exhaustively() -> None:
    target = f"{Path(__file__)}::two_rare_orders"
    assert main(["explore", target, "--strategy", "exhaustive", "--max-deviations", "1", "--db", "none"]) == 0
    assert main(["explore", target, "--strategy", "exhaustive", "--max-deviations", "2", "--db", "none", "--no-shrink"]) == 1
