"""Coverage of the moments that matter: ``agentsim.sometimes`` / ``reached``
record whether a moment happened in a run (never failing it), a sweep counts
the runs where it did, and ``require=`` fails a sweep whose required moment
never happened (so a test cannot pass vacuously)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import agentsim
from agentsim import SimulationConfigError
from agentsim.integrations.cli import main
from agentsim.timing import sleep_between

RUNS = 40


async def barge_in_during_reply() -> None:
    """A reply (0.40-0.50 s) and a barge-in (0.45-0.55 s): whether the barge-in
    lands while the reply is still playing is up to the schedule (anyio: the
    same program on both backends)."""
    playing = True

    async def reply() -> None:
        nonlocal playing
        await sleep_between(0.40, 0.50)
        playing = False

    async def barge_in() -> None:
        await sleep_between(0.45, 0.55)
        agentsim.sometimes(playing, "barge-in during the reply")
        agentsim.sometimes(False, "a moment that never comes")
        agentsim.reached("barge-in")

    async with anyio.create_task_group() as group:
        group.start_soon(reply)
        group.start_soon(barge_in)


def _held_in_runs(function: Any, backend: str, label: str) -> int:
    """The same count, run by run: run 0 stock, then random seeds 1 to RUNS - 1."""
    results = [agentsim.simulate(function, backend=backend)]
    results += [agentsim.simulate(function, backend=backend, strategy="random", seed=seed) for seed in range(1, RUNS)]
    return sum(result.coverage.get(label, False) for result in results)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_sweep_counts_the_runs_where_each_moment_happened(backend: str) -> None:
    report = agentsim.explore(barge_in_during_reply, runs=RUNS, strategy="random", backend=backend, database=None)
    held = report.coverage["barge-in during the reply"]
    assert 0 < held < RUNS  # some schedules have it, some not (seeds 0-39)
    assert held == _held_in_runs(barge_in_during_reply, backend, "barge-in during the reply")
    assert report.ok  # naming a moment never fails a run


def test_labels_evaluated_but_never_true_are_listed_as_never_reached() -> None:
    report = agentsim.explore(barge_in_during_reply, runs=RUNS, strategy="random", database=None)
    assert report.coverage["a moment that never comes"] == 0
    assert report.coverage["barge-in"] == RUNS
    text = report.format()
    assert "never reached: 'a moment that never comes'" in text
    assert f"'barge-in' {RUNS}/{RUNS}" in text


def test_require_fails_a_sweep_that_never_reached_the_moment_and_passes_one_that_did() -> None:
    unmet = agentsim.explore(barge_in_during_reply, runs=RUNS, database=None, require=["a moment that never comes", "never named"])
    assert not unmet.ok and not unmet.failures
    assert unmet.unreached_requirements == ("a moment that never comes", "never named")
    assert "required moment(s) never reached in 40 run(s): 'a moment that never comes', 'never named'" in unmet.format()
    met = agentsim.explore(barge_in_during_reply, runs=RUNS, database=None, require=["barge-in during the reply"])
    assert met.ok and met.unreached_requirements == ()


def test_workers_and_a_dask_cluster_merge_coverage_as_the_serial_sweep_does() -> None:
    options: dict[str, Any] = {"runs": RUNS, "strategy": "random", "database": None, "stop_on_first": False}
    serial = agentsim.explore(barge_in_during_reply, **options)
    workers = agentsim.explore(barge_in_during_reply, workers=2, **options)
    assert workers.coverage == serial.coverage
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            clustered = agentsim.explore(barge_in_during_reply, executor=client.get_executor(), **options)
    assert clustered.coverage == serial.coverage


def test_bad_labels_and_requirements_are_typed_errors() -> None:
    with pytest.raises(SimulationConfigError, match="label"):
        agentsim.sometimes(True, 3)  # type: ignore[arg-type]
    with pytest.raises(SimulationConfigError, match="label"):
        agentsim.reached("")
    with pytest.raises(SimulationConfigError, match="require"):
        agentsim.explore(barge_in_during_reply, runs=2, database=None, require="barge-in")  # type: ignore[arg-type]
    assert agentsim.sometimes(1, "outside a simulation") is True  # a no-op there, the condition returned


def test_the_command_line_requires_with_require(tmp_path: Path) -> None:
    target = Path(__file__)
    assert main(["explore", f"{target}::barge_in_during_reply", "--runs", "20", "--db", "none", "--require", "barge-in"]) == 0
    assert main(["explore", f"{target}::barge_in_during_reply", "--runs", "20", "--db", "none", "--require", "a moment that never comes"]) == 1
