"""The scripted transport where the realtime guide's app uses
``OpenAIRealtimeSIPModel()``: ``ScriptedRealtimeTransport(sip=True)``."""

from __future__ import annotations

from typing import Any

import pytest
from agents.exceptions import UserError
from agents.realtime import RealtimeAgent, RealtimeRunner

import agentsim
from agentsim.realtime import ScriptedRealtimeTransport


def test_a_sip_call_attaches_by_call_id_and_is_recorded() -> None:
    async def main() -> Any:
        transport = ScriptedRealtimeTransport(sip=True)

        async def scenario(ctx: Any) -> Any:
            connect = await ctx.expect_call("connect")
            await ctx.expect_call("close")
            return connect

        async def exercise() -> None:
            async with await RealtimeRunner(RealtimeAgent(name="Phone"), model=transport).run(model_config={"call_id": "rtc_123"}):
                pass

        await transport.run_scenario(scenario=scenario, exercise=exercise)
        return transport.calls[0].options

    options = agentsim.run(main)
    assert options.call_id == "rtc_123"


@pytest.mark.parametrize(
    ("model_config", "words"),
    [({}, "requires `call_id`"), ({"call_id": "rtc_1", "initial_model_settings": {"model_name": "gpt-realtime"}}, "both `call_id` and `model_name`")],
)
def test_a_sip_connect_is_refused_as_the_sip_model_refuses_it(model_config: dict[str, Any], words: str) -> None:
    async def main() -> tuple[str, int]:
        transport = ScriptedRealtimeTransport(sip=True)
        with pytest.raises(UserError) as info:
            await transport.connect(model_config)
        return str(info.value), len(transport.calls)

    message, recorded = agentsim.run(main)
    assert words in message and recorded == 0  # refused before it was recorded, as the SDK refuses before connecting


def test_without_sip_a_connect_needs_no_call_id() -> None:
    async def main() -> int:
        transport = ScriptedRealtimeTransport()
        await transport.connect({})
        await transport.close()
        return len(transport.calls)

    assert agentsim.run(main) == 2
    with pytest.raises(agentsim.SimulationConfigError):
        ScriptedRealtimeTransport(sip="yes")  # type: ignore[arg-type]
