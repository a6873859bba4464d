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
) -> list[Any]:
    """Connect, let ``script(server, session)`` act, route every session event to
    ``player`` for ``seconds`` of virtual time, then hang up. Returns the events.
    ``config`` is the runner's ``RealtimeRunConfig``."""
    runner = RealtimeRunner(agent, model=server.model(), config=config)
    session = await runner.run(model_config={"playback_tracker": player.tracker})
    events: list[Any] = []
    async with session:
        if script is not None:
            script(server, session)
        try:
            async with asyncio.timeout(seconds):
                async for event in session:
                    player.on_event(event)
                    events.append(event)
        except TimeoutError:
            pass
    player.close()
    return events
