"""Lateness through the simulated Realtime server: the answer's first audio
after the app's "still there?" prompt.

The app asks, then gives the answer 0.85 s to start speaking before it plays
"sorry, the line is slow". The request takes 0.02-0.2 s to reach the server,
the first audio 0.3-0.6 s to come, and 0.02-0.2 s to travel back: usually
about 0.67 s. When the first audio and one leg of the network both run long,
the apology starts first and the racy app lets the answer play over it.

Runs the real ``OpenAIRealtimeWebSocketModel`` against
:class:`~agentsim.realtime.server.SimulatedRealtimeServer`.

``racy``: plays the answer over the apology. ``fixed``: skips answer audio
once it apologised.
"""

from __future__ import annotations

import asyncio

from agents.realtime import RealtimeAgent, RealtimeRunner

from agentsim.realtime.server import Reply, SimulatedRealtimeServer
from agentsim.timing import uniform

AGENT = RealtimeAgent(name="Support", instructions="Help.")


class AnswerOverApology(Exception):
    """The answer's audio played after the app apologised for silence."""


async def _call(skip_after_apology: bool) -> None:
    server = SimulatedRealtimeServer(
        [Reply("your parcel is on its way", audio_seconds=0.6)],
        latency=uniform(0.02, 0.2),
        client_latency=uniform(0.02, 0.2),
        first_audio_latency=uniform(0.3, 0.6),
    )
    session = await RealtimeRunner(AGENT, model=server.model(), config={"tracing_disabled": True}).run()  # type: ignore[arg-type]
    apologised = False
    over = 0
    async with session:
        await session.send_message("where is my parcel?")
        try:
            async with asyncio.timeout(0.85):
                async for event in session:
                    if event.type == "audio":
                        break
        except TimeoutError:
            apologised = True  # "sorry, the line is slow"
        try:
            async with asyncio.timeout(1.5):
                async for event in session:
                    if event.type == "audio" and apologised and not skip_after_apology:
                        over += 1
        except TimeoutError:
            pass
    server.assert_rules()
    if over:
        raise AnswerOverApology(f"{over} answer chunk(s) played after the apology")


async def racy() -> None:
    await _call(skip_after_apology=False)


async def fixed() -> None:
    await _call(skip_after_apology=True)
