"""Race: a follow-up request goes out before the cancel is confirmed.

A voice client interrupts the assistant (``response.cancel``) and, after a
120 ms debounce, asks for a new response (``response.create``). The server
needs 120 ms to confirm the cancel. In stock order the confirmation lands
first; when network timing puts the request first, the server rejects it:
"conversation already has an active response".

``racy``: the client trusts its debounce timer. ``fixed``: it waits for the
server's confirmation before asking again.
"""

from __future__ import annotations

import asyncio

CANCEL_CONFIRM_LATENCY = 0.120
CLIENT_DEBOUNCE = 0.120


class ActiveResponseError(Exception):
    """The server's rule: at most one active response per conversation."""


class FakeRealtimeServer:
    def __init__(self) -> None:
        self.inbox: asyncio.Queue[str] = asyncio.Queue()
        self.active_response = True  # the assistant is speaking
        self.cancel_confirmed = asyncio.Event()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            event = await self.inbox.get()
            if event == "response.cancel":
                # Cancelling takes a while and does not hold up the inbox.
                loop.call_later(CANCEL_CONFIRM_LATENCY, self._finish_cancel)
            elif event == "response.create":
                if self.active_response:
                    raise ActiveResponseError("conversation already has an active response")
                self.active_response = True
                return

    def _finish_cancel(self) -> None:
        self.active_response = False
        self.cancel_confirmed.set()


async def _conversation(wait_for_confirmation: bool) -> None:
    server = FakeRealtimeServer()

    async def client() -> None:
        server.inbox.put_nowait("response.cancel")
        if wait_for_confirmation:
            await server.cancel_confirmed.wait()  # the server says when it is done
        else:
            await asyncio.sleep(0)  # let the transport flush
            await asyncio.sleep(CLIENT_DEBOUNCE)  # "surely the cancel is done by now"
        server.inbox.put_nowait("response.create")

    async with asyncio.TaskGroup() as group:
        group.create_task(server.serve(), name="server")
        group.create_task(client(), name="client")


async def racy() -> None:
    await _conversation(wait_for_confirmation=False)


async def fixed() -> None:
    await _conversation(wait_for_confirmation=True)
