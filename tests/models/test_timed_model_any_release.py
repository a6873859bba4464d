"""TimedModel on every supported openai-agents release (0.13.6 on), around a
model of the user's own: releases before 0.21 have no ``agents.testing``, and
TimedModel needs nothing from it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Runner, RunConfig
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

import agentsim
from agentsim.models import TimedModel


class CannedModel(Model):
    """A user's hand-written model: always answers ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.calls += 1
        message = ResponseOutputMessage(
            id="msg_1", type="message", role="assistant", status="completed",
            content=[ResponseOutputText(type="output_text", text=self.text, annotations=[])],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def test_a_users_model_takes_its_latency_through_the_runner() -> None:
    async def main() -> tuple[str, float, int]:
        model = TimedModel(CannedModel("UTC+9"), latency=1.5)
        result = await Runner.run(Agent(name="Clock", model=model), "Tokyo?", run_config=RunConfig(tracing_disabled=True))
        return result.final_output, agentsim.now(), len(model.calls)

    assert agentsim.run(main) == ("UTC+9", 1.5, 1)


def test_cancelling_during_the_latency_leaves_the_users_model_untouched() -> None:
    canned = CannedModel("late")

    async def main() -> str:
        model = TimedModel(canned, latency=10.0)
        try:
            async with asyncio.timeout(2.0):
                await Runner.run(Agent(name="Clock", model=model), "hi", run_config=RunConfig(tracing_disabled=True))
        except TimeoutError:
            pass
        assert agentsim.now() == 2.0
        return model.calls[0].phase

    assert agentsim.run(main) == "latency"
    assert canned.calls == 0
