"""An in-memory WebSocket between the real adapter and the simulated server.

It offers what ``OpenAIRealtimeWebSocketModel`` uses of a ``websockets``
``ClientConnection`` — ``send``, ``close`` and ``async for message in ws`` —
with network latency in both directions on the virtual clock. Latency may
jitter, but like TCP the connection never reorders (each direction is an
:class:`~agentsim.link.OrderedLink`). No socket is opened.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Any

from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK
from websockets.frames import Close

from ...toolkit.inbox import Inbox
from ...toolkit.link import OrderedLink

_CLEAN = object()


class SimulatedWebSocket:
    """The client end of the connection (what the adapter holds)."""

    def __init__(
        self,
        deliver_to_server: Callable[[dict[str, Any]], None],
        upstream: OrderedLink,
        on_client_close: Callable[[], None],
        on_send_after_close: Callable[[dict[str, Any]], None],
        close_failure: Callable[[], BaseException | None] = lambda: None,
    ) -> None:
        self._close_failure = close_failure
        self._deliver_to_server = deliver_to_server
        self._on_send_after_close = on_send_after_close
        self._upstream = upstream
        self._on_client_close = on_client_close
        self._inbox: Inbox[Any] = Inbox()
        self.closed = False
        self.close_code: int | None = None

    # -- used by the adapter ------------------------------------------------------

    async def send(self, payload: str) -> None:
        event = json.loads(payload)
        if self.closed:
            self._on_send_after_close(event)
            raise self._closed_error()
        self._upstream.send(partial(self._deliver_to_server, event))  # (C to call, unlike a lambda)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.close_code = code
            self._on_client_close()
            self._inbox.put_nowait(_CLEAN)
            failure = self._close_failure()
            if failure is not None:
                raise failure  # the close handshake failed (the connection is gone all the same)

    def _closed_error(self) -> ConnectionClosedError | ConnectionClosedOK:
        # What websockets raises on send after a close: OK for a normal close.
        if self.close_code == 1000:
            frame = Close(1000, "")
            return ConnectionClosedOK(frame, frame, True)
        return ConnectionClosedError(None, None, None)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[str]:
        inbox = self._inbox
        received = inbox.items
        while True:
            # (Inbox.get, inlined: a coroutine less to resume per frame.)
            while not received:
                await inbox.wait()
            message = received.popleft()
            if message is _CLEAN:
                return  # like ClientConnection: a normal close ends iteration
            if isinstance(message, BaseException):
                raise message
            yield message

    # -- used by the server -----------------------------------------------------------

    def receive(self, message: str) -> None:
        if not self.closed:
            self._inbox.put_nowait(message)

    def server_closed(self, *, clean: bool) -> None:
        if self.closed:
            return
        self.closed = True
        if clean:
            self.close_code = 1000
            self._inbox.put_nowait(_CLEAN)
        else:
            self.close_code = 1006
            self._inbox.put_nowait(ConnectionClosedError(None, None, None))
