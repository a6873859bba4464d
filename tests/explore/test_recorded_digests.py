"""Schedules recorded before a redesign replay identically after it.

``data/schedule_digests-<openai-agents release>.json`` holds, for every
example race (racy and fixed twin, examples/races and examples/windows), the
trace digest and outcome of seeds 1-3 under fifo, random, pct/3/40 and
jitter, and of each such run's replay schedule (its deviations): 396
schedules (336 on 0.13.6, which lacks two examples' SDK parts). They were
recorded with ``data/record_digests.py`` on the tree of 2026-12-05 before
issue 34's work, on each release CI runs (the SDK's own code is part of
every run, so each release has its file), and checked equal on the tree
after it. A change that alters what any of them does fails here, naming the
schedules.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import agentsim
from agentsim.contrib.openai_agents import installed_version
from tests.examples.examples_dir import load

DATA = Path(__file__).parent / "data"
RECORDED_RELEASES = sorted(path.stem.removeprefix("schedule_digests-") for path in DATA.glob("schedule_digests-*.json"))


def _recorded() -> dict[str, list[str | None]]:
    path = DATA / f"schedule_digests-{installed_version()}.json"
    if not path.exists():
        pytest.skip(f"digests are recorded for openai-agents {', '.join(RECORDED_RELEASES)}; {installed_version()} is installed")
    data = json.loads(path.read_text())
    assert data["openai-agents"] == installed_version()
    return data["digests"]  # type: ignore[no-any-return]


PROGRAMS = sorted({key.split(" ")[0] for key in json.loads((DATA / "schedule_digests-0.24.0.json").read_text())["digests"]})


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_recorded_schedule_replays_to_its_recorded_digest(program: str) -> None:
    recorded = {key: value for key, value in _recorded().items() if key.split(" ")[0] == program}
    path, twin = program.split("::")
    folder, name = path.split("/")
    if not recorded:
        pytest.skip(f"{program} was not recorded on openai-agents {installed_version()}")
    function = getattr(load(folder, name), twin)
    differing = []
    for key, expected in recorded.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = agentsim.replay(function, schedule=key.split(" ", 1)[1])
        got = [result.trace.digest(), type(result.exception).__name__ if result.exception else None]
        if got != expected:
            differing.append((key, expected, got))
    assert differing == []


def test_the_record_covers_every_example_on_every_release_ci_runs() -> None:
    assert RECORDED_RELEASES == ["0.13.6", "0.21.1", "0.24.0"]
    assert len(PROGRAMS) == 24
