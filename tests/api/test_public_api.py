"""The public surface: one error tree, and what each public package exports."""

from __future__ import annotations

import importlib

import pytest

import agentsim

PUBLIC_PACKAGES = (
    "agentsim",
    "agentsim.timing",
    "agentsim.link",
    "agentsim.scenario",
    "agentsim.realtime",
    "agentsim.realtime.server",
    "agentsim.models",
    "agentsim.voice",
    "agentsim.sandbox",
    "agentsim.audio",
    "agentsim.explore",
)


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_every_public_exception_is_an_agentsim_error(name: str) -> None:
    module = importlib.import_module(name)
    for attribute in dir(module):
        value = getattr(module, attribute)
        if attribute.startswith("_") or not isinstance(value, type) or not issubclass(value, BaseException):
            continue
        if getattr(value, "__module__", "").split(".")[0] != "agentsim":
            continue  # re-exported from elsewhere (none today)
        if issubclass(value, Warning):
            assert issubclass(value, agentsim.AgentsimWarning), f"{name}.{attribute}"
        else:
            assert issubclass(value, agentsim.AgentsimError), f"{name}.{attribute}"


def test_the_error_tree() -> None:
    assert issubclass(agentsim.SimulationError, agentsim.AgentsimError)
    assert issubclass(agentsim.UsageError, agentsim.AgentsimError)
    assert issubclass(agentsim.SimulationConfigError, agentsim.UsageError)
    assert issubclass(agentsim.NotInSimulationError, agentsim.UsageError)
    assert issubclass(agentsim.NestedSimulationError, agentsim.UsageError)
    from agentsim.scenario import ScenarioError, ScenarioUsageError

    assert issubclass(ScenarioError, agentsim.AgentsimError)
    assert issubclass(ScenarioUsageError, agentsim.UsageError)
    # Usage errors stay what they were to code that caught them before.
    assert issubclass(agentsim.SimulationConfigError, (ValueError, agentsim.SimulationError))
    with pytest.raises(agentsim.UsageError) as info:
        agentsim.run(lambda: None, seed="1")  # type: ignore[arg-type]
    assert info.value.parameter == "seed"  # type: ignore[attr-defined]
