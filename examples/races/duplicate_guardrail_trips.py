"""Race: one unsafe answer, two apologies.

The application moderates the assistant's transcript itself: each time the
transcript grows by a sentence it asks a moderation service (latency
0.1-0.3 s) and, if flagged, interrupts and apologises once. The check "have
I already apologised?" happens before the call and the flag is set after it,
so when two checks overlap — it depends on the service's latency — both
apologise.

``racy``: check, await, then set the flag. ``fixed``: claims the apology
(sets the flag) before awaiting, so overlapping checks cannot both win.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents.realtime import RealtimeAgent, RealtimeRunner

from agentsim.models import uniform
from agentsim.realtime import ScriptedRealtimeTransport
from agentsim.timing import DelaySource

ANSWER = "Your password is hunter2. The backup password is hunter3. Keep them safe."


class DuplicateApology(Exception):
    """The application apologised more than once for one answer."""


async def _call(claim_first: bool) -> None:
    transport = ScriptedRealtimeTransport()
    runner = RealtimeRunner(RealtimeAgent(name="Helpdesk"), model=transport, config={"tracing_disabled": True})
    moderation = DelaySource(uniform(0.1, 0.3), name="moderation latency", stream="moderation")
    apologies: list[float] = []

    async def server(ctx: Any) -> None:
        await ctx.expect_call("connect")
        await ctx.expect_call("user_input")
        ctx.stream_audio(response_id="r1", item_id="a1", duration=0.6, transcript=ANSWER, stop_on_interrupt=False)
        while (await ctx.next_call()).kind != "close":
            pass  # interrupts and apologies, as many as the application sends

    async def app() -> None:
        async with await runner.run() as session:
            await session.send_message("How do I log in?")
            transcript = ""
            apologised = False
            checks: list[asyncio.Task[None]] = []

            async def moderate(text: str, index: int) -> None:
                nonlocal apologised
                if apologised:
                    return
                if claim_first:
                    apologised = True
                await moderation.sleep(index)  # the moderation service
                if "password" in text:
                    apologised = True
                    apologies.append(asyncio.get_running_loop().time())
                    await session.interrupt()
                    await session.send_message("Sorry, I can't share credentials.")
                elif claim_first:
                    apologised = False

            async for event in session:
                if event.type == "raw_model_event" and event.data.type == "transcript_delta":
                    before = transcript.count(".")
                    transcript += event.data.delta
                    if transcript.count(".") > before:  # a sentence finished: check it
                        checks.append(asyncio.create_task(moderate(transcript, len(checks))))
                    if len(checks) == 2:
                        break
            await asyncio.gather(*checks)
            await asyncio.sleep(0.5)

    try:
        await transport.run_scenario(scenario=server, exercise=app)
    except Exception:
        if len(apologies) > 1:
            raise DuplicateApology(f"apologised {len(apologies)} times, at {apologies}") from None
        raise
    if len(apologies) > 1:
        raise DuplicateApology(f"apologised {len(apologies)} times, at {apologies}")


async def racy() -> None:
    await _call(claim_first=False)


async def fixed() -> None:
    await _call(claim_first=True)
