"""The shrunk schedule of every race example and every lateness race is the
smallest failing one its 2-deviation neighbourhood contains: every schedule
with fewer deviations (up to two), each one of the failing run's deviating
choices at any of its options, was run and none fails the same way (origin:
exception type and raising line) — and the report says so. It is also a local
minimum (no single deviation can be dropped or moved nearer stock), and its
schedule string replays the same failure in a fresh process.

Explored with the default strategy (``portfolio``) from seed 0."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest

import agentsim
from agentsim.explore._shrink import NEIGHBOURHOOD_DEPTH, simpler_failing_neighbours

from . import examples_dir

FOLDERS = ("races", "windows", "lateness")
EXAMPLES = [(folder, name) for folder in FOLDERS for name in examples_dir.names(folder)]
ROOT = Path(__file__).resolve().parents[2]

@pytest.mark.slow
@pytest.mark.parametrize(("folder", "name"), EXAMPLES, ids=[name for _, name in EXAMPLES])
def test_the_shrunk_schedule_is_the_smallest_in_its_neighbourhood(folder: str, name: str) -> None:
    racy = examples_dir.load(folder, name).racy
    [failure, *_] = agentsim.explore(racy, runs=200, database=None).failures
    minimal = failure.minimal
    assert minimal is not None
    deviations = len(minimal.deviations)
    # Every schedule of the neighbourhood with fewer deviations (up to two)
    # was run and none fails the same way; the report says as much.
    assert minimal.checked_below >= min(deviations, NEIGHBOURHOOD_DEPTH + 1)
    if deviations and minimal.smallest:
        assert "the smallest" in failure.format()
    elif deviations:  # more than two needed: e.g. a delay outlasting four 20 ms audio frames
        assert f"no schedule with at most {NEIGHBOURHOOD_DEPTH} deviation(s) fails the same way" in failure.format()
    # Every deviation shown is explained in words on the line under it.
    lines = failure.format().splitlines()
    for index, line in enumerate(lines):
        if line.startswith(">>"):
            assert lines[index + 1].lstrip().startswith("= "), line
    assert simpler_failing_neighbours(functools.partial(_replay, racy), minimal) == []
    replayed = agentsim.replay(racy, schedule=minimal.schedule)
    assert replayed.exception is not None
    # The schedule's string, in a fresh interpreter: the same exception type.
    script = (
        "import importlib, sys\n"
        "import agentsim\n"
        f"sys.path.insert(0, {str(ROOT / 'examples' / folder)!r})\n"
        f"error = agentsim.replay(importlib.import_module({name!r}).racy, schedule={minimal.schedule.encode()!r}).exception\n"
        "while isinstance(error, BaseExceptionGroup):\n"
        "    error = error.exceptions[0]\n"
        "print(type(error).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.split()[-1] == type(_leaf(replayed.exception)).__name__


def _leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def _replay(racy: object, schedule: agentsim.Schedule) -> agentsim.SimulationResult[object]:
    return agentsim.replay(racy, schedule=schedule)  # type: ignore[arg-type]
