"""A small Realtime server on a real local socket, for recording through the
SDK's real ``OpenAIRealtimeWebSocketModel`` (no internet: 127.0.0.1).

It answers the GA protocol's basics with the simulated server's own event
builders: a session, conversation items, and a spoken answer to each
``response.create`` (audio deltas, transcript, ``response.done``).
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from agentsim.realtime.server import _events as ev

ANSWER = "your order ships tomorrow"
#: Audio of the answer: three 20 ms chunks of pcm16 at 24 kHz.
CHUNKS = [bytes([index]) * 960 for index in range(3)]


class LocalRealtimeServer:
    def __init__(self) -> None:
        self.ids = ev.EventIds()
        self.headers: list[dict[str, str]] = []
        self.received: list[str] = []

    async def handle(self, connection: ServerConnection) -> None:
        self.headers.append(dict(connection.request.headers) if connection.request else {})
        session: dict[str, Any] = {"type": "realtime", "object": "realtime.session", "id": "sess_local", "model": "gpt-realtime"}
        await connection.send(json.dumps(ev.session_event("session.created", self.ids.next("event"), session)))
        async for message in connection:
            event = json.loads(message)
            kind = event["type"]
            self.received.append(kind)
            if kind == "session.update":
                session = {**session, **event.get("session", {})}
                await connection.send(json.dumps(ev.session_event("session.updated", self.ids.next("event"), session)))
            elif kind == "conversation.item.create":
                item = {"id": self.ids.next("item"), "object": "realtime.item", **event["item"], "status": "completed"}
                await connection.send(json.dumps(ev.item_event("conversation.item.added", self.ids.next("event"), item, None)))
                await connection.send(json.dumps(ev.item_event("conversation.item.done", self.ids.next("event"), item)))
            elif kind == "response.create":
                for answer in self.answer():
                    await connection.send(json.dumps(answer))

    def answer(self) -> list[dict[str, Any]]:
        rid, item_id = self.ids.next("resp"), self.ids.next("item")
        item = ev.assistant_item(item_id, "in_progress", None)
        done_item = ev.assistant_item(item_id, "completed", ANSWER)
        events = [
            ev.response_event("response.created", self.ids.next("event"), ev.response(rid, "in_progress", [])),
            ev.output_item("response.output_item.added", self.ids.next("event"), rid, item),
            ev.item_event("conversation.item.added", self.ids.next("event"), item, None),
            ev.content_part("response.content_part.added", self.ids.next("event"), rid, item_id, ""),
        ]
        for chunk in CHUNKS:
            events.append(ev.content_event("response.output_audio.delta", self.ids.next("event"), rid, item_id, delta=base64.b64encode(chunk).decode()))
        events += [
            ev.content_event("response.output_audio_transcript.delta", self.ids.next("event"), rid, item_id, delta=ANSWER),
            ev.content_event("response.output_audio.done", self.ids.next("event"), rid, item_id),
            ev.content_event("response.output_audio_transcript.done", self.ids.next("event"), rid, item_id, transcript=ANSWER),
            ev.content_part("response.content_part.done", self.ids.next("event"), rid, item_id, ANSWER),
            ev.output_item("response.output_item.done", self.ids.next("event"), rid, done_item),
            ev.item_event("conversation.item.done", self.ids.next("event"), done_item),
            ev.response_event("response.done", self.ids.next("event"), ev.response(rid, "completed", [done_item], ev.usage(10, 20))),
        ]
        return events


@contextlib.asynccontextmanager
async def local_realtime_server() -> AsyncIterator[tuple[LocalRealtimeServer, str]]:
    """The server and its URL (``ws://127.0.0.1:PORT/v1/realtime?model=gpt-realtime``)."""
    server = LocalRealtimeServer()
    async with serve(server.handle, "127.0.0.1", 0) as listening:
        port = next(iter(listening.sockets)).getsockname()[1]
        yield server, f"ws://127.0.0.1:{port}/v1/realtime?model=gpt-realtime"
