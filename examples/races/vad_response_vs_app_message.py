"""Race: the server's automatic response against the app's own message.

Server VAD is on with ``create_response`` (the default): when the caller
stops speaking, the server starts a response by itself. This app also adds
context when the transcript arrives - ``session.send_message(...)``, which
sends ``conversation.item.create`` *and* ``response.create``. The SDK holds a
``response.create`` back while it knows a response is active, but it only
knows once ``response.created`` has reached it. When the network delays that
event a little more than the transcript, the app's ``response.create`` goes
out first and the server rejects it: "conversation already has an active
response" (the simulated server's ``single_active_response`` rule).

Runs on the real ``OpenAIRealtimeWebSocketModel`` against
:class:`~agentsim.realtime.server.SimulatedRealtimeServer` with server
latency jittered between 10 and 80 ms. FIFO order with nominal latency
passes; some seeds' latencies fail.

``racy``: VAD creates responses and the app sends its message.
``fixed``: VAD only detects turns (``create_response: False``); the app's
message creates the one response.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents.realtime import RealtimeAgent, RealtimeRunner

from agentsim.realtime.server import Reply, SimulatedRealtimeServer, raw_server_event
from agentsim.timing import uniform

AGENT = RealtimeAgent(name="Orders", instructions="Help with orders.")


def _is_transcript(event: Any) -> bool:
    raw = raw_server_event(event)
    return raw is not None and raw["type"] == "conversation.item.input_audio_transcription.completed"


async def _call(vad_creates_responses: bool) -> None:
    server = SimulatedRealtimeServer([Reply("let me check your order", audio_seconds=1.5)] * 3, latency=uniform(0.01, 0.08))
    config: dict[str, Any] = {"tracing_disabled": True}
    if not vad_creates_responses:
        config["model_settings"] = {"turn_detection": {"type": "server_vad", "create_response": False}}
    session = await RealtimeRunner(AGENT, model=server.model(), config=config).run()  # type: ignore[arg-type]
    async with session:
        server.user_speaks("where is my order", at=0.5, seconds=0.8)
        try:
            async with asyncio.timeout(4.0):
                async for event in session:
                    if _is_transcript(event):
                        await session.send_message("(context: the caller is on the orders page)")
        except TimeoutError:
            pass
    server.assert_rules()  # RealtimeServerRuleError names the rule, the event and its time
    if not any(response["kind"] == "Reply" and not response["cancelled"] for response in server.responses):
        raise AssertionError("the caller never got an answer")


async def racy() -> None:
    await _call(vad_creates_responses=True)


async def fixed() -> None:
    await _call(vad_creates_responses=False)
