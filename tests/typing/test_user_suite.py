"""A user's test file, written against agentsim's public API as the docs show
it: the suite runs it, and CI type-checks it with ``mypy --strict`` (the
types users see must be precise enough for a strict project)."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import requires_sdk

requires_sdk("0.21", "the user file composes with agents.testing")
from agents import Agent, Runner
from agents.realtime import RealtimeAgent, RealtimeRunner
from agents.testing import ScriptedModel, assistant_message

import agentsim
from agentsim.explore import ExploreReport
from agentsim.models import TimedModel, uniform
from agentsim.realtime import RealtimeCall, RealtimeScenarioContext, ScriptedRealtimeTransport
from agentsim.realtime.server import Reply, SimulatedRealtimeModel, SimulatedRealtimeServer
from agentsim.timing import DelaySource, sleep_between


async def reply_before_deadline() -> str:
    order: list[str] = []

    async def reply() -> None:
        await sleep_between(0.28, 0.305)
        order.append("reply")

    async def deadline() -> None:
        await asyncio.sleep(0.3)
        order.append("deadline")

    async with asyncio.TaskGroup() as group:
        group.create_task(reply())
        group.create_task(deadline())
    return order[0]


def test_windows_and_the_explorer() -> None:
    first: str = agentsim.run(reply_before_deadline)
    assert first == "reply"
    result: agentsim.SimulationResult[str] = agentsim.simulate(reply_before_deadline, seed=3, strategy="random")
    assert result.choice_points >= 1
    report: ExploreReport = agentsim.explore(reply_before_deadline, runs=5, database=None)
    assert report.runs_executed == 5
    options = agentsim.ExploreOptions(runs=3, strategy="pct", database=None)
    assert agentsim.explore(reply_before_deadline, **options.explore_kwargs()).runs_executed == 3


async def timed_agent() -> str:
    model = TimedModel(ScriptedModel([[assistant_message("hi")]]), latency=uniform(0.2, 0.4))
    result = await Runner.run(Agent(name="A", model=model), "hello")
    latency = DelaySource(0.1, name="latency", stream="user:latency")
    await latency.sleep(0)
    return str(result.final_output)


def test_timed_model() -> None:
    assert agentsim.run(timed_agent) == "hi"


async def scripted_call() -> list[str]:
    transport = ScriptedRealtimeTransport()
    runner = RealtimeRunner(RealtimeAgent(name="Helper"), model=transport, config={"tracing_disabled": True})
    seen: list[str] = []

    async def server(ctx: RealtimeScenarioContext) -> None:
        connect: RealtimeCall = await ctx.expect_call("connect")
        seen.append(connect.kind)
        message: RealtimeCall = await ctx.expect_call("user_input")
        seen.append(message.kind)

    async def app() -> None:
        async with await runner.run() as session:
            await session.send_message("hi")

    await transport.run_scenario(scenario=server, exercise=app, timeout=5.0)
    return seen


def test_scripted_transport() -> None:
    assert agentsim.run(scripted_call) == ["connect", "user_input"]


async def simulated_server_call() -> int:
    server = SimulatedRealtimeServer([Reply("hello there", audio_seconds=0.5)], latency=uniform(0.01, 0.03))
    model: SimulatedRealtimeModel = server.model()
    session = await RealtimeRunner(RealtimeAgent(name="Hi"), model=model, config={"tracing_disabled": True}).run()
    async with session:
        await session.send_message("hi")
        await asyncio.sleep(2.0)
    server.assert_rules()
    return len(server.responses)


def test_simulated_server() -> None:
    assert agentsim.run(simulated_server_call) == 1


@pytest.mark.agentsim(runs=3)
async def test_marked(sim: agentsim.SimulationView) -> None:
    await asyncio.sleep(1.0)
    assert sim.now == 1.0
