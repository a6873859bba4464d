"""One sweep over several processes: the same report as the serial sweep."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import agentsim
from agentsim import SimulationConfigError
from agentsim.explore import ExploreReport

from .test_explore import DoubleBooking, booking_race


def _summary(report: ExploreReport) -> dict[str, Any]:
    """Everything a report says, in comparable form."""
    return {
        "runs": report.runs_executed,
        "choice_points": list(report.choice_points),
        "orders": report.distinct_schedules,
        "timings": report.distinct_timings,
        "windowed": report.windowed_timers,
        "jitter": report.jitter_draws,
        "nondeterminism": len(report.nondeterminism),
        "failures": [
            (
                failure.seed,
                failure.strategy,
                type(failure.error).__name__,
                str(failure.error),
                failure.repro,
                failure.minimal.schedule.encode() if failure.minimal else None,
            )
            for failure in report.failures
        ],
    }


@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_two_workers_report_what_the_serial_sweep_reports(strategy: str) -> None:
    """Seeds 0-119 (and, for the first failure, 0 to wherever it is)."""
    for stop_on_first in (True, False):
        options: dict[str, Any] = {"runs": 120, "strategy": strategy, "database": None, "stop_on_first": stop_on_first}
        serial = agentsim.explore(booking_race, **options)
        parallel = agentsim.explore(booking_race, workers=2, **options)
        assert serial.failures, "the race is found in 120 runs"
        assert _summary(parallel) == _summary(serial)
        assert all(isinstance(failure.error, DoubleBooking) for failure in parallel.failures)


def test_any_executor_runs_the_sweep_and_the_fixed_twin_stays_clean() -> None:
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork")) as executor:
        racy = agentsim.explore(booking_race, runs=80, database=None, executor=executor)
        fixed = agentsim.explore(booking_race, True, runs=80, database=None, executor=executor, stop_on_first=False)
    assert _summary(racy) == _summary(agentsim.explore(booking_race, runs=80, database=None))
    assert fixed.runs_executed == 80 and not fixed.failures


KILL_MARKER = "AGENTSIM_TEST_KILL_MARKER"


def _seed() -> int:
    from agentsim._kernel.core import current_core

    core = current_core()
    assert core is not None
    return core.seed


async def dies_once_in_a_worker(fixed: bool = False) -> None:
    """The booking race, run by a worker that dies the first time it reaches
    seed 7's run (a crash, a node lost): the marker file says it happened."""
    marker = Path(os.environ[KILL_MARKER])
    if multiprocessing.parent_process() is not None and _seed() == 7 and not marker.exists():
        marker.write_text("killed")
        os.kill(os.getpid(), signal.SIGKILL)
    await booking_race(fixed)


def test_a_worker_killed_mid_sweep_loses_no_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "killed"
    monkeypatch.setenv(KILL_MARKER, str(marker))
    options: dict[str, Any] = {"runs": 60, "database": None, "stop_on_first": False}
    parallel = agentsim.explore(dies_once_in_a_worker, workers=2, **options)
    assert marker.exists()  # a worker did die
    serial = agentsim.explore(dies_once_in_a_worker, **options)
    assert parallel.runs_executed == 60
    assert _summary(parallel) == _summary(serial)


def test_a_sweep_that_cannot_travel_says_why() -> None:
    async def local() -> None:
        await asyncio.sleep(1)

    with pytest.raises(SimulationConfigError, match="picklable"):
        agentsim.explore(local, runs=4, database=None, workers=2)
    for workers in (0, True, "many"):
        with pytest.raises(SimulationConfigError, match="worker processes"):
            agentsim.explore(booking_race, runs=4, database=None, workers=workers)
    with pytest.raises(SimulationConfigError, match="concurrent.futures.Executor"):
        agentsim.explore(booking_race, runs=4, database=None, executor="tcp://localhost:8786")  # type: ignore[arg-type]


@pytest.mark.parametrize("strategy", ["pct", "portfolio"])
def test_a_target_loaded_from_a_path_travels_as_it_was_before_any_run(strategy: str) -> None:
    # The command line loads targets by path: the function goes to the workers
    # by value. PCT and the portfolio measure a nominal run in the coordinator
    # first, which leaves an SDK agent's weak references in the module: the
    # function is pickled before that (this sweep failed to send its chunks,
    # and the command line hung in the pool's shutdown).
    from agentsim.integrations.cli import load_target

    function, _ = load_target(str(Path(__file__).resolve().parents[2] / "examples" / "races" / "close_vs_inflight_tool.py") + "::fixed")
    report = agentsim.explore(function, runs=12, strategy=strategy, database=None, workers=2)
    assert report.ok and report.runs_executed == 12, report.format()


def test_a_dask_cluster_runs_the_sweep_and_a_killed_worker_loses_no_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """dask.distributed (the ``cluster`` extra) as the engine: a LocalCluster
    of two worker processes, one of which dies at seed 7; dask runs its task
    again elsewhere, and the report is the serial sweep's."""
    distributed = pytest.importorskip("distributed")
    marker = tmp_path / "killed"
    monkeypatch.setenv(KILL_MARKER, str(marker))  # before the workers start: they inherit it
    options: dict[str, Any] = {"runs": 60, "database": None, "stop_on_first": False}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            parallel = agentsim.explore(dies_once_in_a_worker, executor=client.get_executor(), **options)
    assert marker.exists()  # a worker did die
    serial = agentsim.explore(dies_once_in_a_worker, **options)
    assert parallel.runs_executed == 60
    assert _summary(parallel) == _summary(serial)
