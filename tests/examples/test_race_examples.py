"""Every race example: the explorer finds the racy version; the fixed twin never fails."""

from __future__ import annotations

from typing import Any

import pytest

import agentsim

from . import examples_dir

EXAMPLES = examples_dir.names("races")


def load(name: str) -> Any:
    return examples_dir.load("races", name)


def test_there_are_at_least_five_examples() -> None:
    assert len(EXAMPLES) >= 5, EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_explorer_finds_the_race_and_its_replay_fails_again(name: str) -> None:
    example = load(name)
    report = agentsim.explore(example.racy, runs=200, database=None)
    assert report.failures, f"{name}: no failure in {report.runs_executed} runs"
    failure = report.failures[0]
    assert failure.minimal is not None
    replayed = agentsim.replay(example.racy, schedule=failure.minimal.schedule)
    assert type(replayed.exception) is type(failure.exception)


@pytest.mark.parametrize("strategy", ["random", "pct"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_the_fixed_twin_has_no_false_alarms(name: str, strategy: str) -> None:
    example = load(name)
    report = agentsim.explore(example.fixed, runs=40, strategy=strategy, database=None)
    assert report.ok, report.format()
