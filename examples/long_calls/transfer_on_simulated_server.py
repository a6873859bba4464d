"""A long-call race through the simulated Realtime server: a transfer's
confirmation sent as the session expires, and lost.

A 30-minute support call: ``SimulatedCaller`` on the line of the simulated
server (GA events over the SDK's real ``OpenAIRealtimeWebSocketModel``), the
app feeding a ``SimulatedPlayer`` and streaming the microphone (100 ms
chunks). The caller's call is fixed
(``call_seed``): every run is the same call, and what a sweep varies is its
schedule. A fifth of the caller's questions make the model call a tool;
the one of turn ``TRANSFER_TURN`` asks for a transfer, and the app's
``transfer_call`` tool starts arranging it in the background (1.0-2.0 s,
then 0.2-0.6 s for the answer to come back) and answers at once. When the
transfer is arranged, the app tells the model (``session.send_message``).

The server's session limit (``max_session_seconds``) expires once, at
``LIMIT``: in the stock schedule 2.3 s after the transfer started, so the
confirmation is sent 0.4 s before it. The app sees the ``session_expired``
error, waits ``RECONNECT`` seconds and opens a new session with the
conversation carried over in its agent's instructions.

``racy``: tells the app's latest session once. Sent after the limit, the
message goes to an expired session: the send raises, or (while the close
is still on its way to the app) the server drops it. ``fixed``: tells the
open session and waits for the model to acknowledge it (the item comes
back in the session's history); if the session ends first, it tells the
next one. The oracle: the confirmation reached a session.

It fails only when arranging runs long and the confirmation lands in the
second after the limit, a coincidence in minute 29 that a whole-run sweep
reaches only when the pauses before it add up to about their nominal sum.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents import function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner, RealtimeSession

from agentsim.audio import SimulatedPlayer
from agentsim.realtime.server import CallReport, CallTool, SimulatedCaller, SimulatedRealtimeServer
from agentsim.timing import sleep_between, uniform

MINUTES = 30.0
CALL_SEED = 7
#: The caller's turn that asks for the transfer (a tool question of the fixed call, in minute 29).
TRANSFER_TURN = 147
#: When the app's tool starts the transfer in the stock schedule (seconds into the call).
TRANSFER_AT = 1744.44
#: The session limit: 2.3 s after the transfer started, in the stock schedule.
LIMIT = TRANSFER_AT + 2.3
RECONNECT = 1.0
WINDOW_START, WINDOW_END = TRANSFER_AT - 1.0, TRANSFER_AT + 6.0
CONFIRMATION = "The transfer is arranged."
#: 100 ms of silence, 24 kHz pcm16.
MICROPHONE_CHUNK = bytes(4800)


class TransferConfirmationLost(Exception):
    """The transfer's confirmation never reached a session."""


@function_tool
async def lookup_order(order_id: str) -> str:
    """Look an order up."""
    await sleep_between(0.3, 0.9)
    return f"order {order_id} ships tomorrow"


class _Line:
    """The app's view of the call: the session open now, and what it acknowledged."""

    def __init__(self) -> None:
        self.session: RealtimeSession | None = None
        self.changed = asyncio.Event()  # a session opened, ended or acknowledged something
        self.acknowledged: set[str] = set()
        self.transfers: list[asyncio.Task[None]] = []
        self.started_at: float | None = None

    def note(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


async def _tell_once(line: _Line) -> None:
    target = line.session  # the latest session: expired while the app reconnects
    assert target is not None
    try:
        await target.send_message(CONFIRMATION)
    except Exception as error:
        raise TransferConfirmationLost(f"told an expired session at {asyncio.get_running_loop().time():.2f} s ({type(error).__name__})") from error


async def _tell_until_acknowledged(line: _Line) -> None:
    while CONFIRMATION not in line.acknowledged:
        session, changed = line.session, line.changed
        if session is not None:
            try:
                await session.send_message(CONFIRMATION)
            except Exception:
                pass  # that session is gone: the next one is told
        while line.session is session and CONFIRMATION not in line.acknowledged:
            await changed.wait()
            changed = line.changed


def _transfer_tool(line: _Line, *, acknowledged: bool) -> Any:
    @function_tool
    async def transfer_call() -> str:
        """Transfer the caller to a person."""

        async def arrange() -> None:
            await sleep_between(1.0, 2.0)  # arranging the transfer
            await sleep_between(0.2, 0.6)  # its answer comes back
            await (_tell_until_acknowledged(line) if acknowledged else _tell_once(line))

        line.started_at = asyncio.get_running_loop().time()
        line.transfers.append(asyncio.create_task(arrange(), name="transfer"))
        return "Arranging the transfer now."

    return transfer_call


def _tool_question(asked: list[bool]) -> Any:
    def question(turn: int) -> CallTool:
        if turn == TRANSFER_TURN:
            asked.append(True)
            return CallTool("transfer_call", {})
        return CallTool("lookup_order", {"order_id": str(1000 + turn)})

    return question


def _text(item: Any) -> str:
    return " ".join(getattr(part, "text", None) or getattr(part, "transcript", None) or "" for part in getattr(item, "content", []) or [])


async def _session(line: _Line, agent: RealtimeAgent, server: SimulatedRealtimeServer, player: SimulatedPlayer, caller: SimulatedCaller, calling: asyncio.Task[CallReport] | None) -> asyncio.Task[CallReport]:
    """One Realtime session, until the server ends it or the caller hangs up."""
    ended = asyncio.Event()
    async with await RealtimeRunner(agent, model=server.model()).run(model_config={"playback_tracker": player.tracker}) as session:
        line.session = session
        line.note()
        calling = calling or caller.start()

        async def listen() -> None:
            async for event in session:
                player.on_event(event)
                if event.type == "error" and "session_expired" in str(event.error):
                    ended.set()  # the server closes next
                elif event.type == "history_added" and getattr(event.item, "role", None) == "user" and _text(event.item) == CONFIRMATION:
                    line.acknowledged.add(CONFIRMATION)
                    line.note()

        async def microphone() -> None:
            while True:  # the caller's audio, 100 ms at a time, all session long
                await asyncio.sleep(0.1)
                await session.send_audio(MICROPHONE_CHUNK)

        tasks = [asyncio.create_task(listen(), name="listen"), asyncio.create_task(ended.wait(), name="ended"), asyncio.create_task(microphone(), name="microphone")]
        await asyncio.wait([calling, tasks[1]], return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    line.note()
    return calling


async def _call(*, acknowledged: bool, limit: float | None = LIMIT) -> CallReport:
    server = SimulatedRealtimeServer(latency=uniform(0.01, 0.08), first_audio_latency=uniform(0.15, 0.6), generation_speed=1.5, max_session_seconds=limit)
    player = SimulatedPlayer(network_delay=uniform(0.02, 0.1), jitter_buffer_ms=100)
    asked: list[bool] = []
    caller = SimulatedCaller(server, player, minutes=MINUTES, barge_in=0.0, tool_call=_tool_question(asked), call_seed=CALL_SEED)
    line = _Line()
    base = RealtimeAgent(name="Support", instructions="Help with orders.", tools=[lookup_order, _transfer_tool(line, acknowledged=acknowledged)])
    agent, calling = base, None
    try:
        while True:
            calling = await _session(line, agent, server, player, caller, calling)
            if calling.done():
                break
            player.interrupt()  # what the old session sent and was not played is gone with it
            await asyncio.sleep(RECONNECT)
            agent = base.clone(instructions=f"{base.instructions} The caller asked for a transfer earlier in this call." if asked else base.instructions)
        report = await calling
        await asyncio.gather(*line.transfers)
    finally:
        for task in [calling, *line.transfers]:
            if task is not None and not task.done():
                task.cancel()
        await asyncio.gather(*[task for task in [calling, *line.transfers] if task is not None], return_exceptions=True)
        player.close()
    if asked and CONFIRMATION not in line.acknowledged:
        raise TransferConfirmationLost(f"the transfer started at {line.started_at:.2f} s was never confirmed to a session")
    return report


async def racy() -> CallReport:
    return await _call(acknowledged=False)


async def fixed() -> CallReport:
    return await _call(acknowledged=True)
