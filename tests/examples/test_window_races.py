"""Narrow-window races (``examples/windows/``): two timing windows overlap by
a few milliseconds. The stock schedule passes; the explorer finds each race
by ordering the windows (random or PCT, base seed 0); fixed twins never fail
(random seeds 0-39 and PCT seeds 0-39); the shrunk schedule replays."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import agentsim

from . import examples_dir

EXAMPLES = examples_dir.names("windows")


def load(name: str) -> Any:
    return examples_dir.load("windows", name)


def test_there_are_six_narrow_window_races() -> None:
    assert len(EXAMPLES) >= 6, EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_stock_schedule_passes_and_windows_find_the_race(name: str) -> None:
    example = load(name)
    assert agentsim.simulate(example.racy).ok
    reports = [agentsim.explore(example.racy, runs=50, strategy=strategy, database=None) for strategy in ("random", "pct")]
    found = [report for report in reports if report.failures]
    assert found, f"{name}: neither random nor pct found it in 50 runs"
    failure = found[0].failures[0]
    assert failure.minimal is not None and failure.minimal.deviations
    replayed = agentsim.replay(example.racy, schedule=failure.minimal.schedule.encode()).exception
    while isinstance(replayed, BaseExceptionGroup):
        replayed = replayed.exceptions[0]
    assert type(replayed) is type(failure.error)


@pytest.mark.parametrize("strategy", ["random", "pct"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_the_fixed_twin_never_fails(name: str, strategy: str) -> None:
    example = load(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a sweep with nothing to explore would warn
        report = agentsim.explore(example.fixed, runs=40, strategy=strategy, database=None)
    assert report.ok, report.format()
    assert max(report.choice_points) > 0
