"""Race: stale assistant audio plays after the user barges in.

The assistant is speaking (3 s of 20 ms audio chunks through a real
``RealtimeSession``). At 1.0 s the user barges in: the application calls
``session.interrupt()`` and clears its player. A chunk due at that same
instant is already on its way; when it arrives after the barge-in, the
racy application plays it — the assistant talks over the user.

``racy``: plays every audio event. ``fixed``: remembers which response it
interrupted and drops that response's late chunks.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents.realtime import RealtimeAgent, RealtimeRunner

from agentsim.realtime import ScriptedRealtimeTransport

BARGE_IN_AT = 1.0


class StaleAudio(Exception):
    """Audio of an interrupted response reached the speaker."""


class Player:
    def __init__(self) -> None:
        self.interrupted: set[str] = set()
        self.played_ms = 0.0

    def play(self, response_id: str, chunk: bytes) -> None:
        if response_id in self.interrupted:
            raise StaleAudio(f"played {len(chunk) / 48:.0f} ms of {response_id} after the user barged in")
        self.played_ms += len(chunk) / 48  # pcm16 at 24 kHz: 48 bytes per ms


async def _call(drop_interrupted: bool) -> None:
    transport = ScriptedRealtimeTransport()
    runner = RealtimeRunner(RealtimeAgent(name="Storyteller"), model=transport, config={"tracing_disabled": True})
    player = Player()

    async def server(ctx: Any) -> None:
        await ctx.expect_call("connect")
        await ctx.expect_call("user_input")
        stream = ctx.stream_audio(response_id="r1", item_id="a1", duration=3.0, transcript="Once upon a time there was a race")
        await ctx.expect_call("interrupt")
        await stream
        await ctx.expect_call("close")

    async def app() -> None:
        async with await runner.run() as session:
            await session.send_message("Tell me a story")

            async def listen() -> None:
                async for event in session:
                    if event.type == "audio":
                        response = event.audio.response_id
                        if drop_interrupted and response in player.interrupted:
                            continue
                        player.play(response, event.audio.data)

            async def user() -> None:
                await asyncio.sleep(BARGE_IN_AT - 0.01)
                await asyncio.sleep(0.01)  # the user starts talking
                player.interrupted.add("r1")
                await session.interrupt()
                await asyncio.sleep(2.5)  # the user talks; the call goes on

            async with asyncio.TaskGroup() as group:
                listener = group.create_task(listen(), name="listener")
                await group.create_task(user(), name="user")
                listener.cancel()

    await transport.run_scenario(scenario=server, exercise=app, timeout=10.0)


async def racy() -> None:
    await _call(drop_interrupted=False)


async def fixed() -> None:
    await _call(drop_interrupted=True)
