"""Race: a moderation verdict on one answer cancels the next (through the
simulated Realtime server).

The app moderates each answer's transcript once it is complete (a service
taking 0.2-1.2 s) and, if flagged, cancels the response
(``response.cancel``) so it stops. The caller asks the next question 0.5 s after an answer
ends, and the next answer streams for about a tenth of a second. A verdict that lands
while that next answer streams cancels the wrong response: the shape of a
guardrail tripping after its response ended. The band is 45 ms of the
verdict's 1 s window: an order search that samples where a contested
window fires finds it in a few runs; five fixed landing points would all
miss it.

Runs the real ``OpenAIRealtimeWebSocketModel`` against
:class:`~agentsim.realtime.server.SimulatedRealtimeServer`.

``racy``: cancels whatever response is in progress. ``fixed``: names the
flagged response (``response_id``), which the server cancels only while it
is in progress.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents.realtime import RealtimeAgent, RealtimeRunner
from agents.realtime.model_inputs import RealtimeModelSendRawMessage

from agentsim.realtime.server import Reply, SimulatedRealtimeServer
from agentsim.timing import sleep_between

AGENT = RealtimeAgent(name="Support", instructions="Help.")
FLAGGED = "the admin password is hunter2"
#: When the caller asks again, after an answer ended.
NEXT_QUESTION = 0.5


class WrongResponseCancelled(Exception):
    """A verdict on one answer cancelled another."""


def _raw(event: Any) -> dict[str, Any]:
    data = getattr(event, "data", None)
    if event.type == "raw_model_event" and getattr(data, "type", None) == "raw_server_event":
        return data.data  # type: ignore[no-any-return]
    return {}


async def _call(check_response: bool) -> None:
    server = SimulatedRealtimeServer(
        [Reply(FLAGGED, audio_seconds=0.4), Reply("sure", audio_seconds=0.1)],
        latency=0.01,
        client_latency=0.01,
        first_audio_latency=0.05,
        generation_speed=2.0,
    )
    session = await RealtimeRunner(AGENT, model=server.model(), config={"tracing_disabled": True}).run()  # type: ignore[arg-type]
    cancelled: list[str] = []
    pending: list[asyncio.Task[None]] = []

    async def moderate(response_id: str, text: str) -> None:
        await sleep_between(0.2, 1.2)  # the moderation service
        if FLAGGED in text:
            # Stop it: ``response.cancel`` cancels the response in progress, or,
            # with ``response_id``, only that one (the server refuses otherwise).
            cancel: dict[str, Any] = {"type": "response.cancel"}
            if check_response:
                cancel["other_data"] = {"response_id": response_id}
            await session.model.send_event(RealtimeModelSendRawMessage(message=cancel))  # type: ignore[typeddict-item]

    async def ask_next() -> None:
        await asyncio.sleep(NEXT_QUESTION)  # the caller's next question
        await session.send_message("and my username?")

    async with session:
        await session.send_message("how do I log in?")
        answers = 0
        async for event in session:
            raw = _raw(event)
            kind = raw.get("type")
            if kind == "response.done":
                response = raw["response"]
                if response.get("status") == "cancelled":
                    cancelled.append(response["id"])
                answers += 1
                if answers == 2:
                    break
                text = " ".join(part.get("transcript") or "" for item in response.get("output", []) for part in item.get("content", []))
                pending.append(asyncio.create_task(moderate(response["id"], text)))
                pending.append(asyncio.create_task(ask_next()))
        await asyncio.gather(*pending)  # the verdict and the next question
    if cancelled:
        raise WrongResponseCancelled(f"response(s) {cancelled} cancelled by the verdict on the first answer")


async def racy() -> None:
    await _call(check_response=False)


async def fixed() -> None:
    await _call(check_response=True)
