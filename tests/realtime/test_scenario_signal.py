"""``run_scenario(..., signal=event)``: the JS guide's ``AbortSignal`` for a
scenario whose two sides wait for each other."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

import agentsim
from agentsim.realtime import ScriptedRealtimeScenarioCancelledError, ScriptedRealtimeTransport
from agentsim.scenario import ScenarioCancelledError


@pytest.mark.parametrize("make_event", [asyncio.Event, anyio.Event], ids=["asyncio.Event", "anyio.Event"])
def test_a_signal_cancels_both_sides_and_lists_what_was_pending(make_event: Any) -> None:
    async def main() -> tuple[ScriptedRealtimeScenarioCancelledError, float, list[str], str]:
        transport = ScriptedRealtimeTransport()
        cleaned: list[str] = []
        stop = make_event()
        asyncio.get_running_loop().call_later(2.0, stop.set)

        async def scenario(ctx: Any) -> None:
            try:
                await ctx.expect_call("connect")
                await ctx.expect_call("user_input")  # the app waits for a gate first: never comes
            finally:
                cleaned.append("scenario")

        async def exercise() -> None:
            await transport.connect({})
            try:
                await asyncio.Event().wait()  # the gate the scenario would open
            finally:
                cleaned.append("exercise")
                await transport.close()

        with pytest.raises(ScriptedRealtimeScenarioCancelledError) as info:
            await transport.run_scenario(scenario=scenario, exercise=exercise, signal=stop, timeout=None)
        return info.value, agentsim.now(), sorted(cleaned), transport.status

    error, when, cleaned, status = agentsim.run(main)
    assert when == 2.0  # at the signal, not at a deadline
    assert isinstance(error, ScenarioCancelledError)
    assert [expectation.kind for expectation in error.pending_expectations] == ["user_input"]
    assert cleaned == ["exercise", "scenario"] and status == "disconnected"  # both sides' clean-up ran
    assert error.tasks and "signal" in str(error)


def test_a_signal_never_set_changes_nothing() -> None:
    async def main() -> list[str]:
        transport = ScriptedRealtimeTransport()
        seen: list[str] = []

        async def scenario(ctx: Any) -> None:
            seen.append((await ctx.expect_call("connect")).kind)
            seen.append((await ctx.expect_call("close")).kind)

        async def exercise() -> None:
            await transport.connect({})
            await transport.close()

        await transport.run_scenario(scenario=scenario, exercise=exercise, signal=asyncio.Event())
        return seen

    assert agentsim.run(main) == ["connect", "close"]


def test_a_signal_that_is_not_an_event_is_a_typed_error() -> None:
    async def main() -> None:
        await ScriptedRealtimeTransport().run_scenario(scenario=lambda ctx: asyncio.sleep(0), exercise=lambda: asyncio.sleep(0), signal=5.0)

    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.run(main)
    assert info.value.parameter == "signal"
