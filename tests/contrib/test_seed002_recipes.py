"""Every runnable recipe of the SDK's Python testing guide (seed 002), unchanged,
inside an agentsim simulation: FIFO and random schedules with seeds 0-3.

Each ``recipe_*`` is the guide's test body (the ``@pytest.mark.asyncio``
wrapper removed); ``test_recipe`` runs it under every schedule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import pytest

from tests.conftest import requires_sdk

requires_sdk("0.21", "the guide's recipes use agents.testing")
from agents import Agent, ModelRetryAdvice, ModelSettings, RunConfig, Runner
from agents.decorators import tool
from agents.models.interface import ModelTracing
from agents.realtime import (
    RealtimeAgent,
    RealtimeModelOutputTextDeltaEvent,
    RealtimeModelSendToolOutput,
    RealtimeModelSendUserInput,
    RealtimeModelToolCallEvent,
    RealtimeRawModelEvent,
    RealtimeRunner,
)
from agents.realtime.testing import RealtimeStep, ScriptedRealtimeModel
from agents.sandbox import ExecResult, SandboxAgent
from agents.sandbox.capabilities import Shell
from agents.testing import (
    ModelCall,
    ModelStep,
    ScriptedModel,
    UnconsumedModelSteps,
    UnexpectedModelCall,
    assistant_message,
    function_call,
    scripted_sandbox_session,
)
from agents.voice import AudioInput, SingleAgentVoiceWorkflow, StreamedAudioInput, VoicePipeline
from agents.voice.testing import (
    ScriptedSTTModel,
    ScriptedTranscriptionSession,
    ScriptedTTSModel,
    ScriptedVoiceWorkflow,
    TTSResult,
    pcm16_samples,
)

import agentsim

SCHEDULES = [("fifo", 0)] + [("random", seed) for seed in range(4)]
RECIPES: dict[str, Callable[[], Awaitable[None]]] = {}


def recipe(fn: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    RECIPES[fn.__name__.removeprefix("recipe_")] = fn
    return fn


@recipe
async def recipe_fixed_response() -> None:
    model = ScriptedModel([[assistant_message("Paris is the capital of France.")]])
    agent = Agent(name="Geography assistant", model=model)
    result = await Runner.run(agent, "What is the capital of France?", run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == "Paris is the capital of France."
    assert len(model.calls) == 1
    model.assert_complete()


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"{city}: sunny"


@recipe
async def recipe_tool_workflow() -> None:
    model = ScriptedModel(
        [
            [function_call("get_weather", {"city": "Tokyo"}, call_id="call_1")],
            [assistant_message("It is sunny in Tokyo.")],
        ]
    )
    agent = Agent(name="Weather assistant", model=model, tools=[get_weather])
    result = await Runner.run(agent, "What is the weather in Tokyo?", run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == "It is sunny in Tokyo."
    assert len(model.calls) == 2
    assert model.last_call is not None
    assert any(item.get("type") == "function_call_output" for item in model.last_call.input)
    model.assert_complete()


def respond(call: ModelCall) -> Any:
    assert call.streamed is False
    assert call.input == [{"content": "Summarize this", "role": "user"}]
    return {"output": [assistant_message("Handled the normalized request.")]}


@recipe
async def recipe_request_aware_response() -> None:
    model = ScriptedModel([ModelStep.respond(respond)])
    agent = Agent(name="Assistant", model=model)
    result = await Runner.run(agent, "Summarize this", run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == "Handled the normalized request."
    model.assert_complete()


@recipe
async def recipe_streaming_automatic_events() -> None:
    model = ScriptedModel([[assistant_message("Streamed through the runner.")]])
    agent = Agent(name="Streamer", model=model)
    result = Runner.run_streamed(agent, "Stream please", run_config=RunConfig(tracing_disabled=True))
    kinds = [event.data.type async for event in result.stream_events() if event.type == "raw_response_event"]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds
    assert result.final_output == "Streamed through the runner."
    model.assert_complete()


async def _normalized_events(text: str) -> list[Any]:
    source = ScriptedModel([[assistant_message(text)]])
    return [
        event
        async for event in source.stream_response(
            None, "x", ModelSettings(), [], None, [], ModelTracing.DISABLED,
            previous_response_id=None, conversation_id=None, prompt=None,
        )
    ]


@recipe
async def recipe_streaming_exact_events() -> None:
    events = await _normalized_events("The terminal output used by the runner.")
    step = ModelStep.stream(events, output=[assistant_message("The terminal output used by the runner.")])
    model = ScriptedModel([step])
    agent = Agent(name="Exact streamer", model=model)
    result = Runner.run_streamed(agent, "Stream exactly", run_config=RunConfig(tracing_disabled=True))
    seen = [event.data async for event in result.stream_events() if event.type == "raw_response_event"]
    assert seen == events  # exactly the scripted normalized events, in order
    assert result.final_output == "The terminal output used by the runner."
    model.assert_complete()


@recipe
async def recipe_raise_error_with_retry_advice() -> None:
    from agents import ModelRetrySettings, retry_policies

    step = ModelStep.raise_error(
        RuntimeError("temporary failure"),
        retry_advice=ModelRetryAdvice(suggested=True, replay_safety="safe"),
    )
    model = ScriptedModel([step, [assistant_message("Recovered after a retry.")]])
    settings = ModelSettings(retry=ModelRetrySettings(max_retries=1, policy=retry_policies.provider_suggested()))
    agent = Agent(name="Retrying assistant", model=model, model_settings=settings)
    result = await Runner.run(agent, "Try again", run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == "Recovered after a retry."
    assert len(model.calls) == 2  # each retry is another model call and consumes the next step
    model.assert_complete()


@recipe
async def recipe_drift_detection() -> None:
    # An extra model request raises UnexpectedModelCall ...
    extra = ScriptedModel([[function_call("get_weather", {"city": "Oslo"}, call_id="call_1")]])
    agent = Agent(name="Drifting", model=extra, tools=[get_weather])
    with pytest.raises(UnexpectedModelCall) as info:
        await Runner.run(agent, "Weather?", run_config=RunConfig(tracing_disabled=True))
    assert info.value.call_index == 1
    # ... and stopping early leaves steps for assert_complete() to report.
    early = ScriptedModel([[assistant_message("Done.")], [assistant_message("Never asked.")]])
    await Runner.run(Agent(name="Early", model=early), "Hi", run_config=RunConfig(tracing_disabled=True))
    with pytest.raises(UnconsumedModelSteps) as unconsumed:
        early.assert_complete()
    assert unconsumed.value.remaining_steps == 1


async def run_sandbox_workflow() -> ScriptedModel:
    """The guide's sandbox recipe; returns the model (its last call holds the shell output)."""
    sandbox = scripted_sandbox_session(
        [
            {
                "method": "exec",
                "match": lambda call: call.args == ("pwd",),
                "result": ExecResult(stdout=b"/workspace\n", stderr=b"", exit_code=0),
            }
        ]
    )
    model = ScriptedModel(
        [
            [function_call("exec_command", {"cmd": "pwd"}, call_id="call_1")],
            [assistant_message("The workspace is /workspace.")],
        ]
    )
    agent = SandboxAgent(name="Workspace assistant", model=model, capabilities=[Shell()])
    async with sandbox:
        result = await Runner.run(
            agent,
            "Which directory are you in?",
            run_config=RunConfig(sandbox={"session": sandbox}, tracing_disabled=True),
        )
    assert result.final_output == "The workspace is /workspace."
    assert [call.method for call in sandbox.calls] == ["exec"]
    sandbox.assert_complete()
    model.assert_complete()
    return model


@recipe
async def recipe_sandbox_workflow() -> None:
    await run_sandbox_workflow()


@recipe
async def recipe_realtime_message() -> None:
    reply = RealtimeModelOutputTextDeltaEvent(item_id="item_1", delta="Hello!", response_id="response_1")
    model = ScriptedRealtimeModel([RealtimeStep(expect=RealtimeModelSendUserInput(user_input="Hello"), emit=[reply])])
    runner = RealtimeRunner(RealtimeAgent(name="Assistant"), model=model, config={"tracing_disabled": True})
    observed_reply = False
    async with await runner.run() as session:
        await session.send_message("Hello")
        async for event in session:
            if isinstance(event, RealtimeRawModelEvent) and event.data == reply:
                observed_reply = True
                break
    assert observed_reply
    assert model.sent_events == (RealtimeModelSendUserInput(user_input="Hello"),)
    assert model.closed is True
    model.assert_complete()


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order by ID."""
    return f"Order {order_id} has shipped."


@recipe
async def recipe_realtime_tool_workflow() -> None:
    tool_call = RealtimeModelToolCallEvent(name="lookup_order", call_id="call_1", arguments='{"order_id":"order_123"}')

    def matches_tool_output(event: Any) -> bool:
        return (
            isinstance(event, RealtimeModelSendToolOutput)
            and event.tool_call.call_id == "call_1"
            and event.output == "Order order_123 has shipped."
        )

    model = ScriptedRealtimeModel([RealtimeStep(expect=matches_tool_output)], connect_events=[tool_call])
    agent = RealtimeAgent(name="Order assistant", tools=[lookup_order])
    runner = RealtimeRunner(agent, model=model, config={"async_tool_calls": False, "tracing_disabled": True})
    async with await runner.run():
        pass
    model.assert_complete()


@recipe
async def recipe_voice_pipeline() -> None:
    model = ScriptedModel([[assistant_message("Hello there.")]])
    stt = ScriptedSTTModel("hello")
    pcm = pcm16_samples([0, 100, -100, 0])
    tts = ScriptedTTSModel([TTSResult([pcm])])
    pipeline = VoicePipeline(
        workflow=SingleAgentVoiceWorkflow(Agent(name="Voice assistant", model=model)),
        stt_model=stt,
        tts_model=tts,
        config={"tracing_disabled": True, "tts_settings": {"buffer_size": 1}},
    )
    result = await pipeline.run(AudioInput(np.zeros(2, dtype=np.int16)))
    events = [event async for event in result.stream()]
    assert events
    assert [call.text for call in tts.calls] == ["Hello there."]
    stt.assert_complete()
    tts.assert_complete()
    model.assert_complete()


@recipe
async def recipe_scripted_voice_workflow() -> None:
    workflow = ScriptedVoiceWorkflow(turns=["Hello there."], start="Welcome.")
    audio = StreamedAudioInput()
    stt = ScriptedSTTModel(sessions=[ScriptedTranscriptionSession(["hi"])])
    tts = ScriptedTTSModel([TTSResult([pcm16_samples([1, 2])]), TTSResult([pcm16_samples([3, 4])])])
    pipeline = VoicePipeline(workflow=workflow, stt_model=stt, tts_model=tts, config={"tracing_disabled": True})
    result = await pipeline.run(audio)  # streamed input: on_start() consumes the start step
    events = [event.type async for event in result.stream()]
    assert events.count("voice_stream_event_audio") == 2
    assert workflow.transcriptions == ("hi",)
    assert [call.text for call in tts.calls] == ["Welcome.", "Hello there."]
    workflow.assert_complete()
    stt.assert_complete()
    tts.assert_complete()


@recipe
async def recipe_streamed_transcription() -> None:
    session = ScriptedTranscriptionSession(["first turn", "second turn"])
    stt = ScriptedSTTModel(sessions=[session])
    workflow = ScriptedVoiceWorkflow(turns=["Reply one.", "Reply two."])
    tts = ScriptedTTSModel([TTSResult([pcm16_samples([1])]), TTSResult([pcm16_samples([2])])])
    pipeline = VoicePipeline(workflow=workflow, stt_model=stt, tts_model=tts, config={"tracing_disabled": True})
    result = await pipeline.run(StreamedAudioInput())
    events = [event.type async for event in result.stream()]
    assert events.count("voice_stream_event_lifecycle") >= 2
    assert stt.created_sessions == (session,)
    assert workflow.transcriptions == ("first turn", "second turn")
    assert session.closed is True
    stt.assert_complete()
    workflow.assert_complete()
    tts.assert_complete()


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_recipe(name: str) -> None:
    digests = {}
    for strategy, seed in SCHEDULES:
        result = agentsim.simulate(RECIPES[name], strategy=strategy, seed=seed)
        assert result.ok, f"{name} under {strategy}/{seed}: {result.exception!r}"
        digests[(strategy, seed)] = result.trace.digest()
    # The same seed replays the same schedule.
    strategy, seed = SCHEDULES[-1]
    assert agentsim.simulate(RECIPES[name], strategy=strategy, seed=seed).trace.digest() == digests[(strategy, seed)]


def test_every_recipe_of_the_guide_is_here() -> None:
    assert set(RECIPES) == {
        "fixed_response",
        "tool_workflow",
        "request_aware_response",
        "streaming_automatic_events",
        "streaming_exact_events",
        "raise_error_with_retry_advice",
        "drift_detection",
        "sandbox_workflow",
        "realtime_message",
        "realtime_tool_workflow",
        "voice_pipeline",
        "scripted_voice_workflow",
        "streamed_transcription",
    }


REALTIME_RECIPES = ("realtime_message", "realtime_tool_workflow")


@pytest.mark.parametrize("latency", [0.0, 0.3])
@pytest.mark.parametrize("name", REALTIME_RECIPES)
@pytest.mark.parametrize(("strategy", "seed"), SCHEDULES)
def test_realtime_recipe_wrapped_in_the_timed_model(name: str, latency: float, strategy: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guide's realtime recipes with their ScriptedRealtimeModel wrapped in
    TimedRealtimeModel, the one line docs/realtime.md promises, at zero and
    non-zero latency, under FIFO and random seeds 0-3."""
    from agentsim.realtime import TimedRealtimeModel

    scripted = ScriptedRealtimeModel  # the SDK's class, before the recipe's name is patched

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return TimedRealtimeModel(scripted(*args, **kwargs), latency=latency)

    monkeypatch.setitem(RECIPES[name].__globals__, "ScriptedRealtimeModel", wrapped)
    agentsim.run(RECIPES[name], seed=seed, strategy=strategy)


def test_every_realtime_recipe_is_run_wrapped() -> None:
    assert set(REALTIME_RECIPES) == {name for name in RECIPES if name.startswith("realtime")}
