"""Lateness races (``examples/lateness/``): a delay must land *late* for the
program to fail (a reply after a deadline the app armed once the request had
started). The stock schedule passes; ``random`` never moves a window that
overlaps nothing, so it never finds them; ``timed`` and the default
``portfolio`` do (base seeds 0-2 each); fixed twins never fail; the failing
schedule replays."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import agentsim
from agentsim.explore import SingleScheduleWarning

from . import examples_dir

EXAMPLES = examples_dir.names("lateness")


def load(name: str) -> Any:
    return examples_dir.load("lateness", name)


def _leaf(error: BaseException | None) -> BaseException | None:
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def test_there_are_four_lateness_races() -> None:
    assert len(EXAMPLES) >= 4, EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_orders_alone_never_find_a_lateness_race(name: str) -> None:
    example = load(name)
    assert agentsim.simulate(example.racy).ok
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingleScheduleWarning)  # (one order and one timing: the point)
        report = agentsim.explore(example.racy, runs=60, strategy="random", database=None, stop_on_first=False)
    assert report.ok, report.format()


@pytest.mark.parametrize("strategy", ["timed", "portfolio"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_timed_delays_find_it_and_its_schedule_replays(name: str, strategy: str) -> None:
    # (Shrinking each, to the smallest schedule, replayed in a fresh process:
    # tests/examples/test_minimality.py, in the slow set.)
    example = load(name)
    for base in range(3):
        report = agentsim.explore(example.racy, runs=120, seed=base * 1000, strategy=strategy, database=None, shrink_failures=False)
        assert report.failures, f"{name}: {strategy} found nothing in 120 runs from seed {base * 1000}"
        failure = report.failures[0]
        schedule = failure.schedule.encode()
        replayed = _leaf(agentsim.replay(example.racy, schedule=schedule).exception)
        assert type(replayed) is type(_leaf(failure.error)), schedule


@pytest.mark.parametrize("strategy", ["timed", "portfolio"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_the_fixed_twin_never_fails(name: str, strategy: str) -> None:
    report = agentsim.explore(load(name).fixed, runs=60, strategy=strategy, database=None, stop_on_first=False)
    assert report.ok, report.format()
