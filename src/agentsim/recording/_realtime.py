"""``RecordingRealtimeModel``: any SDK ``RealtimeModel``, recorded to a file.

On a WebSocket model (the SDK's ``OpenAIRealtimeWebSocketModel``, its SIP
model, ``SimulatedRealtimeServer.model()``) the recording is the wire: every
GA JSON event the application sent and every one the server sent, as they
crossed the socket (layer ``"wire"``, replayable by
``SimulatedRealtimeServer.from_recording``). Any other model (the SDK's
``ScriptedRealtimeModel``, a transport of your own) is recorded at the model
boundary: the send events and the model events (layer ``"model"``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from websockets.exceptions import ConnectionClosed

from ..contrib.openai_agents.sdk import RealtimeModel, RealtimeModelListener
from .._kernel.errors import SimulationConfigError
from ._format import AUDIO_FIELDS, RecordingWriter, audio_placeholder, bytes_per_ms, jsonable, scrub, settings_summary
from ._header import header

#: The wire's own lifecycle, recorded as events of these types.
CLOSE = "close"


def _now() -> float:
    return asyncio.get_running_loop().time()


class _Recorder:
    """The file and what the events written to it need to know (audio format)."""

    def __init__(self, path: str | os.PathLike[str], keep_audio: bool) -> None:
        self.writer = RecordingWriter(path)
        self.keep_audio = keep_audio
        self.per_ms = {"client": 48.0, "server": 48.0}
        self.client_closed = False

    def wire(self, direction: str, message: str | bytes) -> None:
        try:
            event = json.loads(message)
        except (ValueError, TypeError):
            self.writer.event(_now(), direction, "(not JSON)", {"bytes": len(message)})  # type: ignore[arg-type]
            return
        if not isinstance(event, dict):
            return
        kind = str(event.get("type", "?"))
        self._note_formats(kind, event)
        field = AUDIO_FIELDS.get(kind)
        if field is not None and isinstance(event.get(field), str) and not self.keep_audio:
            data = base64.b64decode(event[field])
            event = {**event, field: audio_placeholder(data, self.per_ms[direction], False)}
        self.writer.event(_now(), direction, kind, scrub(event))  # type: ignore[arg-type]

    def _note_formats(self, kind: str, event: dict[str, Any]) -> None:
        # The session says how long a byte of audio is (pcm16, or 8 kHz G.711).
        if kind not in ("session.created", "session.updated", "session.update"):
            return
        audio = (event.get("session") or {}).get("audio") or {}
        if isinstance(audio, dict):
            for side, direction in (("input", "client"), ("output", "server")):
                settings = audio.get(side) or {}
                if isinstance(settings, dict) and settings.get("format"):
                    self.per_ms[direction] = bytes_per_ms(settings["format"])

    def model_event(self, direction: str, kind: str, value: Any) -> None:
        payload = jsonable(value, keep_audio=self.keep_audio, per_ms=self.per_ms[direction])
        self.writer.event(_now(), direction, kind, payload if isinstance(payload, dict) else {"value": payload})  # type: ignore[arg-type]


class _RecordingSocket:
    """A WebSocket client connection whose messages are recorded both ways."""

    def __init__(self, socket: Any, recorder: _Recorder) -> None:
        self._socket = socket
        self._recorder = recorder

    async def send(self, message: str | bytes) -> None:
        self._recorder.wire("client", message)
        await self._socket.send(message)

    async def close(self, *args: Any, **kwargs: Any) -> None:
        if not self._recorder.client_closed:
            self._recorder.client_closed = True
            self._recorder.writer.event(_now(), "client", CLOSE, {"code": kwargs.get("code", args[0] if args else 1000)})
        await self._socket.close(*args, **kwargs)

    def __aiter__(self) -> AsyncIterator[str | bytes]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[str | bytes]:
        recorder = self._recorder
        try:
            async for message in self._socket:
                recorder.wire("server", message)
                yield message
        except ConnectionClosed as error:
            if not recorder.client_closed:
                code = error.rcvd.code if error.rcvd is not None else 1006
                recorder.writer.event(_now(), "server", CLOSE, {"code": code, "clean": False})
            raise
        if not recorder.client_closed:
            recorder.writer.event(_now(), "server", CLOSE, {"code": 1000, "clean": True})

    def __getattr__(self, name: str) -> Any:
        return getattr(self._socket, name)


class _ModelEvents(RealtimeModelListener):
    def __init__(self, recorder: _Recorder) -> None:
        self._recorder = recorder

    async def on_event(self, event: Any) -> None:
        self._recorder.model_event("server", str(getattr(event, "type", type(event).__name__)), event)


def _send_type(event: object) -> str:
    """``RealtimeModelSendAudio`` -> ``send_audio``."""
    name = type(event).__name__.removeprefix("RealtimeModel")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class RecordingRealtimeModel(RealtimeModel):
    """Wrap a ``RealtimeModel`` so its session is written to ``path`` (JSON Lines).

    Works in production (real time, the real ``OpenAIRealtimeWebSocketModel``)
    and inside a simulation (virtual time)::

        model = RecordingRealtimeModel(OpenAIRealtimeWebSocketModel(), "call.jsonl")
        session = await RealtimeRunner(agent, model=model).run()

    The file starts with a header (format version, SDK version, the model
    and the connection's settings with credentials removed); then one line
    per event with its time offset, direction, type and payload. Audio is
    written as its byte count and duration; ``keep_audio=True`` keeps it in
    full. Load it with :func:`agentsim.recording.load`, show it with
    ``agentsim session show FILE``, replay it with
    ``SimulatedRealtimeServer.from_recording(FILE)``. Attributes the wrapper
    does not define come from the wrapped model."""

    def __init__(self, model: Any, path: str | os.PathLike[str], *, keep_audio: bool = False) -> None:
        if not all(callable(getattr(model, name, None)) for name in ("connect", "send_event", "add_listener", "close")):
            raise SimulationConfigError("model", model, "a RealtimeModel (connect, send_event, add_listener, close), e.g. OpenAIRealtimeWebSocketModel()")
        if not isinstance(path, (str, os.PathLike)):
            raise SimulationConfigError("path", path, "the file to write the recording to (a str or os.PathLike)")
        if not isinstance(keep_audio, bool):
            raise SimulationConfigError("keep_audio", keep_audio, "True to keep audio in full, False (the default) for its duration only")
        self.model = model
        self.path = os.fspath(path)
        self._recorder = _Recorder(path, keep_audio)
        create = getattr(model, "_create_websocket_connection", None)
        #: "wire" for a WebSocket model, "model" for any other.
        self.layer = "wire" if callable(create) else "model"
        if create is not None:
            model._create_websocket_connection = self._recording_connection(create)
        else:
            model.add_listener(_ModelEvents(self._recorder))

    def _recording_connection(self, create: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def create_recorded(*args: Any, **kwargs: Any) -> Any:
            self._recorder.client_closed = False
            return _RecordingSocket(await create(*args, **kwargs), self._recorder)

        return create_recorded

    async def connect(self, options: Any) -> None:
        writer = self._recorder.writer
        if not writer.started:
            config = {key: value for key, value in dict(options or {}).items() if key != "playback_tracker"}
            writer.start(header("realtime", self.layer, self.model, keep_audio=self._recorder.keep_audio, config=settings_summary(config)), _now())
        await self.model.connect(options)

    def add_listener(self, listener: Any) -> None:
        self.model.add_listener(listener)

    def remove_listener(self, listener: Any) -> None:
        self.model.remove_listener(listener)

    async def send_event(self, event: Any) -> None:
        if self.layer == "model":
            self._recorder.model_event("client", _send_type(event), event)
        await self.model.send_event(event)

    async def send_event_if(self, event: Any, send_if: Callable[[], bool]) -> bool:
        send = getattr(self.model, "send_event_if", None)
        if send is None:
            return False
        sent = bool(await send(event, send_if))
        if sent and self.layer == "model":
            self._recorder.model_event("client", _send_type(event), event)
        return sent

    def _retire_response_audio(self, response_id: str) -> None:
        retire = getattr(self.model, "_retire_response_audio", None)
        if retire is not None:
            retire(response_id)

    async def close(self) -> None:
        try:
            await self.model.close()
        finally:
            self._recorder.writer.close()

    def __getattr__(self, name: str) -> Any:
        if name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)
