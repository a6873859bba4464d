"""TimedModel: the runner sees model latency, pacing, timeouts and retries in virtual time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import requires_sdk

requires_sdk("0.21", "agents.testing's ScriptedModel and ModelTimeoutError; tests/models/test_timed_model_any_release.py covers TimedModel on older releases")
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
from agents.exceptions import ModelTimeoutError
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

import agentsim
from agentsim.models import TimedModel, model_error, uniform

NO_TRACING = RunConfig(tracing_disabled=True)


@function_tool
def get_time_zone(city: str) -> str:
    """Look up a city's time zone."""
    return f"{city}: UTC+9"


def test_latency_per_call_is_what_the_runner_waits() -> None:
    async def main() -> tuple[str, float, list[tuple[float, float | None]]]:
        model = TimedModel(
            ScriptedModel([[function_call("get_time_zone", {"city": "Tokyo"}, call_id="c1")], [assistant_message("UTC+9")]]),
            latency=[1.5, 0.25],
        )
        agent = Agent(name="Clock", model=model, tools=[get_time_zone])
        result = await Runner.run(agent, "Tokyo time zone?", run_config=NO_TRACING)
        model.assert_complete()  # delegated to the wrapped ScriptedModel
        return result.final_output, agentsim.now(), [(call.started_at, call.finished_at) for call in model.calls]

    output, end, spans = agentsim.run(main)
    assert output == "UTC+9"
    assert end == 1.75
    assert spans == [(0.0, 1.5), (1.5, 1.75)]


def test_a_responder_sees_the_request_at_the_virtual_instant_it_is_asked() -> None:
    # The guide's "derive the answer from the request" recipe inside TimedModel:
    # the responder runs after the latency, so it reads the clock at that instant.
    async def main() -> list[str]:
        def answer(call: Any) -> Any:
            return [assistant_message(f"asked at {agentsim.now():.2f} s about {call.input[-1]['content']}")]

        model = TimedModel(ScriptedModel([ModelStep.respond(answer), ModelStep.respond(answer)]), latency=[0.75, 0.5])
        agent = Agent(name="Echo", model=model)
        first = await Runner.run(agent, "Tokyo", run_config=NO_TRACING)
        await asyncio.sleep(10)
        second = await Runner.run(agent, "Oslo", run_config=NO_TRACING)
        return [first.final_output, second.final_output]

    assert agentsim.run(main) == ["asked at 0.75 s about Tokyo", "asked at 11.25 s about Oslo"]


def test_model_settings_timeout_fires_at_the_virtual_deadline_without_consuming_a_step() -> None:
    async def main() -> tuple[str, float, int, Any]:
        scripted = ScriptedModel([[assistant_message("too late")]])
        model = TimedModel(scripted, latency=5.0)
        agent = Agent(name="Slow", model=model, model_settings=ModelSettings(timeout=1.25))
        with pytest.raises(ModelTimeoutError) as info:
            await Runner.run(agent, "hi", run_config=NO_TRACING)
        return str(info.value), agentsim.now(), scripted.remaining_steps, model.calls[0]

    message, when, remaining, call = agentsim.run(main)
    assert when == 1.25
    assert "1.25" in message
    assert remaining == 1  # the request never reached the scripted model
    assert (call.outcome, call.phase, call.consumed_step) == ("cancelled", "latency", False)


def test_retry_backoff_and_latency_add_up_in_virtual_time() -> None:
    async def main() -> tuple[str, list[float]]:
        flaky = model_error(
            RuntimeError("temporarily overloaded"),
            retry_advice=ModelRetryAdvice(suggested=True, replay_safety="safe"),
        )
        model = TimedModel(ScriptedModel([flaky, [assistant_message("recovered")]]), latency=0.5)
        settings = ModelSettings(
            retry=ModelRetrySettings(
                max_retries=2,
                backoff={"initial_delay": 2.0, "jitter": False, "max_delay": 10.0},
                policy=retry_policies.provider_suggested(),
            )
        )
        agent = Agent(name="Retrying", model=model, model_settings=settings)
        result = await Runner.run(agent, "hi", run_config=NO_TRACING)
        return result.final_output, [call.started_at for call in model.calls]

    output, starts = agentsim.run(main)
    assert output == "recovered"
    assert starts == [0.0, 2.5]  # 0.5 s latency, then 2.0 s back-off


def test_model_error_retry_advice_callback_sees_each_attempt() -> None:
    async def main() -> tuple[list[int], int, str]:
        attempts: list[int] = []

        def advise(attempt: int, request: Any) -> ModelRetryAdvice:
            attempts.append(attempt)
            assert isinstance(request.error, ConnectionError)
            return ModelRetryAdvice(suggested=attempt < 2, replay_safety="safe")

        scripted = ScriptedModel(
            [
                model_error(ConnectionError("reset"), advise),
                model_error(ConnectionError("reset again"), advise),
                [assistant_message("never reached")],
            ]
        )
        model = TimedModel(scripted)
        settings = ModelSettings(retry=ModelRetrySettings(max_retries=5, backoff={"jitter": False}, policy=retry_policies.provider_suggested()))
        agent = Agent(name="Flaky", model=model, model_settings=settings)
        with pytest.raises(ConnectionError, match="reset again"):
            await Runner.run(agent, "hi", run_config=NO_TRACING)
        return attempts, scripted.remaining_steps, model.calls[-1].outcome

    attempts, remaining, last_outcome = agentsim.run(main)
    assert attempts == [1, 2]  # the advice stopped the retries at the second attempt
    assert remaining == 1  # each retry consumed one scripted step
    assert last_outcome == "failed"


def test_streams_are_paced_first_token_then_interval() -> None:
    async def main() -> tuple[list[float], str]:
        model = TimedModel(ScriptedModel([[assistant_message("streamed answer")]]), first_token=0.3, event_interval=0.05)
        agent = Agent(name="Streamer", model=model)
        result = Runner.run_streamed(agent, "hi", run_config=NO_TRACING)
        times = [agentsim.now() async for event in result.stream_events() if event.type == "raw_response_event"]
        return times, result.final_output

    times, output = agentsim.run(main)
    assert output == "streamed answer"
    assert times[0] == 0.3
    assert times == pytest.approx([0.3 + 0.05 * i for i in range(len(times))])
    assert len(times) > 3


def test_cancelling_a_run_mid_call_cancels_exactly_there() -> None:
    async def main() -> tuple[list[tuple[str, str, bool]], int]:
        scripted = ScriptedModel(
            [[function_call("get_time_zone", {"city": "Oslo"}, call_id="c1")], [assistant_message("UTC+1")]]
        )
        model = TimedModel(scripted, latency=[1.0, 4.0])
        agent = Agent(name="Clock", model=model, tools=[get_time_zone])
        run = asyncio.create_task(Runner.run(agent, "Oslo?", run_config=NO_TRACING))
        await asyncio.sleep(2.0)  # the second call is in flight (started at 1.0, due at 5.0)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        return [(call.outcome, call.phase, call.consumed_step) for call in model.calls], scripted.remaining_steps

    calls, remaining = agentsim.run(main)
    assert calls == [("completed", "responding", True), ("cancelled", "latency", False)]
    assert remaining == 1  # call #1 (index 1) never reached the script


def test_seeded_latency_is_fixed_by_the_seed() -> None:
    async def main() -> float:
        model = TimedModel(ScriptedModel([[assistant_message("ok")]]), latency=uniform(0.1, 3.0))
        await Runner.run(Agent(name="A", model=model), "hi", run_config=NO_TRACING)
        return agentsim.now()

    # Sampled timing: each seed draws its own latency, and keeps it.
    ends = {seed: agentsim.run(main, seed=seed, strategy="jitter") for seed in range(6)}
    assert all(0.1 <= end <= 3.0 for end in ends.values())
    assert all(agentsim.run(main, seed=seed, strategy="jitter") == end for seed, end in ends.items())
    assert len(set(ends.values())) == len(ends)
    # Nominal timing: the midpoint, whatever the seed.
    assert {agentsim.run(main, seed=seed) for seed in range(3)} == {1.55}


def test_bad_delay_specs_are_typed_errors() -> None:
    with pytest.raises(agentsim.SimulationConfigError) as info:
        TimedModel(ScriptedModel([]), latency=-1)
    assert info.value.parameter == "latency"
    with pytest.raises(agentsim.SimulationConfigError) as info:
        TimedModel(ScriptedModel([]), event_interval=[0.1, "fast"])  # type: ignore[list-item]
    assert info.value.parameter == "event_interval[1]"
    with pytest.raises(agentsim.SimulationConfigError):
        model_error(RuntimeError("x"), retry_advice="soon")
