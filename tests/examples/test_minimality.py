"""The shrunk schedule of every race example is a local minimum: no single
deviation can be dropped, and none moved to an option nearer the stock one,
while the same failure (its origin: exception type and raising line) remains.
Explored with the random strategy from seed 0."""

from __future__ import annotations

import functools

import pytest

import agentsim
from agentsim.explore._shrink import simpler_failing_neighbours

from . import examples_dir

EXAMPLES = [("races", name) for name in examples_dir.names("races")] + [("windows", name) for name in examples_dir.names("windows")]


@pytest.mark.slow
@pytest.mark.parametrize(("folder", "name"), EXAMPLES, ids=[name for _, name in EXAMPLES])
def test_the_shrunk_schedule_is_locally_minimal(folder: str, name: str) -> None:
    racy = examples_dir.load(folder, name).racy
    [failure, *_] = agentsim.explore(racy, runs=200, database=None).failures
    minimal = failure.minimal
    assert minimal is not None
    assert agentsim.replay(racy, schedule=minimal.schedule).exception is not None
    assert simpler_failing_neighbours(functools.partial(_replay, racy), minimal) == []


def _replay(racy: object, schedule: agentsim.Schedule) -> agentsim.SimulationResult[object]:
    return agentsim.replay(racy, schedule=schedule)  # type: ignore[arg-type]
