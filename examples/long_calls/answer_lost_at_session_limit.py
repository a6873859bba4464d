"""A long-call race through the simulated Realtime server: the session
expires while a tool call is on its way, and the caller's question is
never answered.

A 30-minute support call: ``SimulatedCaller`` on the line of the simulated
server (GA events over the SDK's real ``OpenAIRealtimeWebSocketModel``), the
app feeding a ``SimulatedPlayer``. A fifth of the caller's questions make
the model call ``lookup_order`` (0.8-2.4 s). The server's session limit
(``max_session_seconds``) expires once, in minute 24; the app reconnects
with the conversation carried over in its agent's instructions.

In the stock schedule the limit falls just after the lookup of minute 24
returned (``LIMIT``), before its answer is heard: the app asks the new
session again. If the lookup runs long, the session expires with it in
flight.

After reconnecting, the app drops what the old session sent and was not
played (``player.interrupt()``) and asks the new session the caller's last
question again when no answer to it was played (one generated but never
heard is owed all the same). ``racy``: not when a tool call was in flight
as the session ended (the SDK cancelled it; the app forgets the question
with it). ``fixed``: then too.
``check_call`` (no answer lost, none given twice) is the oracle.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents import function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner

from agentsim.audio import SimulatedPlayer
from agentsim.realtime.server import CallReport, SimulatedCaller, SimulatedRealtimeServer, check_call
from agentsim.timing import sleep_between, uniform

MINUTES = 30.0
#: The session limit: just after the lookup of minute 24 returned, in the stock schedule (0.5 s).
LIMIT = 1436.0
WINDOW_START, WINDOW_END = LIMIT - 6.0, LIMIT + 4.0
#: Where the coincidence is (benchmarks/long_calls.py).
TRANSFER_AT = LIMIT


@function_tool
async def lookup_order(order_id: str) -> str:
    """Look an order up."""
    await sleep_between(0.8, 2.4)
    return f"order {order_id} ships tomorrow"


AGENT = RealtimeAgent(name="Support", instructions="Help with orders.", tools=[lookup_order])


def _text(item: Any) -> str:
    return " ".join(getattr(part, "transcript", None) or getattr(part, "text", None) or "" for part in getattr(item, "content", []) or [])


def _owed_question(history: list[Any], player: SimulatedPlayer) -> str | None:
    """The caller's last question, if no answer to it was played (an answer
    generated but never heard is owed all the same)."""
    users = [index for index, item in enumerate(history) if getattr(item, "role", None) == "user"]
    if not users:
        return None
    if any(player.played_ms(getattr(item, "item_id", "")) > 0 for item in history[users[-1] + 1 :]):
        return None
    return _text(history[users[-1]])


async def _call(*, after_tools_too: bool, limit: float | None = LIMIT) -> CallReport:
    server = SimulatedRealtimeServer(latency=uniform(0.01, 0.08), first_audio_latency=uniform(0.15, 0.6), generation_speed=1.5, max_session_seconds=limit)
    player = SimulatedPlayer(network_delay=uniform(0.02, 0.1), jitter_buffer_ms=100)
    caller = SimulatedCaller(server, player, minutes=MINUTES, barge_in=0.0)
    calling: asyncio.Task[CallReport] | None = None
    history: list[Any] = []
    tools_in_flight: set[str] = set()
    agent = AGENT
    try:
        while True:
            ended = asyncio.Event()
            async with await RealtimeRunner(agent, model=server.model()).run(model_config={"playback_tracker": player.tracker}) as session:
                if calling is None:
                    calling = caller.start()
                elif (owed := _owed_question(history, player)) is not None and (after_tools_too or not tools_in_flight):
                    await session.send_message(owed)  # the question the old session owed
                tools_in_flight.clear()

                async def play() -> None:
                    async for event in session:
                        player.on_event(event)
                        if event.type == "error":
                            ended.set()  # session_expired: the server closes next
                        elif event.type == "history_updated":
                            history[:] = [item for item in event.history if getattr(item, "role", None) in ("user", "assistant")]
                        elif event.type == "history_added" and getattr(event.item, "role", None) in ("user", "assistant"):
                            history.append(event.item)
                        elif event.type == "tool_start":
                            tools_in_flight.add(event.tool.name)
                        elif event.type == "tool_end":
                            tools_in_flight.discard(event.tool.name)

                tasks = [asyncio.create_task(play(), name="play"), asyncio.create_task(ended.wait(), name="ended")]
                await asyncio.wait([calling, tasks[1]], return_when=asyncio.FIRST_COMPLETED)
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            if calling.done():
                break
            player.interrupt()  # what the old session sent and was not played is gone with it
            said = "; ".join(_text(item) for item in history[-4:])
            agent = AGENT.clone(instructions=f"{AGENT.instructions} Earlier in this call: {said}")
        report = await calling
    finally:
        if calling is not None and not calling.done():
            calling.cancel()
            await asyncio.gather(calling, return_exceptions=True)
        player.close()
    check_call(report, unanswered=None)  # no answer lost across the reconnect, none given twice
    return report


async def racy() -> CallReport:
    return await _call(after_tools_too=False)


async def fixed() -> CallReport:
    return await _call(after_tools_too=True)
