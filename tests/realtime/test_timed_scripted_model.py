"""TimedRealtimeModel: the Python guide's ScriptedRealtimeModel tests, on the clock.

Each test is a recipe of the SDK's testing guide with one wrapper line; it
asserts the timing the wrapper adds (latency, paced audio, a drop), which
the bare ScriptedRealtimeModel delivers all at t=0.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import requires_sdk

requires_sdk("0.21", "agents.realtime.testing's ScriptedRealtimeModel")
from agents.realtime import RealtimeAgent, RealtimeRunner
from agents.realtime.model_events import RealtimeModelAudioEvent, RealtimeModelOutputTextDeltaEvent
from agents.realtime.model_inputs import RealtimeModelSendInterrupt, RealtimeModelSendUserInput
from agents.realtime.testing import RealtimeScriptError, RealtimeStep, ScriptedRealtimeModel
from websockets.exceptions import ConnectionClosedError

import agentsim
from agentsim import SimulationConfigError
from agentsim.realtime import TimedRealtimeModel, turn_ended, turn_started
from agentsim.timing import uniform

CHUNK_100_MS = b"\x00\x00" * 2400  # pcm16 at 24 kHz
SCHEDULES = [("fifo", 0), ("random", 1), ("random", 2), ("jitter", 3)]


def audio(response_id: str = "r1") -> RealtimeModelAudioEvent:
    return RealtimeModelAudioEvent(data=CHUNK_100_MS, response_id=response_id, item_id="a1", content_index=0)


async def session_events(model: Any, *, send: str = "Hello", until: float = 5.0) -> list[tuple[float, str]]:
    import anyio

    runner = RealtimeRunner(RealtimeAgent(name="Assistant"), model=model, config={"tracing_disabled": True})
    seen: list[tuple[float, str]] = []
    async with await runner.run() as session:
        await session.send_message(send)
        with anyio.move_on_after(until):
            try:
                async for event in session:
                    kind = event.data.type if event.type == "raw_model_event" else event.type
                    if kind == "output_text_delta" or event.type in ("agent_start", "audio", "agent_end"):
                        seen.append((agentsim.now(), kind))
            except ConnectionClosedError:
                seen.append((agentsim.now(), "ConnectionClosedError"))
    return seen


def test_the_guides_message_recipe_gains_a_reply_latency() -> None:
    async def main() -> tuple[list[tuple[float, str]], tuple[Any, ...]]:
        reply = RealtimeModelOutputTextDeltaEvent(item_id="item_1", delta="Hello!", response_id="response_1")
        scripted = ScriptedRealtimeModel([RealtimeStep(expect=RealtimeModelSendUserInput(user_input="Hello"), emit=[reply])])
        model = TimedRealtimeModel(scripted, latency=0.3)
        seen = await session_events(model, until=1.0)
        model.assert_complete()  # the wrapped model's own check
        return seen, model.sent_events

    seen, sent = agentsim.run(main)
    assert seen == [(0.3, "output_text_delta")]  # bare: at 0.0
    assert sent == (RealtimeModelSendUserInput(user_input="Hello"),)


@pytest.mark.parametrize(("strategy", "seed"), SCHEDULES)
def test_audio_is_paced_by_its_duration_and_keeps_its_order(strategy: str, seed: int) -> None:
    async def main() -> list[tuple[float, str]]:
        steps = [RealtimeStep(expect=RealtimeModelSendUserInput, emit=[turn_started("r1"), audio(), audio(), audio(), turn_ended("r1")])]
        model = TimedRealtimeModel(ScriptedRealtimeModel(steps), latency=uniform(0.2, 0.4), audio_pace=2.0)
        return await session_events(model, until=2.0)

    seen = agentsim.run(main, strategy=strategy, seed=seed)
    kinds = [kind for _, kind in seen]
    assert kinds == ["agent_start", "audio", "audio", "audio", "agent_end"]
    start = seen[0][0]
    assert 0.2 <= start <= 0.4
    times = [time for time, kind in seen if kind == "audio"]
    # 100 ms chunks sent twice as fast as real time: 50 ms apart; the turn ends after the last.
    assert times == pytest.approx([start, start + 0.05, start + 0.1])
    assert seen[-1][0] == pytest.approx(start + 0.15)


def test_an_interrupt_drops_the_audio_still_queued() -> None:
    async def main() -> tuple[list[float], tuple[Any, ...]]:
        import anyio

        steps = [
            RealtimeStep(expect=RealtimeModelSendUserInput, emit=[audio()] * 10),
            RealtimeStep(expect=RealtimeModelSendInterrupt),
        ]
        model = TimedRealtimeModel(ScriptedRealtimeModel(steps), audio_pace=1.0)
        runner = RealtimeRunner(RealtimeAgent(name="Assistant"), model=model, config={"tracing_disabled": True})
        heard: list[float] = []
        async with await runner.run() as session:
            await session.send_message("tell me")
            with anyio.move_on_after(2.0):
                async for event in session:
                    if event.type == "audio":
                        heard.append(agentsim.now())
                        if len(heard) == 3:
                            await session.interrupt()
        return heard, tuple(type(event).__name__ for event in model.sent_events)

    heard, sent = agentsim.run(main)
    assert heard == pytest.approx([0.0, 0.1, 0.2])  # 10 chunks scripted, 7 never sent
    assert sent[-1] == "RealtimeModelSendInterrupt"


def test_the_connection_drops_at_the_chosen_instant() -> None:
    async def main() -> tuple[list[tuple[float, str]], Any]:
        steps = [RealtimeStep(expect=RealtimeModelSendUserInput, emit=[audio()] * 20)]
        model = TimedRealtimeModel(ScriptedRealtimeModel(steps), latency=0.1)
        model.disconnect_at(0.55)
        seen = await session_events(model, until=5.0)
        send_error = None
        try:
            await model.send_event(RealtimeModelSendUserInput(user_input="anyone?"))
        except RealtimeScriptError as error:  # the wrapped model's own error after a close
            send_error = error
        return seen, send_error

    seen, send_error = agentsim.run(main)
    audio_times = [time for time, kind in seen if kind == "audio"]
    assert audio_times == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5])
    assert seen[-1] == (0.55, "ConnectionClosedError")
    assert send_error is not None


def test_bad_arguments_are_typed_errors() -> None:
    with pytest.raises(SimulationConfigError, match="model"):
        TimedRealtimeModel(object())  # type: ignore[arg-type]
    with pytest.raises(SimulationConfigError, match="audio_pace"):
        TimedRealtimeModel(ScriptedRealtimeModel(), audio_pace=0)
    with pytest.raises(SimulationConfigError, match="latency"):
        TimedRealtimeModel(ScriptedRealtimeModel(), latency=-1)


def test_a_failed_connect_leaves_nothing_running() -> None:
    async def main() -> tuple[str, int]:
        import asyncio

        model = TimedRealtimeModel(ScriptedRealtimeModel(connect_error=ConnectionRefusedError("no")), connect_latency=0.2)
        try:
            await model.connect({})
        except ConnectionRefusedError as error:
            outcome = str(error)
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        return outcome, len(others)

    assert agentsim.run(main) == ("no", 0)


def test_the_planned_drop_happens_once_a_reconnect_stays_up() -> None:
    async def main() -> tuple[list[str], bool]:
        import asyncio

        from agents.realtime.model import RealtimeModelListener

        seen: list[str] = []

        class Recorder(RealtimeModelListener):
            async def on_event(self, event: Any) -> None:
                seen.append(event.type)

        model = TimedRealtimeModel(ScriptedRealtimeModel(strict=False))
        model.add_listener(Recorder())
        model.disconnect_at(0.5)
        await model.connect({})
        await asyncio.sleep(1.0)
        await model.close()
        await model.connect({})  # after the drop's instant: not dropped again
        await asyncio.sleep(1.0)
        still_up = bool(model.connected)
        await model.close()
        return seen, still_up

    seen, still_up = agentsim.run(main)
    assert seen == ["exception"] and still_up


def test_the_reply_latency_is_a_window_the_explorer_orders_against_the_apps_timers() -> None:
    # A reply 0.2-0.4 s after the send, an app timer 0.205 s after it: the reply's
    # latency is a windowed timer (it was a seeded point, computed), so the
    # explorer decides where it lands: ``timed`` puts it before the timer in
    # some of seeds 0-19, FIFO at its nominal 0.3 s.
    async def main() -> str:
        import asyncio

        reply = RealtimeModelOutputTextDeltaEvent(item_id="item_1", delta="Hello!", response_id="response_1")
        model = TimedRealtimeModel(ScriptedRealtimeModel([RealtimeStep(expect=RealtimeModelSendUserInput, emit=[reply])]), latency=uniform(0.2, 0.4))
        order: list[str] = []
        async with await RealtimeRunner(RealtimeAgent(name="Assistant"), model=model, config={"tracing_disabled": True}).run() as session:
            await session.send_message("Hello")
            asyncio.get_running_loop().call_later(0.205, order.append, "timer")
            async for event in session:
                if event.type == "raw_model_event" and event.data.type == "output_text_delta":
                    order.append("reply")
                    break
        return f"{order[0]} first"

    orders = {agentsim.run(main, seed=seed, strategy="timed") for seed in range(20)}
    assert orders == {"reply first", "timer first"}
    assert agentsim.run(main, strategy="fifo") == "timer first"  # nominal 0.3 s
    result = agentsim.simulate(main, seed=0, strategy="random")
    assert result.windowed_timers >= 1
