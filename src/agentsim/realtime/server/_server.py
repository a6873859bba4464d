"""The simulated Realtime API server: GA JSON events, paced on the virtual clock.

It talks to the real ``OpenAIRealtimeWebSocketModel`` over
:class:`SimulatedWebSocket` and plays the server's part of the protocol:
sessions, conversation items, responses with audio and transcript deltas
(faster than real time, as servers send), function calls, cancellation
(confirmed after ``cancel_latency``), truncation, server VAD for scripted user
speech (barge-in cancels the active response), clean and abrupt disconnects.

Server rules (see ``_rules``) are checked on every client event and recorded
as :class:`RuleViolation`\\ s with the offending event and its virtual time;
``assert_rules()`` turns them into a test failure.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..._kernel.core import record_event, require_core
from ..._kernel.errors import SimulationConfigError
from ..._kernel.lanes import register_lane
from ..._kernel.ownership import OneSimulation
from ..._kernel.validation import non_negative, positive
from ...audio import pcm
from ...link import OrderedLink
from ...timing import DelaySource, DelaySpec, Pacer, Speed, check_speed
from . import _events as ev
from ._endpoint import ConnectRequest, inspect_request, rejection
from ._rules import RULES, RealtimeServerRuleError, RuleViolation, selected_rules
from ._script import CallTool, Reply, Step
from ._session import DEFAULT_SESSION, merge, turn_detection
from ._wire import SimulatedWebSocket

if TYPE_CHECKING:
    from ._model import SimulatedRealtimeModel, SimulatedRealtimeSIPModel

# The wire and the rules on the timeline, each in a lane above the tasks.
register_lane("server", "wire: server events (at the client)")
register_lane("client", "wire: client events (at the server)")
register_lane("violation", "server rule violations")

#: The least audio the Realtime API accepts in a commit.
MIN_COMMIT_MS = 100.0

#: The URL the adapter uses by default, for raw connections.
DEFAULT_URL = "wss://api.openai.com/v1/realtime?model=gpt-realtime"

#: Transcription models that stream partial transcripts (``...transcription.delta``).
NON_STREAMING_TRANSCRIBERS = frozenset({"whisper-1"})


@dataclass
class _Response:
    id: str
    step: Step
    task: asyncio.Task[None] | None = None
    item_id: str | None = None
    cancel_requested: bool = False
    cancel_reason: str = "client_cancelled"
    text_only: bool = False
    spoken: list[str] = field(default_factory=list)
    truncated_by: dict[str, Any] | None = None  # a client truncate of its item while it was generating
    truncated_sent_ms: float = 0.0


def _checked_step(step: object, where: str) -> Step:
    if not isinstance(step, Reply | CallTool):
        raise SimulationConfigError(where, step, 'Reply("words", audio_seconds=...) or CallTool("tool_name", {...})')
    return step


class SimulatedRealtimeServer:
    """A Realtime API server on the virtual clock, for the real adapter.

    ``replies`` are the responses, in order (a :class:`Reply` or a
    :class:`CallTool`); ``when_user_says`` picks one by what the user said
    instead. Timing (delay specs, see :mod:`agentsim.timing`; distributions
    are seeded and shrinkable): ``latency`` per server→client event,
    ``client_latency`` per client→server event, ``first_audio_latency`` from
    ``response.created`` to the first audio, ``cancel_latency`` to confirm a
    cancel, ``transcription_latency`` from a committed user turn to its input
    audio transcription (when the session configures
    ``audio.input.transcription``). Audio goes out in ``audio_chunk_ms`` chunks, ``generation_speed``
    times faster than real time (a ``(low, high)`` range makes each chunk's
    spacing a window, see :class:`agentsim.timing.Pacer`). ``interrupt_response`` and ``create_response``
    are the initial server-VAD switches; the client's ``session.update``
    overrides them (the SDK sends its own turn detection: set them in
    ``model_settings["turn_detection"]``)::

        server = SimulatedRealtimeServer([Reply("Hello there!"), CallTool("lookup", {"id": 7})], cancel_latency=0.12)
        runner = RealtimeRunner(agent, model=server.model())
        server.user_speaks("hi", at=1.0, seconds=0.8)
        ...
        server.assert_rules()
    """

    def __init__(
        self,
        replies: Sequence[Step] = (),
        *,
        latency: DelaySpec = 0.02,
        client_latency: DelaySpec = 0.02,
        first_audio_latency: DelaySpec = 0.25,
        cancel_latency: DelaySpec = 0.05,
        transcription_latency: DelaySpec = 0.0,
        audio_chunk_ms: float = 40.0,
        generation_speed: Speed = 2.0,
        seconds_per_word: float = 0.35,
        interrupt_response: bool = True,
        create_response: bool = True,
    ) -> None:
        positive("audio_chunk_ms", audio_chunk_ms)
        positive("seconds_per_word", seconds_per_word)
        check_speed(generation_speed, name="generation_speed")
        if isinstance(replies, (str, bytes)) or not isinstance(replies, Sequence):
            raise SimulationConfigError("replies", replies, "a list of Reply and CallTool steps")
        self._steps = [_checked_step(step, f"replies[{index}]") for index, step in enumerate(replies)]
        self._by_phrase: list[tuple[str, Step]] = []
        self._downstream = OrderedLink(DelaySource(latency, name="latency", stream="server:latency"))
        self._upstream = OrderedLink(DelaySource(client_latency, name="client_latency", stream="server:client_latency"))
        self._first_audio = DelaySource(first_audio_latency, name="first_audio_latency", stream="server:first_audio")
        self._cancel_latency = DelaySource(cancel_latency, name="cancel_latency", stream="server:cancel")
        self._transcription_latency = DelaySource(transcription_latency, name="transcription_latency", stream="server:transcription")
        self._transcriptions = 0
        #: Every connection attempt, in order (credential-free; see ``ConnectRequest``).
        self.connections: list[ConnectRequest] = []
        self._incoming_calls: dict[str, dict[str, Any]] = {}
        self.audio_chunk_ms = audio_chunk_ms
        self.generation_speed = generation_speed
        self.seconds_per_word = seconds_per_word
        self._initial_session = merge(DEFAULT_SESSION, {"audio": {"input": {"turn_detection": {"interrupt_response": interrupt_response, "create_response": create_response}}}})
        #: Rules the client broke, in order.
        self.violations: list[RuleViolation] = []
        #: ``(virtual time, "client"|"server", event type)`` for every event, in order.
        self.log: list[tuple[float, str, str]] = []
        self._ids = ev.EventIds()
        self._wire: SimulatedWebSocket | None = None
        self._one_run = OneSimulation("SimulatedRealtimeServer", "a new server per run: build it inside the simulated function")
        self._active: _Response | None = None
        self._responses: list[_Response] = []
        self._audio_sent_ms: dict[str, float] = {}  # every item ever, for inspection
        self._response_tasks: set[asyncio.Task[Any]] = set()
        self._speech_tasks: set[asyncio.Task[Any]] = set()
        self._connected_at = 0.0
        self.closed = True  # until a client connects
        #: Milliseconds of microphone audio the client appended, in total.
        self.input_audio_ms = 0.0
        self._idle = asyncio.Event()
        self._idle.set()
        self._new_session()

    def _new_session(self) -> None:
        # Each connection is a fresh Realtime session: the server forgets the
        # previous one's items, calls and configuration.
        self._session = self._initial_session
        self._items: dict[str, dict[str, Any]] = {}
        self._last_item_id: str | None = None
        self._known_calls: set[str] = set()
        self._last_user_text = ""
        self._buffered_input_ms = 0.0
        self._pending_speech: list[str] = []  # words spoken with VAD off, for the next commit
        self._audio_produced = False  # the voice is fixed once assistant audio exists
        self._idle_timer: asyncio.TimerHandle | None = None
        self._last_speech_ms = 0

    # -- script ----------------------------------------------------------------------

    def when_user_says(self, phrase: str, step: Step) -> None:
        """Answer with ``step`` the first time the user's words contain ``phrase``."""
        if not isinstance(phrase, str) or not phrase:
            raise SimulationConfigError("phrase", phrase, "words the user says, a non-empty str")
        self._by_phrase.append((phrase.lower(), _checked_step(step, "step")))

    def model(self) -> SimulatedRealtimeModel:
        """A real ``OpenAIRealtimeWebSocketModel`` connected to this server in memory."""
        from ._model import SimulatedRealtimeModel

        return SimulatedRealtimeModel(self)

    def sip_model(self) -> SimulatedRealtimeSIPModel:
        """The SDK's ``OpenAIRealtimeSIPModel``, attaching to calls of this server
        in memory (announce them with :meth:`incoming_call`)."""
        from ._model import SimulatedRealtimeSIPModel

        return SimulatedRealtimeSIPModel(self)

    def incoming_call(self, call_id: str | None = None, *, session: dict[str, Any] | None = None) -> str:
        """A SIP call arrives (what the ``realtime.call.incoming`` webhook
        announces): a client may attach to it with ``call_id``. ``session`` is
        the configuration it was accepted with (e.g. from
        ``OpenAIRealtimeSIPModel.build_initial_session_payload``). Returns the
        call id; attaching to an unknown one is refused (HTTP 404)."""
        if call_id is None:
            call_id = self._ids.next("rtc")
        if not isinstance(call_id, str) or not call_id:
            raise SimulationConfigError("call_id", call_id, "the call's id, a non-empty str (or None for a generated one)")
        if session is not None and not isinstance(session, dict):
            raise SimulationConfigError("session", session, "the accepted session configuration, a dict (or None)")
        self._incoming_calls[call_id] = dict(session or {})
        return call_id

    def user_speaks(self, transcript: str, *, at: float | None = None, seconds: float = 1.5) -> None:
        """Scripted user speech, as server VAD sees it: ``speech_started`` at ``at``
        (now if None), ``speech_stopped``, the committed item and its transcript
        ``seconds`` later, then a response if ``create_response``. Barge-in: an
        active response is cancelled (if ``interrupt_response``).

        With turn detection off (``turn_detection: None``) the server detects
        nothing: the words become the transcript of the app's next
        ``input_audio_buffer.commit``. Scripted speech belongs to the current
        connection: a close cancels what is still to come, and speech while
        no client is connected is not heard."""
        if not isinstance(transcript, str):
            raise SimulationConfigError("transcript", transcript, "the words the user says, a str")
        non_negative("seconds", seconds, expected="how long the user speaks, in seconds >= 0")
        if at is not None:
            non_negative("at", at, expected="the virtual time the user starts speaking (seconds >= 0), or None for now")
        require_core("SimulatedRealtimeServer.user_speaks")
        loop = asyncio.get_running_loop()
        start = loop.time() if at is None else at
        self._spawn(self._user_turn(transcript, start, seconds), self._speech_tasks)

    async def disconnect(self, *, clean: bool = True) -> None:
        """The server drops the connection: a normal close (code 1000) after the
        events already sent arrive, or an abrupt one (1006) at once. A client
        may connect again; it gets a fresh session (no items, calls or
        configuration of the old one)."""
        wire = self._wire
        if wire is None or self.closed:
            return
        self.closed = True
        self._stop_tasks()
        if clean:
            self._downstream.send(lambda: self._close_wire(wire, clean=True))  # after what was sent
        else:
            self._downstream.clear()  # a dropped connection loses what was in flight
            self._upstream.clear()
            self._close_wire(wire, clean=False)

    def _close_wire(self, wire: SimulatedWebSocket, *, clean: bool) -> None:
        self._record("server", "close (1000)" if clean else "abrupt disconnect (1006)")
        wire.server_closed(clean=clean)

    # -- inspection --------------------------------------------------------------------

    def audio_sent_ms(self, item_id: str) -> float:
        """Milliseconds of audio the server sent for an assistant item."""
        if not isinstance(item_id, str):
            raise SimulationConfigError("item_id", item_id, "an assistant item's id (a str)")
        return self._audio_sent_ms.get(item_id, 0.0)

    @property
    def responses(self) -> list[dict[str, Any]]:
        """Every response: id, step kind and whether it was cancelled."""
        return [{"id": r.id, "kind": type(r.step).__name__, "cancelled": r.cancel_requested, "item_id": r.item_id} for r in self._responses]

    def assert_rules(self, *, only: Iterable[str] | None = None, ignore: Iterable[str] = ()) -> None:
        """Raise :class:`RealtimeServerRuleError` if a rule was broken: every
        protocol rule by default (not the advisory ``truncate_needs_cancel``),
        ``only`` these rule ids, less ``ignore`` (see ``RULES``)::

            server.assert_rules(only=["single_active_response"])
            server.assert_rules(ignore=["no_events_after_close"])
        """
        chosen = selected_rules(only, ignore)
        broken = [violation for violation in self.violations if violation.rule in chosen]
        if broken:
            raise RealtimeServerRuleError(broken)

    # -- the connection -------------------------------------------------------------------

    def connect(self, url: str = DEFAULT_URL, headers: dict[str, str] | None = None) -> SimulatedWebSocket:
        """Open the client end of a connection, as the adapter does (call it
        yourself to speak raw JSON to the server). One connection at a time.

        ``url`` and ``headers`` are checked as the real endpoints check them
        (OpenAI or Azure, SIP ``call_id``, credentials): a refused handshake
        raises the ``websockets`` ``InvalidStatus`` a real one raises."""
        # Its state (responses, rules, seeded latency draws) belongs to one run.
        self._one_run.check()
        if self._wire is not None and not self._wire.closed:
            raise SimulationConfigError("SimulatedRealtimeServer", "a second open connection", "one connection at a time: close the first (or let the server disconnect) before connecting again")
        require_core("SimulatedRealtimeServer.connect")
        if not isinstance(url, str) or not (headers is None or isinstance(headers, dict)):
            raise SimulationConfigError("url/headers", (url, headers), "a wss:// URL (str) and a dict of headers, or None for the default credentials")
        request, status, refused = inspect_request(url, {"Authorization": "Bearer simulated"} if headers is None else headers)
        if refused is None and request.call_id is not None and request.call_id not in self._incoming_calls:
            status, refused = 404, f"no call {request.call_id!r} to attach to (announce it with server.incoming_call(...))"
        if refused is not None:
            self.connections.append(ConnectRequest(**{**request.__dict__, "rejected": status}))
            self._record("server", f"handshake refused ({status})")
            raise rejection(status, refused)
        self.connections.append(request)
        self._downstream.clear()
        self._upstream.clear()
        self._new_session()
        if request.call_id is not None:
            self._session = merge(self._session, self._incoming_calls[request.call_id])
        self._wire = SimulatedWebSocket(self._arrive, self._upstream, self._client_closed, self._sent_after_close)
        self.closed = False
        self._connected_at = asyncio.get_running_loop().time()
        self._send(ev.session_event("session.created", self._ids.next("event"), self._session))
        return self._wire

    def _client_closed(self) -> None:
        self._record("client", "close")
        self.closed = True
        self._stop_tasks()

    def _sent_after_close(self, event: dict[str, Any]) -> None:
        self._violation("no_events_after_close", event, f"{event.get('type', '?')} sent on a connection the client knew was closed")

    def _record(self, direction: str, kind: str) -> None:
        self.log.append((asyncio.get_running_loop().time(), direction, kind))
        record_event(direction, kind)

    def _send(self, event: dict[str, Any]) -> None:
        if self._wire is not None and not self.closed:  # (no encoding for a closed connection)
            self._send_message(event["type"], json.dumps(event))

    def _send_message(self, kind: str, message: str) -> None:
        """Send an event already encoded (``kind``: its type)."""
        wire = self._wire
        if wire is None or self.closed:
            return  # the server never speaks on a closed connection
        self._downstream.send(partial(self._deliver, wire, kind, message))  # (C to call, unlike a lambda)

    def _send_together(self, events: list[dict[str, Any]]) -> None:
        """Events the server emits in one burst (a transcript's deltas and its
        completion): one network delay for all, delivered in order."""
        wire = self._wire
        if wire is None or self.closed:
            return
        messages = [(event["type"], json.dumps(event)) for event in events]

        def deliver() -> None:
            for kind, message in messages:
                self._deliver(wire, kind, message)

        self._downstream.send(deliver)

    def _deliver(self, wire: SimulatedWebSocket, kind: str, message: str) -> None:
        # Logged when the client gets it: the log and the timeline show what
        # each side could know at each instant.
        if not wire.closed:
            self._record("server", kind)
            wire.receive(message)

    @staticmethod
    def _spawn(coroutine: Any, tasks: set[asyncio.Task[Any]]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    def _violation(self, rule: str, event: dict[str, Any], detail: str) -> None:
        assert rule in RULES, rule
        violation = RuleViolation(rule, asyncio.get_running_loop().time(), event, detail)
        self.violations.append(violation)
        record_event("violation", f"{rule}: {detail}")

    def _error(self, code: str, message: str, event: dict[str, Any]) -> None:
        self._send(ev.error(self._ids.next("event"), code, message, event.get("event_id")))

    # -- client events ----------------------------------------------------------------------

    def _arrive(self, event: dict[str, Any]) -> None:
        kind = event.get("type", "?")
        if self.closed:
            return  # in flight when the server closed: lost, as on a real network
        self._record("client", kind)
        handler = getattr(self, "_on_" + kind.replace(".", "_"), None)
        if handler is None:
            self._error("unknown_event", f"unsupported client event {kind!r}", event)
            return
        handler(event)

    def _on_session_update(self, event: dict[str, Any]) -> None:
        update = event.get("session", {})
        voice = update.get("audio", {}).get("output", {}).get("voice") if isinstance(update.get("audio"), dict) else None
        current = self._session.get("audio", {}).get("output", {}).get("voice")
        if voice is not None and voice != current and self._audio_produced:
            self._violation("voice_fixed_after_audio", event, f"voice {current!r} -> {voice!r} after the session produced assistant audio")
            self._error("cannot_update_voice", "Cannot update a conversation's voice if assistant audio is present.", event)
            return
        self._session = merge(self._session, update)
        self._send(ev.session_event("session.updated", self._ids.next("event"), self._session))

    def _on_conversation_item_create(self, event: dict[str, Any]) -> None:
        item = dict(event.get("item", {}))
        if item.get("type") == "function_call_output" and item.get("call_id") not in self._known_calls:
            self._violation("known_tool_call", event, f"output for unknown call_id {item.get('call_id')!r}")
            self._error("invalid_call_id", f"no function call with call_id {item.get('call_id')!r}", event)
            return
        item.setdefault("id", self._ids.next("item"))
        item.setdefault("object", "realtime.item")
        if item.get("type") == "message" and item.get("role") == "user":
            texts = [part.get("text", "") for part in item.get("content", []) if isinstance(part, dict)]
            self._last_user_text = " ".join(text for text in texts if text)
        self._add_item(item)

    def _add_item(self, item: dict[str, Any]) -> None:
        previous, self._last_item_id = self._last_item_id, item["id"]
        self._items[item["id"]] = item
        self._send(ev.item_event("conversation.item.added", self._ids.next("event"), item, previous))
        self._send(ev.item_event("conversation.item.done", self._ids.next("event"), item))

    def _on_conversation_item_retrieve(self, event: dict[str, Any]) -> None:
        item = self._items.get(event.get("item_id", ""))
        if item is None:
            self._error("item_not_found", f"no item {event.get('item_id')!r}", event)
            return
        self._send(ev.item_event("conversation.item.retrieved", self._ids.next("event"), item))

    def _on_conversation_item_delete(self, event: dict[str, Any]) -> None:
        item_id = event.get("item_id", "")
        if self._items.pop(item_id, None) is None:
            self._error("item_not_found", f"no item {item_id!r}", event)
            return
        self._send({"type": "conversation.item.deleted", "event_id": self._ids.next("event"), "item_id": item_id})

    def _on_input_audio_buffer_append(self, event: dict[str, Any]) -> None:
        ms = len(event.get("audio", "")) * 3 / 4 / 48  # base64 pcm16 at 24 kHz
        self.input_audio_ms += ms
        self._buffered_input_ms += ms

    def _on_input_audio_buffer_commit(self, event: dict[str, Any]) -> None:
        buffered = self._buffered_input_ms
        if buffered < MIN_COMMIT_MS:
            self._violation("commit_needs_audio", event, f"only {buffered:.0f} ms of audio appended since the last commit or clear; a commit needs {MIN_COMMIT_MS:.0f} ms")
            message = f"Error committing input audio buffer: buffer too small. Expected at least {MIN_COMMIT_MS:.0f}ms of audio, but buffer only has {buffered:.2f}ms of audio."
            self._error("input_audio_buffer_commit_empty", message, event)
            return
        self._buffered_input_ms = 0.0
        self._commit_user_turn(self._ids.next("item"), self._pending_speech.pop(0) if self._pending_speech else None)

    def _on_input_audio_buffer_clear(self, event: dict[str, Any]) -> None:
        self._buffered_input_ms = 0.0
        self._send({"type": "input_audio_buffer.cleared", "event_id": self._ids.next("event")})

    def _on_output_audio_buffer_clear(self, event: dict[str, Any]) -> None:
        pass  # WebRTC/SIP only; over WebSocket the client owns playback

    def _on_response_create(self, event: dict[str, Any]) -> None:
        if self._active is not None:
            self._violation("single_active_response", event, f"response.create while {self._active.id} is active")
            self._error("conversation_already_has_active_response", f"Conversation already has an active response {self._active.id}", event)
            return
        requested = event.get("response") or {}
        self._start_response(requested.get("output_modalities"))

    def _on_response_cancel(self, event: dict[str, Any]) -> None:
        active = self._active
        wanted = event.get("response_id")
        if active is None or (wanted and wanted != active.id):
            self._error("response_cancel_not_active", "Cancellation failed: no active response found", event)
            return
        self._request_cancel(active, "client_cancelled")

    def _on_conversation_item_truncate(self, event: dict[str, Any]) -> None:
        item_id, end_ms = event.get("item_id", ""), int(event.get("audio_end_ms", 0))
        sent = self._audio_sent_ms.get(item_id) if item_id in self._items else None
        if sent is None:
            self._error("item_not_found", f"no assistant audio item {item_id!r}", event)
            return
        if end_ms > sent + 0.5:
            self._violation("truncate_within_sent_audio", event, f"audio_end_ms={end_ms} but only {sent:.0f} ms of {item_id} were sent")
            self._error("invalid_value", f"Audio content of {sent:.0f}ms is already shorter than {end_ms}ms", event)
            return
        active = self._active
        if active is not None and active.item_id == item_id and not active.cancel_requested and active.truncated_by is None:
            # Truncating the answer being generated does not stop it: unless a
            # cancel follows, the server keeps streaming what the user cut off.
            active.truncated_by = event
            active.truncated_sent_ms = sent
        self._send(ev.truncated(self._ids.next("event"), item_id, int(event.get("content_index", 0)), end_ms))

    # -- responses ------------------------------------------------------------------------------

    def _next_step(self) -> Step:
        said = self._last_user_text.lower()
        for index, (phrase, step) in enumerate(self._by_phrase):
            if phrase in said:
                del self._by_phrase[index]
                return step
        return self._steps.pop(0) if self._steps else Reply("")

    def _start_response(self, output_modalities: list[str] | None = None) -> None:
        modalities = output_modalities or self._session.get("output_modalities")
        response = _Response(self._ids.next("resp"), self._next_step(), text_only=modalities == ["text"])
        self._active = response
        self._idle.clear()
        self._responses.append(response)
        response.task = self._spawn(self._respond(response), self._response_tasks)

    def _request_cancel(self, response: _Response, reason: str) -> None:
        if response.cancel_requested:
            return
        response.cancel_requested = True
        response.cancel_reason = reason
        self._cancel_latency.call_later(len(self._responses), self._confirm_cancel, response)

    def _confirm_cancel(self, response: _Response) -> None:
        if response.task is not None and not response.task.done():
            response.task.cancel()

    def _stop_tasks(self) -> None:
        # Scripted speech belongs to the connection too: schedule it again
        # after a reconnect (and nothing outlives the call).
        for task in [*self._response_tasks, *self._speech_tasks]:
            task.cancel()
        self._cancel_idle_timer()
        self._active = None
        self._idle.set()

    async def _respond(self, response: _Response) -> None:
        step, rid = response.step, response.id
        self._send(ev.response_event("response.created", self._ids.next("event"), ev.response(rid, "in_progress", [])))
        output: list[dict[str, Any]] = []
        status = "completed"
        try:
            if isinstance(step, CallTool):
                output = [self._call_tool(response, step)]
            else:
                output = [await self._speak(response, step)]
        except asyncio.CancelledError:
            status = "cancelled"
            if response.item_id is not None:
                item = ev.assistant_item(response.item_id, "incomplete", "".join(response.spoken), text=response.text_only)
                self._send(ev.output_item("response.output_item.done", self._ids.next("event"), rid, item))
                output = [item]
            raise  # after response.done (below): the task ends cancelled, as asked
        finally:
            if self._active is response:
                self._active = None
                self._idle.set()
            self._check_truncate_without_cancel(response)
            if status == "completed":
                self._start_idle_timer()
            words = len(response.spoken) or 1
            body = ev.response(rid, status, output, ev.usage(20, words * 2))
            if status == "cancelled":
                body["status_details"] = {"type": "cancelled", "reason": response.cancel_reason}
            self._send(ev.response_event("response.done", self._ids.next("event"), body))

    def _check_truncate_without_cancel(self, response: _Response) -> None:
        if response.truncated_by is None or response.cancel_requested or response.item_id is None:
            return
        more = self._audio_sent_ms.get(response.item_id, 0.0) - response.truncated_sent_ms
        if more > 0:
            self._violation(
                "truncate_needs_cancel",
                response.truncated_by,
                f"{response.item_id} was truncated while {response.id} was generating and no response.cancel followed: "
                f"{more:.0f} ms more audio were streamed after the truncate",
            )

    # -- idle timeout (server VAD's idle_timeout_ms) ----------------------------------------------

    def _start_idle_timer(self) -> None:
        self._cancel_idle_timer()
        detection = turn_detection(self._session)
        timeout_ms = detection.get("idle_timeout_ms") if detection is not None else None
        if not timeout_ms or self.closed:
            return
        self._idle_timer = asyncio.get_running_loop().call_later(timeout_ms / 1000, self._idle_timeout)

    def _cancel_idle_timer(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def _idle_timeout(self) -> None:
        # No speech since the last answer: the server says so and, as with a
        # turn, answers (typically a prompt to continue).
        self._idle_timer = None
        if self.closed or self._active is not None:
            return
        now_ms = round((asyncio.get_running_loop().time() - self._connected_at) * 1000)
        item_id = self._ids.next("item")
        self._send(ev.timeout_triggered(self._ids.next("event"), item_id, self._last_speech_ms, now_ms))
        detection = turn_detection(self._session) or {}
        if detection.get("create_response", True):
            self._start_response()

    def _call_tool(self, response: _Response, step: CallTool) -> dict[str, Any]:
        rid = response.id
        item_id = response.item_id = self._ids.next("item")
        call_id = step.call_id or self._ids.next("call")
        self._known_calls.add(call_id)
        pending = ev.function_call_item(item_id, call_id, step.name, "", "in_progress")
        self._send(ev.output_item("response.output_item.added", self._ids.next("event"), rid, pending))
        self._send(ev.arguments_done(self._ids.next("event"), rid, item_id, call_id, step.name, step.arguments_json))
        done = ev.function_call_item(item_id, call_id, step.name, step.arguments_json, "completed")
        self._items[item_id] = done
        self._send(ev.output_item("response.output_item.done", self._ids.next("event"), rid, done))
        return done

    async def _speak(self, response: _Response, step: Reply) -> dict[str, Any]:
        """An assistant message: audio with its transcript, or text when the
        session's ``output_modalities`` is ``["text"]``."""
        rid, text = response.id, response.text_only
        item_id = response.item_id = self._ids.next("item")
        self._audio_sent_ms[item_id] = 0.0
        self._items[item_id] = ev.assistant_item(item_id, "in_progress", None, text=text)
        self._send(ev.output_item("response.output_item.added", self._ids.next("event"), rid, self._items[item_id]))
        self._send(ev.content_part("response.content_part.added", self._ids.next("event"), rid, item_id, "", text=text))
        seconds = step.audio_seconds if step.audio_seconds is not None else max(1, len(step.transcript.split())) * self.seconds_per_word
        words = [word + " " for word in step.transcript.split(" ")] if step.transcript else []
        if words:
            words[-1] = words[-1].rstrip()
        await self._first_audio.sleep(len(self._responses) - 1)
        if text:
            await self._stream_text(response, item_id, words, seconds)
        else:
            await self._stream_audio(response, item_id, words, seconds)
        transcript = "".join(response.spoken)
        if text:
            self._send(ev.content_event("response.output_text.done", self._ids.next("event"), rid, item_id, text=transcript))
        else:
            self._send(ev.content_event("response.output_audio.done", self._ids.next("event"), rid, item_id))
            self._send(ev.content_event("response.output_audio_transcript.done", self._ids.next("event"), rid, item_id, transcript=transcript))
        self._send(ev.content_part("response.content_part.done", self._ids.next("event"), rid, item_id, transcript, text=text))
        done = ev.assistant_item(item_id, "completed", transcript, text=text)
        self._items[item_id] = done
        self._send(ev.output_item("response.output_item.done", self._ids.next("event"), rid, done))
        return done

    async def _stream_audio(self, response: _Response, item_id: str, words: list[str], seconds: float) -> None:
        # Chunks paced generation_speed times faster than real time; the
        # transcript's words spread over them.
        samples_per_chunk = max(1, round(24_000 * self.audio_chunk_ms / 1000))
        chunks = pcm.tone_chunks(float(seconds), samples_per_chunk)
        pacer = Pacer(self.audio_chunk_ms / 1000, self.generation_speed, name="generation_speed")
        for index, chunk in enumerate(chunks):
            await pacer.until(index)
            self._send_message("response.output_audio.delta", ev.audio_delta_message(self._ids.next("event"), response.id, item_id, chunk))
            self._audio_produced = True
            self._audio_sent_ms[item_id] += len(chunk) / 48
            for word in words[math.floor(index * len(words) / len(chunks)) : math.floor((index + 1) * len(words) / len(chunks))]:
                response.spoken.append(word)
                self._send(ev.content_event("response.output_audio_transcript.delta", self._ids.next("event"), response.id, item_id, delta=word))

    async def _stream_text(self, response: _Response, item_id: str, words: list[str], seconds: float) -> None:
        # A word at a time, as fast as the audio version would be generated.
        pacer = Pacer(seconds / max(1, len(words)), self.generation_speed, name="generation_speed")
        for index, word in enumerate(words, start=1):
            await pacer.until(index)
            response.spoken.append(word)
            self._send(ev.content_event("response.output_text.delta", self._ids.next("event"), response.id, item_id, delta=word))

    # -- scripted user speech ---------------------------------------------------------------------

    async def _user_turn(self, transcript: str, start: float, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(start - loop.time())
        if self.closed:
            return  # not connected yet: nobody hears it
        detection = turn_detection(self._session)
        if detection is None:
            # No VAD: the server hears nothing until the app commits the buffer;
            # the words become the transcript of that commit.
            await asyncio.sleep(seconds)
            self._pending_speech.append(transcript)
            return
        item_id = self._ids.next("item")
        self._cancel_idle_timer()
        self._send(ev.speech_started(self._ids.next("event"), item_id, round((loop.time() - self._connected_at) * 1000)))
        if self._active is not None and detection.get("interrupt_response", True):
            self._request_cancel(self._active, "turn_detected")  # barge-in
        await asyncio.sleep(seconds)
        self._last_speech_ms = round((loop.time() - self._connected_at) * 1000)
        self._send(ev.speech_stopped(self._ids.next("event"), item_id, self._last_speech_ms))
        self._buffered_input_ms = 0.0  # VAD committed the buffer
        self._commit_user_turn(item_id, transcript)
        if detection.get("create_response", True):
            await self._idle.wait()  # a cancelled response must end first
            if not self.closed:
                self._start_response()

    def _commit_user_turn(self, item_id: str, transcript: str | None) -> None:
        self._send(ev.committed(self._ids.next("event"), item_id, self._last_item_id))
        self._add_item(ev.user_audio_item(item_id, None))
        if transcript is None:
            return
        self._last_user_text = transcript  # the model hears the words, transcribed or not
        transcription = self._session.get("audio", {}).get("input", {}).get("transcription")
        if isinstance(transcription, dict) and transcription.get("model"):
            index, model = self._transcriptions, str(transcription["model"])
            self._transcriptions += 1
            latency = self._transcription_latency
            if latency.window(index) is None and latency.seconds(index) == 0:
                self._send_transcript(item_id, transcript, model)  # with the commit, in order
            else:
                self._spawn(self._transcribe(item_id, transcript, model, index), self._speech_tasks)

    async def _transcribe(self, item_id: str, transcript: str, model: str, index: int) -> None:
        await self._transcription_latency.sleep(index)
        self._send_transcript(item_id, transcript, model)

    def _send_transcript(self, item_id: str, transcript: str, model: str) -> None:
        """Input audio transcription: partial transcripts (word by word, for
        models that stream them), then the completed transcript."""
        burst: list[dict[str, Any]] = []
        if model not in NON_STREAMING_TRANSCRIBERS:
            words = transcript.split(" ")
            burst += [ev.transcription_delta(self._ids.next("event"), item_id, word if position == len(words) - 1 else word + " ") for position, word in enumerate(words)]
        burst.append(ev.transcription_completed(self._ids.next("event"), item_id, transcript))
        self._send_together(burst)
