"""The generic scenario layer on its own: a minimal double (a "door" the
application opens and closes) built on ``CallScript`` and ``run_scenario``,
on both backends and under fifo and random seeds 1-2."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import pytest

import agentsim
from agentsim.scenario import (
    CallMatcherError,
    CallScript,
    IncompleteScenarioError,
    ScenarioTimeoutError,
    UnexpectedCallError,
    run_scenario,
)

SCHEDULES = [("fifo", 0), ("random", 1), ("random", 2)]


@dataclass(frozen=True)
class DoorCall:
    index: int
    kind: str
    at: float

    def describe(self) -> str:
        return f"#{self.index} {self.kind} at {self.at:.3f}s"


class Door:
    """The double: the application's calls are recorded in order."""

    def __init__(self) -> None:
        self.script: CallScript[DoorCall] = CallScript()

    async def use(self, kind: str) -> None:
        failure = self.script.take_failure(kind)
        self.script.add(DoorCall(self.script.next_index, kind, agentsim.now()))
        if failure is not None:
            raise failure
        await anyio.sleep(0)

    async def run(self, scenario: Any, exercise: Any, timeout: float | None = 5.0) -> None:
        await run_scenario(scenario, exercise, context=self, script=self.script, timeout=timeout, attach_background=lambda group: None)


def _run(main: Any, backend: str, strategy: str, seed: int) -> Any:
    return agentsim.simulate(main, backend=backend, strategy=strategy, seed=seed)


@pytest.mark.parametrize(("strategy", "seed"), SCHEDULES)
def test_expectations_consume_calls_in_order_whenever_they_come(backend: str, strategy: str, seed: int) -> None:
    async def main() -> list[str]:
        door = Door()
        seen: list[str] = []

        async def scenario(ctx: Door) -> None:
            seen.append((await ctx.script.expect("open")).describe())
            seen.append((await ctx.script.expect("close", lambda call: call.at >= 1.0)).describe())

        async def exercise() -> None:
            await door.use("open")  # before the scenario expects it: buffered
            await anyio.sleep(1.0)
            await door.use("close")

        await door.run(scenario, exercise)
        door.script.assert_complete()
        return seen

    result = _run(main, backend, strategy, seed)
    assert result.value == ["#0 open at 0.000s", "#1 close at 1.000s"], result.exception


@pytest.mark.parametrize(("strategy", "seed"), SCHEDULES)
def test_the_wrong_call_and_a_rejecting_matcher_are_typed_failures(backend: str, strategy: str, seed: int) -> None:
    async def wrong_call() -> None:
        door = Door()

        async def scenario(ctx: Door) -> None:
            await ctx.script.expect("close")

        await door.run(scenario, lambda: door.use("open"))

    error = _run(wrong_call, backend, strategy, seed).exception
    assert isinstance(error, UnexpectedCallError) and (error.expected, error.actual, error.call_index) == ("close", "open", 0)

    async def rejected() -> None:
        door = Door()

        async def scenario(ctx: Door) -> None:
            await ctx.script.expect("open", lambda call: call.at > 5)

        await door.run(scenario, lambda: door.use("open"))

    error = _run(rejected, backend, strategy, seed).exception
    assert isinstance(error, CallMatcherError) and error.call_index == 0


def test_an_expectation_nobody_meets_is_incomplete_and_a_stuck_one_times_out(backend: str) -> None:
    async def incomplete() -> None:
        door = Door()

        async def scenario(ctx: Door) -> None:
            await ctx.script.expect("open")
            await ctx.script.expect("close")

        await door.run(scenario, lambda: door.use("open"))

    error = _run(incomplete, backend, "fifo", 0).exception
    assert isinstance(error, IncompleteScenarioError)
    assert [pending.kind for pending in error.pending_expectations] == ["close"]

    async def stuck() -> float:
        door = Door()

        async def scenario(ctx: Door) -> None:
            await ctx.script.expect("open")

        async def exercise() -> None:
            await anyio.sleep_forever()

        try:
            await door.run(scenario, exercise, timeout=2.5)
        except ScenarioTimeoutError as error:
            assert error.timeout == 2.5 and [pending.kind for pending in error.pending_expectations] == ["open"]
            return agentsim.now()
        raise AssertionError("no timeout")

    assert agentsim.run(stuck, backend=backend) == 2.5


def test_an_injected_failure_reaches_the_application_and_the_scenario_sees_the_call(backend: str) -> None:
    async def main() -> str:
        door = Door()
        door.script.fail_next("open", ConnectionError("jammed"))

        async def scenario(ctx: Door) -> None:
            await ctx.script.expect("open")

        async def exercise() -> None:
            with pytest.raises(ConnectionError, match="jammed"):
                await door.use("open")

        await door.run(scenario, exercise)
        door.script.assert_complete()
        return "ok"

    assert agentsim.run(main, backend=backend) == "ok"


def test_the_original_error_of_either_side_is_raised_not_a_group(backend: str) -> None:
    class AppBug(Exception):
        pass

    async def main() -> None:
        door = Door()

        async def scenario(ctx: Door) -> None:
            await ctx.script.expect("open")
            await anyio.sleep_forever()

        async def exercise() -> None:
            await door.use("open")
            raise AppBug("boom")

        await door.run(scenario, exercise)

    error = _run(main, backend, "fifo", 0).exception
    assert type(error) is AppBug


def test_an_infinite_scenario_deadline_means_none(backend: str) -> None:
    import math

    async def main() -> float:
        door = Door()

        async def scenario(ctx: Door) -> None:
            await ctx.script.expect("open")

        async def exercise() -> None:
            await anyio.sleep(3600.0)  # an hour: no deadline cuts it short
            await door.use("open")

        await door.run(scenario, exercise, timeout=math.inf)
        return agentsim.now()

    assert agentsim.run(main, backend=backend) == 3600.0


def test_the_realtime_transport_takes_an_infinite_deadline() -> None:
    import math

    from agents.realtime import RealtimeAgent, RealtimeRunner

    from agentsim.realtime import ScriptedRealtimeTransport

    async def main() -> float:
        transport = ScriptedRealtimeTransport()
        runner = RealtimeRunner(RealtimeAgent(name="A"), model=transport, config={"tracing_disabled": True})

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")

        async def exercise() -> None:
            async with await runner.run():
                await anyio.sleep(100.0)

        await transport.run_scenario(scenario=scenario, exercise=exercise, timeout=math.inf)
        return agentsim.now()

    assert agentsim.run(main) == 100.0
