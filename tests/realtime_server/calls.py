"""A voice app's main loop on the real adapter, against the simulated server."""

from __future__ import annotations

import asyncio
from typing import Any

from agents.realtime import RealtimeAgent, RealtimeRunner

from agentsim.audio import SimulatedPlayer
from agentsim.realtime.server import SimulatedRealtimeServer


async def run_call(
    server: SimulatedRealtimeServer,
    agent: RealtimeAgent[Any],
    *,
    player: SimulatedPlayer,
    seconds: float,
    script: Any = None,
    config: Any = None,
    drop_interrupted_audio: bool = False,
) -> list[Any]:
    """Connect, let ``script(server, session)`` act, route every session event to
    ``player`` for ``seconds`` of virtual time, then hang up. Returns the events.
    ``config`` is the runner's ``RealtimeRunConfig``. With
    ``drop_interrupted_audio`` the app does not play audio of an item after
    its ``audio_interrupted`` (stale chunks still arriving)."""
    runner = RealtimeRunner(agent, model=server.model(), config=config)
    session = await runner.run(model_config={"playback_tracker": player.tracker})
    events: list[Any] = []
    async with session:
        if script is not None:
            script(server, session)
        try:
            async with asyncio.timeout(seconds):
                interrupted: set[str] = set()
                async for event in session:
                    events.append(event)
                    if event.type == "audio_interrupted":
                        interrupted.add(event.item_id)
                    if drop_interrupted_audio and event.type == "audio" and event.item_id in interrupted:
                        continue
                    player.on_event(event)
        except TimeoutError:
            pass
    player.close()
    return events
