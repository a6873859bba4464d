"""A long-call race on the SDK's ``RealtimeSession``: a transfer's answer
sent to the session that expired while it was on its way.

A 30-minute support call on the real ``RealtimeSession`` over the scripted
transport (``ScriptedRealtimeTransport``): every turn the model starts
answering after 0.2-0.9 s and streams 3.5 s of assistant audio in 20 ms
chunks, then the caller pauses 1.5-4.5 s; the app sends the caller's
microphone audio every 100 ms.
The transport ends the first session at the service's limit
(``SESSION_LIMIT``, an absolute instant of the call); the app connects a
new session a second later and the call goes on. In minute 27 the app
starts a transfer in the background (1.0-2.0 s to arrange, 0.2-0.6 s for
the answer to come back), then tells the model it is done
(``session.send_message``).

``racy``: tells the app's latest session, which is the expired one while
the app reconnects (the SDK raises the transport's
``RealtimeTransportDisconnectedError``). ``fixed``: waits for a session to
be open and tells that one.

The stock schedule passes (the transfer answers 1.9 s in, the limit falls
at 2.3 s, the new session opens a second later); it fails only when
arranging runs long and the answer lands in that second, a coincidence in
minute 27 that a whole-run sweep reaches only when the pauses before it
add up to about their nominal sum.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents.realtime import RealtimeAgent, RealtimeRunner, RealtimeSession

from agentsim.realtime import ScriptedRealtimeTransport
from agentsim.timing import sleep_between

CALL_SECONDS = 30 * 60
#: A turn in the stock schedule: the model's first audio after 0.2-0.9 s,
#: 3.5 s of audio, a pause of 1.5-4.5 s.
TURN = 0.55 + 3.5 + 3.0
TRANSFER_TURN = 229
#: When the app starts the transfer in the stock schedule: the end of that turn's audio.
TRANSFER_AT = TRANSFER_TURN * TURN + 0.55 + 3.5
SESSION_LIMIT = TRANSFER_AT + 2.3
RECONNECT = 1.0
WINDOW_START, WINDOW_END = TRANSFER_AT - 1.0, TRANSFER_AT + 6.0

AGENT = RealtimeAgent(name="Support", instructions="Help with orders.")


class TransferToClosedSession(Exception):
    """The transfer's answer went to a session that had expired."""


class _Line:
    """The app's view of the call: the session open now, if any."""

    def __init__(self) -> None:
        self.session: RealtimeSession | None = None
        self.open = asyncio.Event()
        self.turns = 0
        self.told: list[str] = []


async def _session(line: _Line, *, until: float, on_turn: Any) -> None:
    """One Realtime session: turns streamed until ``until`` (the limit, or the call's end)."""
    transport = ScriptedRealtimeTransport()
    runner = RealtimeRunner(AGENT, model=transport, config={"tracing_disabled": True})
    loop = asyncio.get_running_loop()

    async def turns() -> None:
        while True:
            turn = line.turns
            await sleep_between(0.2, 0.9)  # the model's first audio
            await transport.stream_audio(item_id=f"item_{turn}", response_id=f"r{turn}", duration=3.5)
            line.turns += 1
            on_turn(turn)
            await sleep_between(1.5, 4.5)  # the caller pauses, then speaks

    async def server(ctx: Any) -> None:
        await ctx.expect_call("connect")
        talking = asyncio.create_task(turns(), name="turns")
        await asyncio.sleep(max(0.0, until - loop.time()))
        talking.cancel()  # the limit (or the caller's hang-up) falls wherever the call is
        await asyncio.gather(talking, return_exceptions=True)
        await transport.disconnect()  # session_expired: the server closes

    async def app() -> None:
        async with await runner.run() as session:
            line.session = session
            line.open.set()

            async def microphone() -> None:
                while True:  # the caller's audio, 100 ms at a time, all session long
                    await asyncio.sleep(0.1)
                    await session.send_audio(b"\0\0")

            mic = asyncio.create_task(microphone(), name="microphone")
            try:
                await _listen(session)
            finally:
                mic.cancel()
                await asyncio.gather(mic, return_exceptions=True)
            line.open.clear()

    await transport.run_scenario(scenario=server, exercise=app, timeout=None)


async def _listen(session: RealtimeSession) -> None:
    """The session's events until the transport says it disconnected."""
    async for event in session:
        data = getattr(event, "data", None)
        if event.type == "raw_model_event" and getattr(data, "type", None) == "connection_status" and data.status == "disconnected":
            break  # (0.13.6 keeps a closed session's stream open: the app leaves on the status)


async def _call(*, wait_for_session: bool) -> list[str]:
    line = _Line()
    tasks: list[asyncio.Task[None]] = []

    async def transfer() -> None:
        await sleep_between(1.0, 2.0)  # arranging the transfer
        await sleep_between(0.2, 0.6)  # its answer comes back
        if wait_for_session:
            await line.open.wait()
        target = line.session  # the latest session: closed while the app reconnects
        assert target is not None
        try:
            await target.send_message("The transfer is arranged.")
        except Exception as error:  # the SDK's transport refuses: that session is gone
            raise TransferToClosedSession(f"told an expired session at {asyncio.get_running_loop().time():.2f} s ({type(error).__name__})") from error
        line.told.append("transfer")

    def on_turn(turn: int) -> None:
        if turn == TRANSFER_TURN:
            tasks.append(asyncio.create_task(transfer(), name="transfer"))

    try:
        await _session(line, until=SESSION_LIMIT, on_turn=on_turn)
        await asyncio.sleep(RECONNECT)
        await _session(line, until=CALL_SECONDS, on_turn=on_turn)
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return line.told


async def racy() -> list[str]:
    return await _call(wait_for_session=False)


async def fixed() -> list[str]:
    return await _call(wait_for_session=True)
