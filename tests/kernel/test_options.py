"""RunOptions / ExploreOptions: the settings of run, simulate, replay and
explore, checked in one place."""

from __future__ import annotations

import asyncio
import math

import pytest

import agentsim


async def _sleeps() -> float:
    await asyncio.sleep(5.0)
    return agentsim.now()


def test_run_options_are_the_keyword_arguments_of_run() -> None:
    options = agentsim.RunOptions(seed=3, strategy="random", max_virtual_time=math.inf)
    assert options.max_virtual_time is None  # inf: no limit
    assert agentsim.run(_sleeps, **options.as_kwargs()) == 5.0
    limited = options.replace(max_virtual_time=1.0)
    with pytest.raises(agentsim.VirtualTimeLimitError):
        agentsim.run(_sleeps, **limited.as_kwargs())


@pytest.mark.parametrize(
    ("settings", "parameter"),
    [
        ({"backend": "uvloop"}, "backend"),
        ({"strategy": "fastest"}, "strategy"),
        ({"seed": "1"}, "seed"),
        ({"wall_timeout": 0}, "wall_timeout"),
        ({"max_virtual_time": -1}, "max_virtual_time"),
    ],
)
def test_bad_run_options_name_the_setting(settings: dict[str, object], parameter: str) -> None:
    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.RunOptions(**settings)  # type: ignore[arg-type]
    assert info.value.parameter == parameter


def test_explore_options_check_the_sweep_settings() -> None:
    options = agentsim.ExploreOptions(runs=5, strategy="pct", pct_depth=2, database=None)
    report = agentsim.explore(_sleeps, **options.explore_kwargs())
    assert report.runs_executed == 5
    for settings, parameter in (({"pct_depth": 0}, "pct_depth"), ({"runs": -1}, "runs"), ({"stop_on_first": "yes"}, "stop_on_first")):
        with pytest.raises(agentsim.SimulationConfigError) as info:
            agentsim.ExploreOptions(**settings)  # type: ignore[arg-type]
        assert info.value.parameter == parameter
    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.explore(_sleeps, pct_depth=0, strategy="pct", database=None)
    assert info.value.parameter == "pct_depth"


def test_settings_from_a_mapping_refuse_unknown_names() -> None:
    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.ExploreOptions.from_mapping({"run": 5}, where="a test")
    assert info.value.parameter == "a test: run" and "runs" in info.value.expected
    base = agentsim.ExploreOptions(runs=7)
    assert agentsim.ExploreOptions.from_mapping({"seed": 4}, where="x", base=base) == agentsim.ExploreOptions(runs=7, seed=4)


def test_run_simulate_replay_and_explore_take_the_options_whole_with_keywords_over_them() -> None:
    limited = agentsim.RunOptions(max_virtual_time=1.0, seed=4)
    with pytest.raises(agentsim.VirtualTimeLimitError):
        agentsim.run(_sleeps, options=limited)
    assert agentsim.run(_sleeps, options=limited, max_virtual_time=None) == 5.0  # the keyword goes over
    result = agentsim.simulate(_sleeps, options=limited.replace(max_virtual_time=10.0), strategy="random")
    assert result.ok and result.seed == 4 and result.strategy == "random"
    replayed = agentsim.replay(_sleeps, schedule="4:random", options=limited)
    assert isinstance(replayed.exception, agentsim.VirtualTimeLimitError) and replayed.seed == 4
    sweep = agentsim.ExploreOptions(runs=3, database=None, max_virtual_time=10.0)
    from agentsim.explore import SingleScheduleWarning

    with pytest.warns(SingleScheduleWarning):
        report = agentsim.explore(_sleeps, options=sweep, runs=4)
    assert report.runs_executed == 4


@pytest.mark.parametrize(
    ("call", "parameter"),
    [
        (lambda: agentsim.run(_sleeps, sede=1), "agentsim.simulate: sede"),
        (lambda: agentsim.run(_sleeps, options=agentsim.ExploreOptions(), runs=3), "agentsim.simulate: runs"),
        (lambda: agentsim.run(_sleeps, options={"seed": 1}), "options"),
        (lambda: agentsim.explore(_sleeps, options=agentsim.RunOptions()), "options"),
        (lambda: agentsim.explore(_sleeps, database=None, stop_on_frist=False), "agentsim.explore: stop_on_frist"),
        (lambda: agentsim.replay(_sleeps, schedule="1:random", runs=3), "agentsim.replay: runs"),
    ],
)
def test_options_and_keywords_refuse_what_is_no_setting(call: object, parameter: str) -> None:
    with pytest.raises(agentsim.SimulationConfigError) as info:
        call()  # type: ignore[operator]
    assert info.value.parameter == parameter
