"""The openai-agents SDK runs unmodified inside a simulation, deterministically."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from tests.conftest import requires_sdk

requires_sdk("0.21", "agents.testing's ScriptedModel drives these runs")
from agents import (
    Agent,
    ModelRetryAdvice,
    ModelRetrySettings,
    ModelSettings,
    RunConfig,
    Runner,
    function_tool,
    retry_policies,
)
from agents.decorators import tool
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.tracing import TracingProcessor

import agentsim

SEEDS = range(12)


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city (a sync tool: the SDK runs it via asyncio.to_thread)."""
    return f"{city}: sunny on thread {threading.current_thread().name}"


async def weather_workflow() -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(
        [
            [function_call("get_weather", {"city": "Tokyo"}, call_id="call_1")],
            [assistant_message("It is sunny in Tokyo.")],
        ]
    )
    agent = Agent(name="Weather assistant", model=model, tools=[get_weather])
    result = await Runner.run(agent, "What is the weather in Tokyo?")
    return result, model


def test_runner_with_scripted_model_and_sync_tool_runs_inline() -> None:
    result = agentsim.simulate(weather_workflow)
    run_result, model = result.unwrap()
    assert run_result.final_output == "It is sunny in Tokyo."
    model.assert_complete()
    tool_output = next(item for item in model.last_call.input if item.get("type") == "function_call_output")
    assert tool_output["output"] == f"Tokyo: sunny on thread {threading.current_thread().name}"
    inline = [event for event in result.trace.events if event.kind == "inline"]
    assert inline, "the sync tool should have gone through the inline executor"


def test_sdk_workflow_is_deterministic_under_random_schedules() -> None:
    for seed in SEEDS:
        first = agentsim.simulate(weather_workflow, seed=seed, strategy="random")
        second = agentsim.simulate(weather_workflow, seed=seed, strategy="random")
        assert first.ok and second.ok, (first.exception, second.exception)
        assert first.trace.digest() == second.trace.digest()


def test_tracing_is_virtual_threadless_and_restored() -> None:
    from agents.tracing import setup

    provider_before = setup.GLOBAL_TRACE_PROVIDER

    class Collect(TracingProcessor):
        def __init__(self) -> None:
            self.spans: list[Any] = []
            self.traces: list[Any] = []

        def on_trace_start(self, trace: Any) -> None:
            self.traces.append(trace)

        def on_trace_end(self, trace: Any) -> None:
            pass

        def on_span_start(self, span: Any) -> None:
            pass

        def on_span_end(self, span: Any) -> None:
            self.spans.append(span)

        def shutdown(self) -> None:
            pass

        def force_flush(self) -> None:
            pass

    async def main() -> Collect:
        from agents import add_trace_processor

        collect = Collect()
        add_trace_processor(collect)  # lands on the simulation's provider
        await asyncio.sleep(2.5)
        await weather_workflow()
        return collect

    first = agentsim.run(main)
    second = agentsim.run(main)
    assert first.spans, "tracing was enabled, spans must have been produced"
    starts = {span.started_at for span in first.spans}
    assert starts == {"2025-01-01T00:00:02.500000+00:00"}  # virtual epoch + 2.5 s
    assert [span.span_id for span in first.spans] == [span.span_id for span in second.spans]
    assert first.traces[0].trace_id == second.traces[0].trace_id
    assert first.traces[0].trace_id.startswith("trace_0000")
    assert setup.GLOBAL_TRACE_PROVIDER is provider_before


def test_retry_backoff_jitter_is_seeded_and_waits_in_virtual_time() -> None:
    async def main() -> float:
        model = ScriptedModel(
            [
                ModelStep.raise_error(
                    RuntimeError("temporary failure"),
                    retry_advice=ModelRetryAdvice(suggested=True, replay_safety="safe"),
                ),
                [assistant_message("recovered")],
            ]
        )
        settings = ModelSettings(
            retry=ModelRetrySettings(
                max_retries=1,
                backoff={"initial_delay": 4.0, "max_delay": 10.0, "jitter": True},
                policy=retry_policies.provider_suggested(),
            )
        )
        agent = Agent(name="Flaky", model=model, model_settings=settings)
        result = await Runner.run(agent, "hi", run_config=RunConfig(tracing_disabled=True))
        assert result.final_output == "recovered"
        model.assert_complete()
        return agentsim.now()

    delays = {seed: agentsim.run(main, seed=seed) for seed in range(6)}
    for seed, delay in delays.items():
        assert 4.0 * 0.875 <= delay <= 4.0 * 1.125
        assert agentsim.run(main, seed=seed) == delay
    assert len(set(delays.values())) > 1


def _timed_tool_agent(tool_seconds: float, timeout_seconds: float) -> tuple[Agent[Any], ScriptedModel, list[float]]:
    finished_at: list[float] = []

    @function_tool(timeout=timeout_seconds)
    async def slow_lookup(query: str) -> str:
        """Look something up slowly."""
        await asyncio.sleep(tool_seconds)
        finished_at.append(agentsim.now())
        return f"found {query}"

    model = ScriptedModel(
        [
            [function_call("slow_lookup", {"query": "flights"}, call_id="call_1")],
            [assistant_message("done")],
        ]
    )
    return Agent(name="Travel", model=model, tools=[slow_lookup]), model, finished_at


def _tool_output(model: ScriptedModel) -> str:
    return next(item["output"] for item in model.last_call.input if item.get("type") == "function_call_output")


def test_tool_timeout_fires_at_exactly_the_virtual_deadline() -> None:
    async def main() -> tuple[str, float, list[float]]:
        agent, model, finished = _timed_tool_agent(tool_seconds=30.0, timeout_seconds=2.5)
        await Runner.run(agent, "find flights", run_config=RunConfig(tracing_disabled=True))
        return _tool_output(model), agentsim.now(), finished

    output, end, finished = agentsim.run(main)
    assert output == "Tool 'slow_lookup' timed out after 2.5 seconds."
    assert end == 2.5  # the second model turn happened at the deadline, not after 30 s
    assert finished == []


@pytest.mark.parametrize("strategy", ["fifo", "random"])
def test_tool_finishing_exactly_at_its_timeout_is_a_real_race(strategy: str) -> None:
    # The tool's own sleep and the SDK's wait_for deadline fall on the same
    # instant: under FIFO the deadline (scheduled first) always wins; seeds
    # explore both outcomes, and each seed always gives the same one.
    async def main() -> str:
        agent, model, _ = _timed_tool_agent(tool_seconds=2.0, timeout_seconds=2.0)
        await Runner.run(agent, "find flights", run_config=RunConfig(tracing_disabled=True))
        return _tool_output(model)

    outcomes = {seed: agentsim.run(main, seed=seed, strategy=strategy) for seed in SEEDS}
    for seed, outcome in list(outcomes.items())[:4]:
        assert agentsim.run(main, seed=seed, strategy=strategy) == outcome
    timed_out = "Tool 'slow_lookup' timed out after 2 seconds."
    if strategy == "fifo":
        assert set(outcomes.values()) == {timed_out}
    else:
        assert set(outcomes.values()) == {timed_out, "found flights"}


def test_sandbox_shell_output_has_no_wall_time_or_random_ids() -> None:
    from tests.contrib.test_seed002_recipes import run_sandbox_workflow

    async def main() -> str:
        return _tool_output(await run_sandbox_workflow())

    first = agentsim.run(main, seed=1)
    assert "Wall time: 0.0000 seconds" in first
    assert agentsim.run(main, seed=1) == first
    chunk_ids = {line for seed in range(4) for line in agentsim.run(main, seed=seed).splitlines() if "Chunk ID" in line}
    assert len(chunk_ids) > 1  # seeded, not constant


def test_sdk_modules_that_imported_clocks_by_name_see_virtual_time() -> None:
    import sys
    import time

    import agents.sandbox.session.events as sandbox_events
    import agents.voice.models.openai_stt  # noqa: F401 - `from time import monotonic` in some releases

    # Every SDK module that bound `monotonic` by name (which ones varies by release).
    by_name = [module for name, module in sorted(sys.modules.items())
               if name.startswith("agents.") and getattr(module, "monotonic", None) is time.monotonic]

    async def main() -> tuple[list[float], str]:
        await asyncio.sleep(90)
        # `from time import monotonic` and `from datetime import datetime` inside the SDK:
        return [module.monotonic() for module in by_name], sandbox_events.datetime.now(tz=sandbox_events.timezone.utc).isoformat()

    clocks, stamp = agentsim.run(main)
    assert clocks == [90.0] * len(by_name)
    assert stamp == "2025-01-01T00:01:30+00:00"
    assert all(module.monotonic is time.monotonic for module in by_name)  # restored after the run


def test_a_real_model_call_is_reported_as_one_naming_the_double(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents import Agent, Runner

    from agentsim.contrib.openai_agents import RealModelCallError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-key")

    async def main() -> object:
        return await Runner.run(Agent(name="assistant", instructions="Answer."), "hello")

    error = agentsim.simulate(main).exception
    assert isinstance(error, RealModelCallError) and isinstance(error, agentsim.SimulationEscapeError)
    assert error.what == "model call" and "ScriptedModel" in str(error) and "TimedModel" in str(error)


def test_a_real_realtime_connection_is_reported_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.realtime import RealtimeAgent, RealtimeRunner

    from agentsim.contrib.openai_agents import RealModelCallError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-key")

    async def main() -> None:
        runner = RealtimeRunner(RealtimeAgent(name="voice"), config={"tracing_disabled": True})  # type: ignore[typeddict-unknown-key]
        async with await runner.run():
            pass

    error = agentsim.simulate(main).exception
    assert isinstance(error, RealModelCallError), error
    assert error.what == "Realtime connection" and "ScriptedRealtimeTransport" in str(error)


def test_the_sdk_on_trio_says_it_needs_asyncio() -> None:
    from agents import Agent, Runner

    from agentsim.contrib.openai_agents import SdkBackendError

    async def main() -> object:
        return await Runner.run(Agent(name="assistant", model=ScriptedModel([[assistant_message("hi")]])), "hello")

    import gc
    import warnings

    with warnings.catch_warnings():
        # The SDK's own coroutines, never awaited once asyncio was missing.
        warnings.simplefilter("ignore", RuntimeWarning)
        error = agentsim.simulate(main, backend="trio").exception
        gc.collect()
    assert isinstance(error, SdkBackendError) and isinstance(error, agentsim.UsageError)
    assert "backend='asyncio'" in str(error) and "no running event loop" in str(error.__cause__) + str(error)
    assert agentsim.simulate(main).ok  # the same program on asyncio runs
