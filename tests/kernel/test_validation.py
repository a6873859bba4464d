"""Argument checks: one typed error for every bad value, naming it."""

from __future__ import annotations

import asyncio
import math

import pytest

import agentsim
from agentsim.validation import limit, non_negative, number, positive, whole

from ..conftest import SDK_HAS_TESTING, needs_sdk_testing

BAD_NUMBERS = [True, "1", None, math.nan, [1.0]]


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_non_numbers_are_refused_everywhere(value: object) -> None:
    for check in (positive, non_negative, number):
        with pytest.raises(agentsim.SimulationConfigError) as info:
            check("rate", value)
        assert info.value.parameter == "rate" and info.value.value is value
    with pytest.raises(agentsim.UsageError):
        whole("count", value)


def test_bounds_and_canonical_types() -> None:
    assert positive("rate", 2) == 2.0 and isinstance(positive("rate", 2), float)
    assert non_negative("latency", 0) == 0.0
    assert whole("count", 3) == 3
    assert number("x", -1.5, minimum=-2) == -1.5
    for check, value in ((positive, 0), (positive, -1), (non_negative, -0.1), (positive, math.inf), (non_negative, math.inf)):
        with pytest.raises(agentsim.SimulationConfigError):
            check("x", value)
    with pytest.raises(agentsim.SimulationConfigError) as info:
        whole("count", -1)
    assert "whole number >= 0" in info.value.expected
    with pytest.raises(agentsim.SimulationConfigError):
        whole("count", 1.0)


def test_limits_take_none_and_infinity_as_no_limit() -> None:
    assert limit("timeout", None) is None
    assert limit("timeout", math.inf) is None
    assert limit("timeout", 2) == 2.0
    for value in (0, -1, math.nan, "5", True):
        with pytest.raises(agentsim.SimulationConfigError):
            limit("timeout", value)


def test_run_accepts_infinite_limits() -> None:
    async def main() -> float:
        await asyncio.sleep(10.0)
        return agentsim.now()

    assert agentsim.run(main, max_virtual_time=math.inf, wall_timeout=math.inf) == 10.0


@needs_sdk_testing
def test_doubles_validate_at_definition() -> None:
    from agentsim.voice import SimulatedMicrophone, speech

    with pytest.raises(agentsim.SimulationConfigError) as info:
        speech("1")  # type: ignore[arg-type]
    assert info.value.parameter == "seconds"
    with pytest.raises(agentsim.SimulationConfigError) as info:
        speech(1.0, text=3)  # type: ignore[arg-type]
    assert info.value.parameter == "text"
    with pytest.raises(agentsim.SimulationConfigError) as info:
        SimulatedMicrophone([speech(1.0)], sample_rate=-1)
    assert info.value.parameter == "sample_rate"


@pytest.mark.skipif(SDK_HAS_TESTING, reason="runs on openai-agents releases before 0.21 (CI: 0.2.11)")
def test_doubles_that_need_a_newer_sdk_say_which_release() -> None:
    from agentsim.contrib.openai_agents import SdkVersionError, installed_version

    import importlib

    with pytest.raises(SdkVersionError) as info:
        importlib.import_module("agentsim.voice")
    assert info.value.minimum == "0.21" and info.value.installed == installed_version()
    assert isinstance(info.value, agentsim.UsageError) and isinstance(info.value, ImportError)
    from agentsim.models import model_error

    with pytest.raises(SdkVersionError):
        model_error(RuntimeError("boom"))


def test_the_doubles_interface_refuses_bad_input_with_typed_errors() -> None:
    from agentsim import timing

    for call, parameter in (
        (lambda: agentsim.register_lane("", "title"), "kind"),
        (lambda: agentsim.register_lane("kind", 3), "title"),  # type: ignore[arg-type]
        (lambda: agentsim.register_lane("kind", "title", counters={"x": 1}), "counters"),  # type: ignore[dict-item]
        (lambda: agentsim.choose("window", []), "labels"),
        (lambda: agentsim.choose("window", "ab"), "labels"),
        (lambda: timing.uniform(0.3, 0.2), "high"),
    ):
        with pytest.raises(agentsim.SimulationConfigError) as info:
            call()
        assert info.value.parameter == parameter

    async def bad_window() -> None:
        timing.call_window(0.3, 0.1, 0.5, lambda: None)

    error = agentsim.simulate(bad_window).exception
    assert isinstance(error, agentsim.SimulationConfigError) and error.parameter == "window"
    assert agentsim.choose("window", ["stock", "other"]) == 0  # outside a simulation: the stock option


@pytest.mark.skipif(SDK_HAS_TESTING, reason="runs on openai-agents releases before 0.21 (CI: 0.13.6, 0.2.11)")
def test_each_double_that_needs_a_newer_sdk_names_itself() -> None:
    from agentsim.contrib.openai_agents import SdkVersionError
    from agentsim.models import model_error
    from agentsim.sandbox import timed_sandbox_session

    with pytest.raises(SdkVersionError) as model:
        model_error(RuntimeError("boom"))
    with pytest.raises(SdkVersionError) as sandbox:
        timed_sandbox_session([])
    assert "model_error" in str(model.value) and "timed_sandbox_session" in str(sandbox.value)
    assert str(model.value) != str(sandbox.value)


def _adapter_has_the_websocket_hook() -> bool:
    from agents.realtime.openai_realtime import OpenAIRealtimeWebSocketModel

    return hasattr(OpenAIRealtimeWebSocketModel, "_create_websocket_connection")


@pytest.mark.skipif(_adapter_has_the_websocket_hook(), reason="runs on openai-agents releases without the adapter hook (CI: 0.2.11)")
def test_the_simulated_server_on_a_release_without_the_adapter_hook_says_which_release() -> None:
    from agentsim.contrib.openai_agents import SdkVersionError
    from agentsim.realtime.server import SimulatedRealtimeServer

    async def main() -> None:
        SimulatedRealtimeServer().model()

    error = agentsim.simulate(main).exception
    assert isinstance(error, SdkVersionError) and error.minimum == "0.13.6"
    assert "SimulatedRealtimeServer" in str(error) and "escape" not in str(error)
