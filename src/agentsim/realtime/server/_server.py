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
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..._kernel.core import require_core
from ..._kernel.coverage import sometimes
from ..._kernel.errors import SimulationConfigError
from ..._kernel.lanes import register_lane
from ..._kernel.ownership import OneSimulation
from ..._kernel.validation import non_negative, positive
from ...toolkit.link import OrderedLink
from ...toolkit.timing import DelaySource, DelaySpec, Pacer, Speed, check_speed
from . import _events as ev
from ._endpoint import ConnectRequest, inspect_request, rejection
from ._rules import RULES, RealtimeServerRuleError, RuleViolation, selected_rules
from ._script import CallTool, Reply, Step
from ._session import DEFAULT_SESSION, merge, turn_detection
from ._wire import SimulatedWebSocket
from ._wire_log import DEFAULT_LIMIT, WireLog
from ._handlers import ClientEvents
from ._rules import MIN_COMMIT_MS as MIN_COMMIT_MS
from ._state import _Response
from ..moments import DISCONNECT_DURING_TOOL_CALL

if TYPE_CHECKING:
    from ...recording._format import Recording
    from ...recording._gaps import Tolerance
    from ...recording.errors import RecordingDivergenceError
    from ._replay import OnDivergence, RecordedPlayback
    from ._model import SimulatedRealtimeModel, SimulatedRealtimeSIPModel

# The wire and the rules on the timeline, each in a lane above the tasks.
register_lane("server", "wire: server events (at the client)")
register_lane("client", "wire: client events (at the server)")
register_lane("violation", "server rule violations")

#: The URL the adapter uses by default, for raw connections.
DEFAULT_URL = "wss://api.openai.com/v1/realtime?model=gpt-realtime"


def _checked_step(step: object, where: str) -> Step:
    if not isinstance(step, Reply | CallTool):
        raise SimulationConfigError(where, step, 'Reply("words", audio_seconds=...) or CallTool("tool_name", {...})')
    return step


class SimulatedRealtimeServer(ClientEvents):
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
    spacing a window, see :class:`agentsim.timing.Pacer`). Session limits of the
    service: ``max_session_seconds`` ends each session at that age with an
    ``error`` event (code ``session_expired``) and a close, as the service
    does at 60 minutes; ``rate_limits=True`` sends ``rate_limits.updated`` at
    the start of each response (off by default: it adds an event to every
    response). ``log`` keeps the last ``log_limit`` wire events (None: all) and
    counts every one, so an hours-long call's memory stays flat.
    ``interrupt_response`` and ``create_response``
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
        max_session_seconds: float | None = None,
        rate_limits: bool = False,
        log_limit: int | None = DEFAULT_LIMIT,
    ) -> None:
        positive("audio_chunk_ms", audio_chunk_ms)
        if max_session_seconds is not None:
            positive("max_session_seconds", max_session_seconds, expected="the session's longest duration in seconds (> 0; the service's is 3600), or None")
        if not isinstance(rate_limits, bool):
            raise SimulationConfigError("rate_limits", rate_limits, "True to send rate_limits.updated at the start of each response, as the service does")
        #: The session's longest duration: at it, ``session_expired`` and a close (None: no limit).
        self.max_session_seconds = max_session_seconds
        self.rate_limits = rate_limits
        self._expiry: asyncio.TimerHandle | None = None
        self._playback_player: Any = None
        self._close_failures: list[BaseException] = []
        self._idle_after_playback = False
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
        #: ``(virtual time, "client"|"server", event type)`` of the last
        #: ``log_limit`` events, in order, and counts of all (``WireLog``).
        self.log = WireLog(log_limit)
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
        #: Called (no arguments) each time a session ends, whichever side ended it.
        self._close_listeners: list[Callable[[], object]] = []
        #: Milliseconds of microphone audio the client appended, in total.
        self.input_audio_ms = 0.0
        self._idle = asyncio.Event()
        self._idle.set()
        #: The recording this server replays (``from_recording``), else None.
        self.playback: RecordedPlayback | None = None
        self._new_session()

    def _new_session(self) -> None:
        # Each connection is a fresh Realtime session: the server forgets the
        # previous one's items, calls and configuration.
        self._session = self._initial_session
        self._items: dict[str, dict[str, Any]] = {}
        self._last_item_id: str | None = None
        self._known_calls: set[str] = set()
        #: Tool calls asked of the client and not answered yet (coverage: moments.py).
        self._open_calls: set[str] = set()
        self._last_user_text = ""
        self._buffered_input_ms = 0.0
        self._pending_speech: list[str] = []  # words spoken with VAD off, for the next commit
        self._audio_produced = False  # the voice is fixed once assistant audio exists
        self._idle_timer: asyncio.TimerHandle | None = None
        self._last_speech_ms = 0

    @classmethod
    def from_recording(
        cls,
        recording: str | os.PathLike[str] | Recording,
        *,
        tolerance: Tolerance | tuple[float, float] | float | None = None,
        on_divergence: OnDivergence = "raise",
    ) -> SimulatedRealtimeServer:
        """A server that plays a recorded session's server side against the app.

        ``recording`` is a file written by
        :class:`~agentsim.recording.RecordingRealtimeModel` around a WebSocket
        model (or the loaded :class:`~agentsim.recording.Recording`). Each
        recorded server event is sent at its recorded gap after the client
        event it followed; the app's client events are matched against the
        recording in order, and the first mismatch ends the simulation with
        :class:`~agentsim.recording.RecordingDivergenceError` (``on_divergence=
        "end"``: the session closes there instead, and ``divergence`` holds
        the error). Audio kept as a duration is sent as audio of that length.

        ``tolerance`` turns each gap into a window of ``± max(relative * gap,
        absolute)`` (default 10 % and 30 ms; ``Tolerance(0, 0)`` for none),
        so ``explore`` searches the timings near the incident while the
        stock schedule replays the recording's own::

            server = SimulatedRealtimeServer.from_recording("incident.jsonl")
            session = await RealtimeRunner(agent, model=server.model()).run()
        """
        from ...recording._format import Recording, load
        from ...recording._gaps import Tolerance, as_tolerance
        from ._replay import RecordedPlayback

        if on_divergence not in ("raise", "end"):
            raise SimulationConfigError("on_divergence", on_divergence, "'raise' (the default: the simulation fails) or 'end' (the session closes there)")
        if not isinstance(recording, Recording):
            if not isinstance(recording, (str, os.PathLike)):
                raise SimulationConfigError("recording", recording, "a recording's path (str or os.PathLike) or an agentsim.recording.Recording")
            recording = load(recording)
        server = cls(latency=0.0, client_latency=0.0)
        server.playback = RecordedPlayback(recording, Tolerance() if tolerance is None else as_tolerance(tolerance), on_divergence)
        return server

    @property
    def divergence(self) -> RecordingDivergenceError | None:
        """Where a replayed app first did something else than the recording (None: it did not)."""
        return None if self.playback is None else self.playback.divergence

    # -- script ----------------------------------------------------------------------

    def when_user_says(self, phrase: str, step: Step) -> None:
        """Answer with ``step`` the first time the user's words contain ``phrase``."""
        if not isinstance(phrase, str) or not phrase:
            raise SimulationConfigError("phrase", phrase, "words the user says, a non-empty str")
        self._by_phrase.append((phrase.lower(), _checked_step(step, "step")))

    def add_replies(self, *steps: Step) -> None:
        """Append ``steps`` to ``replies``: the answers, in order, to responses
        no ``when_user_says`` phrase picks (such as the one after a tool call)."""
        self._steps.extend(_checked_step(step, f"steps[{index}]") for index, step in enumerate(steps))

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
        self._disconnect(clean)

    def _disconnect(self, clean: bool) -> None:
        wire = self._wire
        if wire is None or self.closed:
            return
        sometimes(bool(self._open_calls), DISCONNECT_DURING_TOOL_CALL)
        self.closed = True
        self._session_ended()
        self._stop_tasks()
        if clean:
            self._downstream.send(lambda: self._close_wire(wire, clean=True))  # after what was sent
        else:
            self._downstream.clear()  # a dropped connection loses what was in flight
            self._upstream.clear()
            self._close_wire(wire, clean=False)

    def _expire(self) -> None:
        # The service's session limit: an error event, then the server closes.
        self._expiry = None
        if self.closed:
            return
        limit = self.max_session_seconds or 0.0
        self._error("session_expired", f"Your session hit the maximum duration of {limit:g} seconds.", {})
        self._disconnect(clean=True)

    def fail_next_close(self, error: BaseException) -> None:
        """The client's next close of the connection fails with ``error`` on
        the wire (the close handshake errs; the connection is gone all the
        same), as ``fail_next_call("close", ...)`` does on the scripted
        transport. Several are used in order."""
        if not isinstance(error, BaseException):
            raise SimulationConfigError("error", error, "an exception instance (e.g. websockets' ConnectionClosedError or OSError)")
        self._close_failures.append(error)

    def _take_close_failure(self) -> BaseException | None:
        return self._close_failures.pop(0) if self._close_failures else None

    def add_close_listener(self, listener: Callable[[], object]) -> None:
        """Call ``listener()`` each time a session ends (the server's limit
        or disconnect, the client's close): a caller on the line hears the
        line go quiet at once."""
        if not callable(listener):
            raise SimulationConfigError("listener", listener, "a function of no arguments")
        self._close_listeners.append(listener)

    def _session_ended(self) -> None:
        for listener in self._close_listeners:
            listener()

    def follow_playback(self, player: Any) -> None:
        """Measure the idle timeout (``idle_timeout_ms`` of server VAD) from the
        end of ``player``'s playback, as the service does, instead of from the
        end of generation (which runs faster than real time). ``player`` is the
        :class:`~agentsim.audio.SimulatedPlayer` the app feeds."""
        listen = getattr(player, "add_playback_listener", None)
        if not callable(listen):
            raise SimulationConfigError("player", player, "the SimulatedPlayer the app feeds (agentsim.audio.SimulatedPlayer)")
        self._playback_player = player
        listen(self._playback_changed)

    def _playback_changed(self, what: str, item_id: str) -> None:
        if what in ("finished", "interrupted") and self._idle_after_playback:
            self._idle_after_playback = False
            self._start_idle_timer()

    def _close_wire(self, wire: SimulatedWebSocket, *, clean: bool) -> None:
        self._record("server", "close (1000)" if clean else "abrupt disconnect (1006)")
        wire.server_closed(clean=clean)

    # -- inspection --------------------------------------------------------------------

    @property
    def session(self) -> dict[str, Any]:
        """The session's effective configuration now (what ``session.updated`` shows)."""
        return self._session

    @property
    def wire_events(self) -> int:
        """Every event that crossed the wire, either way (the log keeps the last ``log_limit``)."""
        return self.log.total

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
        self._wire = SimulatedWebSocket(self._arrive, self._upstream, self._client_closed, self._sent_after_close, self._take_close_failure)
        self.closed = False
        self._connected_at = asyncio.get_running_loop().time()
        if self.max_session_seconds is not None:
            self._expiry = asyncio.get_running_loop().call_later(self.max_session_seconds, self._expire)
        if self.playback is not None:
            self.playback.connected(self._send_replayed, self._replay_closes, self.violations.append)
            return self._wire
        self._send(ev.session_event("session.created", self._ids.next("event"), self._session))
        return self._wire

    def _send_replayed(self, kind: str, event: dict[str, Any]) -> None:
        self._send_message(kind, json.dumps(event))

    def _replay_closes(self, clean: bool) -> None:
        wire = self._wire
        if wire is None or self.closed:
            return
        sometimes(bool(self.playback and self.playback.open_calls), DISCONNECT_DURING_TOOL_CALL)
        self.closed = True
        self._session_ended()
        self._stop_tasks()
        if clean:
            self._downstream.send(lambda: self._close_wire(wire, clean=True))
        else:
            self._downstream.clear()
            self._close_wire(wire, clean=False)

    def _client_closed(self) -> None:
        sometimes(bool(self._open_calls if self.playback is None else self.playback.open_calls), DISCONNECT_DURING_TOOL_CALL)
        self._record("client", "close")
        self.closed = True
        self._session_ended()
        self._stop_tasks()
        if self.playback is not None:
            self.playback.stop()

    def _sent_after_close(self, event: dict[str, Any]) -> None:
        self._broke("no_events_after_close", event, kind=event.get("type", "?"), client_saw_close=True)



def _named_after_the_server(parts: tuple[type, ...]) -> None:
    """The parts are one server: their methods (and so the tasks they run,
    whose trace labels are their coroutines' names) are named after it, as
    before the split: ``SimulatedRealtimeServer._respond#12`` on a timeline,
    and every recorded schedule replays as it was."""
    for part in parts:
        for value in vars(part).values():
            if callable(value) and hasattr(value, "__qualname__"):
                value.__qualname__ = f"SimulatedRealtimeServer.{value.__name__}"


_named_after_the_server(tuple(part for part in SimulatedRealtimeServer.__mro__[1:] if part.__module__.startswith(__package__ or "agentsim")))
