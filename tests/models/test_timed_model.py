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
from agentsim import SimulationConfigError
from agentsim.models import RetryAdviceUnreachableError, ScriptedModelRequestAbortedError, TimedModel, model_error, uniform

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


# -- retry advice where nothing can ask it, aborts, token pacing ---------------------


def test_a_retry_advice_callback_on_a_bare_scripted_model_is_a_usage_error() -> None:
    # Before: the callback was silently ignored and the runner saw no advice.
    async def main() -> None:
        scripted = ScriptedModel([model_error(ConnectionError("reset"), lambda attempt, request: ModelRetryAdvice(suggested=True)), [assistant_message("ok")]])
        settings = ModelSettings(retry=ModelRetrySettings(max_retries=3, backoff={"jitter": False}, policy=retry_policies.provider_suggested()))
        agent = Agent(name="Flaky", model=scripted, model_settings=settings)
        try:
            await Runner.run(agent, "hi", run_config=NO_TRACING)
        except Exception:
            pass  # an application that swallows errors still fails the simulation

    with pytest.raises(RetryAdviceUnreachableError) as caught:
        agentsim.run(main)
    assert isinstance(caught.value.error, ConnectionError) and caught.value.streamed is False
    assert "TimedModel(ScriptedModel" in str(caught.value)


def test_fixed_retry_advice_still_works_on_a_bare_scripted_model() -> None:
    async def main() -> str:
        scripted = ScriptedModel([model_error(ConnectionError("reset"), ModelRetryAdvice(suggested=True, replay_safety="safe")), [assistant_message("ok")]])
        settings = ModelSettings(retry=ModelRetrySettings(max_retries=3, backoff={"jitter": False}, policy=retry_policies.provider_suggested()))
        result = await Runner.run(Agent(name="Flaky", model=scripted, model_settings=settings), "hi", run_config=NO_TRACING)
        return str(result.final_output)

    assert agentsim.run(main) == "ok"


def test_abort_during_latency_consumes_no_step_and_carries_the_call_index() -> None:
    async def main() -> tuple[int, str, bool, float, int, str]:
        scripted = ScriptedModel([[assistant_message("never")]])
        model = TimedModel(scripted, latency=2.0)
        agent = Agent(name="Slow", model=model)
        run = asyncio.create_task(Runner.run(agent, "hi", run_config=NO_TRACING))
        await asyncio.sleep(0.5)
        assert model.abort() == 0
        with pytest.raises(ScriptedModelRequestAbortedError) as caught:
            await run
        error = caught.value
        return error.call_index, error.phase, error.consumed_step, agentsim.now(), scripted.remaining_steps, model.calls[0].outcome

    assert agentsim.run(main) == (0, "latency", False, 0.5, 1, "aborted")


def test_abort_is_cooperative_inside_a_responder_and_checked_when_it_returns() -> None:
    async def main() -> tuple[str, float, str]:
        async def slow_answer(call: Any) -> Any:
            await asyncio.sleep(1.0)  # custom code runs to the end: not raced against the abort
            return [assistant_message("too late")]

        model = TimedModel(ScriptedModel([ModelStep.respond(slow_answer)]), latency=0.2)
        run = asyncio.create_task(Runner.run(Agent(name="Responder", model=model), "hi", run_config=NO_TRACING))
        await asyncio.sleep(0.5)
        model.abort(0)
        with pytest.raises(ScriptedModelRequestAbortedError) as caught:
            await run
        return caught.value.phase, agentsim.now(), caught.value.name

    assert agentsim.run(main) == ("responding", 1.2, "AbortError")


def test_a_future_call_can_be_aborted_before_it_starts() -> None:
    async def main() -> tuple[int, str, int]:
        scripted = ScriptedModel([[function_call("get_time_zone", {"city": "Oslo"}, call_id="c1")], [assistant_message("UTC+1")]])
        model = TimedModel(scripted, latency=0.1)
        model.abort(1)
        with pytest.raises(ScriptedModelRequestAbortedError) as caught:
            await Runner.run(Agent(name="Clock", model=model, tools=[get_time_zone]), "Oslo?", run_config=NO_TRACING)
        return caught.value.call_index, caught.value.phase, scripted.remaining_steps

    assert agentsim.run(main) == (1, "before_call", 1)


def test_abort_mid_stream_stops_before_the_next_event() -> None:
    async def main() -> tuple[list[str], str]:
        model = TimedModel(ScriptedModel([[assistant_message("one two three four five six")]]), first_token=0.1, tokens_per_second=10)
        result = Runner.run_streamed(Agent(name="Streamer", model=model), "hi", run_config=NO_TRACING)
        text: list[str] = []

        async def abort_at_a_quarter_second() -> None:
            await asyncio.sleep(0.25)
            model.abort(0)

        aborter = asyncio.create_task(abort_at_a_quarter_second())
        with pytest.raises(ScriptedModelRequestAbortedError) as caught:
            async for event in result.stream_events():
                if event.type == "raw_response_event" and event.data.type == "response.output_text.delta":
                    text.append(event.data.delta)
        await aborter
        return text, caught.value.phase

    text, phase = agentsim.run(main)
    assert text == ["one ", "two "]  # tokens at 0.1 and 0.2 s; the abort at 0.25 s cut the wait for 0.3
    assert phase == "streaming"


def test_tokens_per_second_paces_text_after_the_first_token() -> None:
    async def main() -> tuple[list[tuple[float, str]], str]:
        model = TimedModel(ScriptedModel([[assistant_message("The answer is forty two.")]]), first_token=0.4, tokens_per_second=20)
        result = Runner.run_streamed(Agent(name="Streamer", model=model), "hi", run_config=NO_TRACING)
        deltas = [
            (agentsim.now(), event.data.delta)
            async for event in result.stream_events()
            if event.type == "raw_response_event" and event.data.type == "response.output_text.delta"
        ]
        return deltas, str(result.final_output)

    deltas, output = agentsim.run(main)
    assert output == "The answer is forty two."
    assert [delta for _, delta in deltas] == ["The ", "answer ", "is ", "forty ", "two."]
    assert [time for time, _ in deltas] == pytest.approx([0.4 + 0.05 * i for i in range(5)])


def test_characters_per_second_and_a_rate_window_explored_by_seed() -> None:
    def first_arrivals(seed: int) -> list[float]:
        async def main() -> list[float]:
            model = TimedModel(ScriptedModel([[assistant_message("abcdef")]]), tokens_per_second=(50, 100), tokenize=list)
            result = Runner.run_streamed(Agent(name="Chars", model=model), "hi", run_config=NO_TRACING)
            return [
                agentsim.now()
                async for event in result.stream_events()
                if event.type == "raw_response_event" and event.data.type == "response.output_text.delta"
            ]

        return agentsim.run(main, seed=seed, strategy="jitter")

    runs = {seed: first_arrivals(seed) for seed in range(4)}
    for times in runs.values():
        gaps = [later - earlier for earlier, later in zip(times, times[1:])]
        assert len(times) == 6 and all(0.01 - 1e-9 <= gap <= 0.02 + 1e-9 for gap in gaps)
    assert len({tuple(times) for times in runs.values()}) > 1  # the seed picks the speeds
    assert runs[2] == first_arrivals(2)  # and fixes them


def test_abort_of_an_ended_call_is_a_typed_error() -> None:
    async def main() -> None:
        model = TimedModel(ScriptedModel([[assistant_message("done")]]))
        await Runner.run(Agent(name="Quick", model=model), "hi", run_config=NO_TRACING)
        with pytest.raises(SimulationConfigError, match="already ended"):
            model.abort(0)
        with pytest.raises(SimulationConfigError, match="no call is running"):
            model.abort()

    agentsim.run(main)


def test_retry_advice_callbacks_reach_streamed_calls_too() -> None:
    async def main(wrapped: bool) -> tuple[str, list[int]]:
        attempts: list[int] = []

        def advise(attempt: int, request: Any) -> ModelRetryAdvice:
            attempts.append(attempt)
            return ModelRetryAdvice(suggested=True, replay_safety="safe")

        scripted = ScriptedModel([model_error(ConnectionError("reset"), advise), [assistant_message("ok")]])
        settings = ModelSettings(retry=ModelRetrySettings(max_retries=3, backoff={"jitter": False}, policy=retry_policies.provider_suggested()))
        agent = Agent(name="Flaky", model=TimedModel(scripted) if wrapped else scripted, model_settings=settings)
        result = Runner.run_streamed(agent, "hi", run_config=NO_TRACING)
        async for _ in result.stream_events():
            pass
        return str(result.final_output), attempts

    assert agentsim.run(main, True) == ("ok", [1])
    with pytest.raises(RetryAdviceUnreachableError) as caught:
        agentsim.run(main, False)
    assert caught.value.streamed is True
