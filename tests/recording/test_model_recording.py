"""``RecordingModel`` and ``TimedModel.from_recording``: an agents run's
model calls recorded with their latencies and replayed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import requires_sdk

requires_sdk("0.21", "agents.testing's ScriptedModel, which TimedModel.from_recording replays with")
from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

import agentsim
from agentsim.models import TimedModel
from agentsim.recording import RecordedModelError, RecordingFormatError, RecordingModel, Tolerance, load

NO_TRACING = RunConfig(tracing_disabled=True)


@function_tool
def get_time_zone(city: str) -> str:
    """Look up a city's time zone."""
    return f"{city}: UTC+9"


def _scripted() -> TimedModel:
    return TimedModel(
        ScriptedModel([[function_call("get_time_zone", {"city": "Tokyo"}, call_id="c1")], [assistant_message("It is UTC+9 in Tokyo.")]]),
        latency=[1.5, 0.25],
        first_token=[0.3, 0.4],
        event_interval=0.05,
    )


async def _run(model: Any, streamed: bool) -> tuple[str, float, list[float]]:
    agent = Agent(name="Clock", model=model, tools=[get_time_zone])
    if not streamed:
        result = await Runner.run(agent, "Tokyo time zone?", run_config=NO_TRACING)
        return result.final_output, agentsim.now(), []
    stream = Runner.run_streamed(agent, "Tokyo time zone?", run_config=NO_TRACING)
    times = [agentsim.now() async for event in stream.stream_events() if event.type == "raw_response_event"]
    return stream.final_output, agentsim.now(), times


@pytest.mark.parametrize("streamed", [False, True], ids=["response", "stream"])
def test_a_run_replays_with_its_latencies(tmp_path: Path, streamed: bool) -> None:
    path = tmp_path / "run.jsonl"

    async def record() -> tuple[str, float, list[float]]:
        return await _run(RecordingModel(_scripted(), path), streamed)

    async def replay() -> tuple[str, float, list[float]]:
        model = TimedModel.from_recording(path)
        outcome = await _run(model, streamed)
        model.assert_complete()  # every recorded call was made
        return outcome

    recorded = agentsim.run(record, strategy="fifo")
    assert agentsim.run(replay, strategy="fifo") == recorded
    assert recorded[0] == "It is UTC+9 in Tokyo." and recorded[1] > 0
    recording = load(path)
    assert recording.header["kind"] == "model" and recording.layer == "calls"
    requests = [event for event in recording.events if event.type == "request"]
    assert [event.payload["tools"] for event in requests] == [["get_time_zone"], ["get_time_zone"]]
    assert all(event.payload["streamed"] is streamed for event in requests)


def test_explored_latencies_stay_within_the_tolerance(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"

    async def record() -> float:
        await _run(RecordingModel(_scripted(), path), False)
        return agentsim.now()

    recorded_end = agentsim.run(record, strategy="fifo")

    async def replay() -> float:
        await _run(TimedModel.from_recording(path, tolerance=Tolerance(0.1, 0.03)), False)
        return agentsim.now()

    ends = {agentsim.run(replay, seed=seed, strategy="timed") for seed in range(12)}
    assert len(ends) > 1  # the timings varied
    # Two calls of 1.5 s and 0.25 s: each may move by 10 % (0.15 s) or 30 ms.
    assert all(abs(end - recorded_end) <= 0.15 + 0.03 + 1e-9 for end in ends)


def test_a_recorded_failure_replays_as_a_failure(tmp_path: Path) -> None:
    path = tmp_path / "failed.jsonl"

    async def record() -> None:
        await Runner.run(Agent(name="A", model=RecordingModel(TimedModel(ScriptedModel([RuntimeError("overloaded")]), latency=0.5), path)), "hi", run_config=NO_TRACING)

    with pytest.raises(RuntimeError):
        agentsim.run(record)

    async def replay() -> None:
        await Runner.run(Agent(name="A", model=TimedModel.from_recording(path)), "hi", run_config=NO_TRACING)

    with pytest.raises(RecordedModelError) as caught:
        agentsim.run(replay)
    assert caught.value.error == "RuntimeError" and "overloaded" in str(caught.value)


def test_a_realtime_recording_is_not_a_model_recording() -> None:
    with pytest.raises(RecordingFormatError) as caught:
        TimedModel.from_recording(Path(__file__).parent / "data" / "support_call.jsonl")
    assert "layer 'wire'" in caught.value.problem
