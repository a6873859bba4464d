"""The public surface: one error tree, and what each public package exports."""

from __future__ import annotations

import importlib

import pytest

import agentsim

PUBLIC_PACKAGES = (
    "agentsim",
    "agentsim.timing",
    "agentsim.link",
    "agentsim.validation",
    "agentsim.scenario",
    "agentsim.realtime",
    "agentsim.realtime.server",
    "agentsim.models",
    "agentsim.voice",
    "agentsim.sandbox",
    "agentsim.audio",
    "agentsim.explore",
    "agentsim.hypothesis",
    "agentsim.contrib.openai_agents",
)


NEEDS_SDK_TESTING = {"agentsim.voice", "agentsim.sandbox"}


def _import(name: str) -> object:
    from ..conftest import SDK_HAS_TESTING

    if name in NEEDS_SDK_TESTING and not SDK_HAS_TESTING:
        pytest.skip(f"{name} needs openai-agents >= 0.21 (agents.testing)")
    return importlib.import_module(name)


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_every_public_exception_is_an_agentsim_error(name: str) -> None:
    module = _import(name)
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


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_every_public_package_declares_all_and_documents_each_name(name: str) -> None:
    import pathlib
    import re

    module = _import(name)
    exported = getattr(module, "__all__", None)
    assert exported, f"{name} has no __all__"
    for attribute in exported:
        assert hasattr(module, attribute), f"{name}.__all__ names {attribute}, which is missing"
    public = {attribute for attribute in vars(module) if not attribute.startswith("_")}
    reexports = {attribute for attribute in public if getattr(getattr(module, attribute), "__module__", "").startswith(name + ".")}
    assert reexports <= set(exported), f"{name} exports {sorted(reexports - set(exported))} without listing them"
    root = pathlib.Path(__file__).resolve().parents[2]
    docs = "\n".join(path.read_text() for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    undocumented = [attribute for attribute in exported if not re.search(rf"\b{re.escape(attribute)}\b", docs)]
    assert not undocumented, f"{name}: {undocumented} appear in no page of docs/ or the README"
