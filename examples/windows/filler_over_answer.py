"""Narrow window through the simulated server: a filler clip over the answer.

The app plays "one moment please" if the answer's audio has not started
500 ms after it asked. The server's first audio comes 0.2-0.5005 s after the
request. When the filler starts a hair before the answer, the caller hears
both at once: the racy app checks for audio before the filler starts, but
never stops a filler that already started.

Runs on the real ``OpenAIRealtimeWebSocketModel`` against
:class:`~agentsim.realtime.server.SimulatedRealtimeServer`. Seeded jitter
lands in the 0.5 ms overlap in 0.2% of runs; as windows, the filler first is
one choice of two.

``racy``: the filler plays to its end. ``fixed``: answer audio stops it.
"""

from __future__ import annotations

import asyncio

from agents.realtime import RealtimeAgent, RealtimeRunner

from agentsim.realtime.server import Reply, SimulatedRealtimeServer
from agentsim.timing import uniform

AGENT = RealtimeAgent(name="Orders", instructions="Help with orders.")
FILLER_AFTER = 0.5
FILLER_SECONDS = 1.0


class TalkingOverAnswer(Exception):
    """The filler clip and the answer's audio played at the same time."""


async def _call(stop_filler_on_audio: bool) -> None:
    server = SimulatedRealtimeServer(
        [Reply("your order ships tomorrow", audio_seconds=1.0)],
        latency=0.0,
        client_latency=0.0,
        first_audio_latency=uniform(0.2, 0.5005),
    )
    session = await RealtimeRunner(AGENT, model=server.model(), config={"tracing_disabled": True}).run()  # type: ignore[arg-type]
    filler_playing = False
    audio_started = False
    overlaps = 0

    async def filler() -> None:
        nonlocal filler_playing
        await asyncio.sleep(FILLER_AFTER)
        if audio_started:
            return  # the answer is already playing
        filler_playing = True  # "one moment please"
        await asyncio.sleep(FILLER_SECONDS)
        filler_playing = False

    async with session:
        await session.send_message("where is my order?")
        clip = asyncio.create_task(filler(), name="filler")
        try:
            async with asyncio.timeout(2.5):
                async for event in session:
                    if event.type == "audio":
                        audio_started = True
                        if filler_playing and stop_filler_on_audio:
                            clip.cancel()
                            filler_playing = False
                        if filler_playing:
                            overlaps += 1
        except TimeoutError:
            pass
        clip.cancel()
    server.assert_rules()
    if overlaps:
        raise TalkingOverAnswer(f"{overlaps} answer chunk(s) arrived while the filler played")


async def racy() -> None:
    await _call(stop_filler_on_audio=False)


async def fixed() -> None:
    await _call(stop_filler_on_audio=True)
