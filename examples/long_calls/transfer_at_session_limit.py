"""A long-call race in plain asyncio: a transfer's answer lands while the session reconnects.

A support line runs a 30-minute call: the caller speaks (2 s), the model
answers after 0.3-0.9 s, the answer plays (3.5 s), the caller pauses
0.5-1.5 s; about 7 s a turn. In minute 27 the caller asks to be
transferred. The transfer service thinks (1.0-2.0 s), then its answer
crosses the network (0.2-0.6 s).

The Realtime session has a limit: it expires at a fixed instant of the call
(``SESSION_LIMIT``, 2.3 s after the transfer starts in the stock schedule)
and the app reconnects, which takes 1 s. An answer sent meanwhile goes to a
closed session. The app's ordinary replies wait for the new session; the
transfer path does not.

The stock schedule passes: the transfer answers 1.9 s in, before the limit.
It fails only when the service thinks long *and* its answer crosses the
limit: a coincidence inside a few seconds of minute 27. A whole-run sweep
reaches it only when the delays of the 230 turns before it happen to add up
to about their nominal sum; a sweep focused on the transfer's minute
(``focus=(WINDOW_START, WINDOW_END)``) explores exactly there.

``racy``: the transfer sends on whatever session it finds. ``fixed``: it
waits for the session to be open, as the replies do.
"""

from __future__ import annotations

import asyncio

from agentsim.timing import sleep_between

#: The call's length and the stock turn (speech 2.0 + reply 0.6 + audio 3.5 + pause 1.0).
CALL_SECONDS = 30 * 60
TURN = 7.1
#: The turn in which the caller asks for a transfer (minute 27).
TRANSFER_TURN = 228
#: When the transfer starts in the stock schedule: the end of that turn's speech.
TRANSFER_AT = TRANSFER_TURN * TURN + 2.0
#: The session's limit: an absolute instant of the call, 2.3 s after the stock transfer started.
SESSION_LIMIT = TRANSFER_AT + 2.3
RECONNECT = 1.0
#: The window a focused sweep explores: the transfer's seconds.
WINDOW_START, WINDOW_END = TRANSFER_AT - 1.0, TRANSFER_AT + 6.0


class LostTransfer(Exception):
    """The transfer's answer went to a session that had already closed."""


class _Session:
    """The app's connection: open, except while it reconnects after the limit."""

    def __init__(self) -> None:
        self.number = 1
        self.open = asyncio.Event()
        self.open.set()
        self.sent: list[tuple[int, str]] = []
        self.frames = 0

    async def expire_at_limit(self) -> None:
        await asyncio.sleep(SESSION_LIMIT)
        self.open.clear()  # session_expired: the server closes it
        await asyncio.sleep(RECONNECT)
        self.number += 1
        self.open.set()

    def send(self, what: str) -> None:
        if not self.open.is_set():
            raise LostTransfer(f"{what!r} sent on session {self.number} at {asyncio.get_running_loop().time():.2f} s, after it closed")
        self.sent.append((self.number, what))


async def _call(*, wait_for_session: bool) -> list[tuple[int, str]]:
    session = _Session()
    limit = asyncio.create_task(session.expire_at_limit(), name="session limit")

    async def transfer() -> None:
        await sleep_between(1.0, 2.0)  # the transfer service thinks
        await sleep_between(0.2, 0.6)  # its answer crosses the network
        if wait_for_session:
            await session.open.wait()
        session.send("transferring you now")

    async def microphone() -> None:
        # The caller's audio, a 20 ms frame at a time, all call long.
        while True:
            await asyncio.sleep(0.02)
            session.frames += 1

    mic = asyncio.create_task(microphone(), name="microphone")
    turn = 0
    tasks = []
    try:
        while asyncio.get_running_loop().time() < CALL_SECONDS - TURN:
            await asyncio.sleep(2.0)  # the caller speaks
            if turn == TRANSFER_TURN:
                tasks.append(asyncio.create_task(transfer(), name="transfer"))
            await sleep_between(0.3, 0.9)  # the model answers
            await session.open.wait()  # (replies wait for the session)
            session.send(f"answer {turn}")
            for _ in range(175):  # the answer plays: 3.5 s of 20 ms frames
                await asyncio.sleep(0.02)
            await sleep_between(0.5, 1.5)  # the caller pauses
            turn += 1
        await asyncio.gather(*tasks)
    finally:
        for task in (limit, mic, *tasks):
            task.cancel()
        await asyncio.gather(limit, mic, *tasks, return_exceptions=True)
    return session.sent


async def racy() -> list[tuple[int, str]]:
    return await _call(wait_for_session=False)


async def fixed() -> list[tuple[int, str]]:
    return await _call(wait_for_session=True)
