"""The shrunk schedule of every race example is a local minimum: no single
deviation can be dropped, and none moved to an option nearer the stock one,
while the same failure (its origin: exception type and raising line) remains.
Explored with the random strategy from seed 0."""

from __future__ import annotations

import pytest

import agentsim
from agentsim import Schedule
from agentsim.explore._shrink import origin

from . import examples_dir

EXAMPLES = [("races", name) for name in examples_dir.names("races")] + [("windows", name) for name in examples_dir.names("windows")]


def _fails_the_same(racy: object, schedule: Schedule, target: object) -> bool:
    result = agentsim.replay(racy, schedule=schedule)  # type: ignore[arg-type]
    return result.exception is not None and origin(result.exception) == target


@pytest.mark.slow
@pytest.mark.parametrize(("folder", "name"), EXAMPLES, ids=[name for _, name in EXAMPLES])
def test_the_shrunk_schedule_is_locally_minimal(folder: str, name: str) -> None:
    racy = examples_dir.load(folder, name).racy
    [failure, *_] = agentsim.explore(racy, runs=200, database=None).failures
    minimal = failure.minimal
    assert minimal is not None
    target = origin(minimal.exception)
    base = minimal.schedule
    deviations = minimal.deviations
    stock = {index: choice[3] for index, choice in enumerate(minimal.trace.choices)}
    assert _fails_the_same(racy, base, target)
    for index, option in deviations.items():
        fewer = {k: v for k, v in deviations.items() if k != index}
        assert not _fails_the_same(racy, Schedule(base.seed, "replay", fewer, base.jitter, windows=base.windows), target), f"deviation {index} can go"
        home = stock.get(index, 0)
        for closer in range(option):
            if closer != home and abs(closer - home) < abs(option - home):
                moved = {**deviations, index: closer}
                assert not _fails_the_same(racy, Schedule(base.seed, "replay", moved, base.jitter, windows=base.windows), target), f"deviation {index} can move to {closer}"
