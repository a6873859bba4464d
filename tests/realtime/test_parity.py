"""Parity: one conversation through the scripted transport and through the
simulated server over the SDK's real ``OpenAIRealtimeWebSocketModel`` — the
application must see the same session events either way.

Compared: the turn and audio family the app acts on (``agent_start``,
``audio``, ``audio_interrupted``, ``audio_end``, ``agent_end``, ``error``),
item ids by order of appearance, repeated audio chunks collapsed, and
audio of an item after its ``audio_interrupted`` left out (chunks already in
flight arrive on both sides or not, depending on the latencies; the app
drops them either way). Runs under FIFO and random seeds 0-3, on every
supported SDK release CI installs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from agents.realtime import RealtimeAgent, RealtimeRunner

import agentsim
from agentsim.realtime import RealtimeScenarioContext, ScriptedRealtimeTransport
from agentsim.realtime.server import Reply, SimulatedRealtimeServer

from .sdk_features import needs_end_of_stream

# openai-agents 0.13.6's session iterator swallows the cancellation that ends
# the listener (``except CancelledError: break``); agentsim rightly warns, and
# the parity this file checks is not about that.
pytestmark = pytest.mark.filterwarnings("ignore::agentsim.SwallowedCancellationWarning")

SCHEDULES = [(0, "fifo")] + [(seed, "random") for seed in range(4)]
FAMILY = {"agent_start", "audio", "audio_interrupted", "audio_end", "agent_end", "error"}
# The app cancels on interrupt itself (server VAD's interrupt_response off), so
# the adapter sends response.cancel as the scripted transport's server assumes.
MODEL_CONFIG: Any = {"initial_model_settings": {"turn_detection": {"type": "server_vad", "interrupt_response": False}}}

async def _conversation(model: Any, at_one_second: Callable[[Any], Awaitable[None]]) -> list[tuple[str, str | None]]:
    """Ask for a story, act at t=1 s, ask again at 2 s, hang up at 4 s."""
    runner = RealtimeRunner(RealtimeAgent(name="Teller"), model=model)
    seen: list[tuple[str, str | None]] = []
    ended = anyio.Event()
    async with await runner.run(model_config=MODEL_CONFIG) as session:

        async def listen() -> None:
            try:
                async for event in session:
                    seen.append((event.type, getattr(event, "item_id", None)))
            except Exception as error:  # an abrupt disconnect ends iteration with it
                seen.append(("raised", type(error).__name__))
            ended.set()

        async with anyio.create_task_group() as group:
            group.start_soon(listen)
            await session.send_message("tell me a story")
            await anyio.sleep_until(1.0)
            await at_one_second(session)
            await anyio.sleep_until(2.0)
            if not ended.is_set():  # no sends on a connection the server closed
                await session.send_message("thanks")
            await anyio.sleep_until(4.0)
            group.cancel_scope.cancel()
    return seen


def _normalized(events: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    names: dict[str, str] = {}
    cut: set[str] = set()
    out: list[tuple[str, str | None]] = []
    for kind, item in events:
        if kind not in FAMILY and kind != "raised":
            continue
        if kind == "audio" and item in cut:
            continue
        if kind == "audio_interrupted" and item is not None:
            cut.add(item)
        label = names.setdefault(item, f"item{len(names) + 1}") if kind != "raised" and item is not None else item
        if out and out[-1] == (kind, label):
            continue
        out.append((kind, label))
    return out


Case = tuple[Callable[[Any], Awaitable[None]], Callable[[Any], Awaitable[None]]]  # (app at 1 s, far side at 1 s)


def _through_server(case: Case, seed: int, strategy: str) -> list[tuple[str, str | None]]:
    app_action, far_action = case

    async def main() -> list[tuple[str, str | None]]:
        server = SimulatedRealtimeServer([Reply("once upon a time", audio_seconds=2.0), Reply("you are welcome", audio_seconds=0.5)], generation_speed=1.0)

        async def at_one_second(session: Any) -> None:
            await far_action(server)
            await app_action(session)

        return await _conversation(server.model(), at_one_second)

    return _normalized(agentsim.run(main, seed=seed, strategy=strategy))


def _through_transport(case: Case, seed: int, strategy: str) -> list[tuple[str, str | None]]:
    app_action, far_action = case

    async def main() -> list[tuple[str, str | None]]:
        transport = ScriptedRealtimeTransport()
        seen: list[tuple[str, str | None]] = []

        async def scenario(ctx: RealtimeScenarioContext) -> None:
            await ctx.expect_call("connect")
            await ctx.expect_call("user_input")
            ctx.stream_audio(item_id="a1", response_id="r1", duration=2.0, transcript="once upon a time")
            await anyio.sleep_until(1.0)
            await far_action(ctx)
            while (call := await ctx.next_call()).kind != "close":
                if call.kind == "user_input" and ctx.transport.connected:
                    ctx.stream_audio(item_id="a2", response_id="r2", duration=0.5, transcript="you are welcome")

        async def exercise() -> None:
            seen.extend(await _conversation(transport, app_action))

        await transport.run_scenario(scenario=scenario, exercise=exercise, timeout=10.0)
        return seen

    return _normalized(agentsim.run(main, seed=seed, strategy=strategy))


async def _nothing(_: Any) -> None:
    return None


async def _interrupt(session: Any) -> None:
    # The scripted stream stops on the interrupt call, the server on the
    # adapter's response.cancel.
    await session.interrupt()


def _disconnect(clean: bool) -> Callable[[Any], Awaitable[None]]:
    async def far_side(side: Any) -> None:
        await side.disconnect(clean=clean)

    return far_side


CASES: dict[str, tuple[Case, list[tuple[str, str | None]]]] = {
    "interrupt": ((_interrupt, _nothing), [("agent_start", None), ("audio", "item1"), ("audio_interrupted", "item1"), ("agent_end", None), ("agent_start", None), ("audio", "item2"), ("audio_end", "item2"), ("agent_end", None)]),
    "abrupt-disconnect": ((_nothing, _disconnect(False)), [("agent_start", None), ("audio", "item1"), ("raised", "ConnectionClosedError")]),
}


@pytest.mark.parametrize(("seed", "strategy"), SCHEDULES, ids=[f"{strategy}-{seed}" for seed, strategy in SCHEDULES])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_app_sees_the_same_events_on_both_sides(case: str, seed: int, strategy: str) -> None:
    sides, expected = CASES[case]
    server_side = _through_server(sides, seed, strategy)
    scripted_side = _through_transport(sides, seed, strategy)
    assert server_side == scripted_side
    assert server_side == expected  # and both are the conversation the case is about


@needs_end_of_stream
@pytest.mark.parametrize(("seed", "strategy"), SCHEDULES, ids=[f"{strategy}-{seed}" for seed, strategy in SCHEDULES])
def test_a_clean_server_close_looks_the_same(seed: int, strategy: str) -> None:
    sides = (_nothing, _disconnect(True))
    server_side = _through_server(sides, seed, strategy)
    assert server_side == _through_transport(sides, seed, strategy)
    assert server_side[:2] == [("agent_start", None), ("audio", "item1")]
    assert "raised" not in {kind for kind, _ in server_side}
