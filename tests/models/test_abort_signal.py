"""``agentsim.models.current_call().signal``: custom code inside a model call
ends at the abort instant, as the JS guide's ``call.request.signal`` allows;
and the scripted model's errors carry ``call_index``, ``streamed`` and
``step_type`` where the JS errors carry them."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.conftest import requires_sdk

requires_sdk("0.21", "agents.testing's ScriptedModel")
from agents import Agent, RunConfig, Runner
from agents.testing import ModelStep, ScriptedModel, UnexpectedModelCall, assistant_message

import agentsim
from agentsim.models import NotInModelCallError, ScriptedModelRequestAbortedError, TimedModel, current_call

NO_TRACING = RunConfig(tracing_disabled=True)


def _abort_at(model: TimedModel, seconds: float, call_index: int = 0) -> None:
    import asyncio

    asyncio.get_running_loop().call_later(seconds, model.abort, call_index)


@pytest.mark.parametrize("backend_seed", [0, 1, 2])
def test_a_responder_watching_the_signal_ends_at_the_abort(backend_seed: int) -> None:
    async def main() -> tuple[float, str, float | None, bool]:
        async def slow(call: Any) -> Any:
            signal = current_call().signal
            with anyio.move_on_after(7.0):
                await signal.wait()  # a long wait the test can end early
            return [assistant_message("too late")]

        model = TimedModel(ScriptedModel([ModelStep.respond(slow)]), latency=0.5)
        _abort_at(model, 3.0)
        with pytest.raises(ScriptedModelRequestAbortedError) as info:
            await Runner.run(Agent(name="A", model=model), "hi", run_config=NO_TRACING)
        [call] = model.calls
        return agentsim.now(), info.value.phase, call.finished_at, call.signal.aborted

    now, phase, finished, aborted = agentsim.run(main, seed=backend_seed)
    assert now == 3.0 and finished == 3.0  # not 7.0: the responder saw the abort
    assert phase == "responding" and aborted


def test_a_stream_factory_sees_its_call_and_can_throw_at_the_abort() -> None:
    async def main() -> tuple[float, list[int], bool]:
        seen: list[int] = []

        async def stream(call: Any) -> Any:
            me = current_call()
            seen.append(me.index)
            assert me.streamed
            await me.signal.wait()
            me.signal.throw_if_aborted()
            yield  # pragma: no cover - never reached

        model = TimedModel(ScriptedModel([ModelStep.stream(stream)]))
        _abort_at(model, 1.25)
        result = Runner.run_streamed(Agent(name="A", model=model), "hi", run_config=NO_TRACING)
        with pytest.raises(ScriptedModelRequestAbortedError):
            async for _ in result.stream_events():
                pass
        return agentsim.now(), seen, model.calls[0].signal.aborted

    assert agentsim.run(main) == (1.25, [0], True)


def test_current_call_outside_a_call_is_a_typed_error() -> None:
    with pytest.raises(NotInModelCallError):
        current_call()

    async def main() -> None:
        model = TimedModel(ScriptedModel([[assistant_message("ok")]]))
        await Runner.run(Agent(name="A", model=model), "hi", run_config=NO_TRACING)
        current_call()  # the call is over

    with pytest.raises(NotInModelCallError):
        agentsim.run(main)


@pytest.mark.parametrize("streamed", [False, True])
def test_an_unexpected_call_says_whether_it_was_streamed(streamed: bool) -> None:
    async def main() -> Any:
        model = TimedModel(ScriptedModel([]))
        agent = Agent(name="A", model=model)
        with pytest.raises(UnexpectedModelCall) as info:
            if streamed:
                async for _ in Runner.run_streamed(agent, "hi", run_config=NO_TRACING).stream_events():
                    pass
            else:
                await Runner.run(agent, "hi", run_config=NO_TRACING)
        return info.value

    error = agentsim.run(main)
    assert (error.call_index, error.streamed, error.step_type) == (0, streamed, "stream" if streamed else "response")
