"""The simulated server's shared state and its sending, recording and reporting primitives."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..._kernel.core import record_event
from ...toolkit.link import OrderedLink
from ...toolkit.timing import DelaySource, Speed
from . import _events as ev
from ._endpoint import ConnectRequest
from ._rules import RULES, RuleViolation
from ._script import Step
from ._wire import SimulatedWebSocket
from ._wire_log import WireLog

if TYPE_CHECKING:
    from ._replay import RecordedPlayback

#: The least audio the Realtime API accepts in a commit.

#: Transcription models that stream partial transcripts (``...transcription.delta``).
NON_STREAMING_TRANSCRIBERS = frozenset({"whisper-1"})
#: Seconds gpt-realtime-whisper's ``delay`` setting adds before the text (the
#: service trades latency for accuracy; these are the simulation's values).
TRANSCRIPTION_DELAYS = {"minimal": 0.05, "low": 0.15, "medium": 0.3, "high": 0.6, "xhigh": 1.0}


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


class ServerState:
    """What every part of the simulated server shares: its state, and the
    primitives that record, send, spawn and report (the connection's side).
    The parts build on it in a line (responses, then user turns, then the
    client-event handlers, then the server itself), each calling only what
    lies below it."""

    # The server's state, set by SimulatedRealtimeServer.__init__ and
    # _new_session; declared here for the parts of the server that read it.
    _steps: list[Step]
    _by_phrase: list[tuple[str, Step]]
    _downstream: OrderedLink
    _upstream: OrderedLink
    _first_audio: DelaySource
    _cancel_latency: DelaySource
    _transcription_latency: DelaySource
    _transcriptions: int
    connections: list[ConnectRequest]
    _incoming_calls: dict[str, dict[str, Any]]
    audio_chunk_ms: float
    generation_speed: Speed
    seconds_per_word: float
    _initial_session: dict[str, Any]
    violations: list[RuleViolation]
    log: WireLog
    _ids: ev.EventIds
    _wire: SimulatedWebSocket | None
    _active: _Response | None
    _responses: list[_Response]
    _audio_sent_ms: dict[str, float]
    _response_tasks: set[asyncio.Task[Any]]
    _speech_tasks: set[asyncio.Task[Any]]
    _connected_at: float
    closed: bool
    input_audio_ms: float
    _idle: asyncio.Event
    _session: dict[str, Any]
    _items: dict[str, dict[str, Any]]
    _last_item_id: str | None
    _known_calls: set[str]
    _open_calls: set[str]
    _last_user_text: str
    _buffered_input_ms: float
    _pending_speech: list[str]
    _audio_produced: bool
    _idle_timer: asyncio.TimerHandle | None
    _last_speech_ms: int
    playback: RecordedPlayback | None
    max_session_seconds: float | None
    rate_limits: bool
    _expiry: asyncio.TimerHandle | None
    _playback_player: Any
    _idle_after_playback: bool

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

    def _broke(self, rule: str, event: dict[str, Any], **facts: Any) -> bool:
        """Ask ``rule``'s check (``_rules.py``) about ``facts``: if the client
        broke it, record the violation, send the server's error (if the rule
        has one) and return True (the handler then drops the event)."""
        broken = RULES[rule].check(**facts)
        if broken is None:
            return False
        violation = RuleViolation(rule, asyncio.get_running_loop().time(), event, broken.detail)
        self.violations.append(violation)
        record_event("violation", f"{rule}: {broken.detail}")
        if broken.error is not None:
            self._error(*broken.error, event)
        return True

    def _error(self, code: str, message: str, event: dict[str, Any]) -> None:
        self._send(ev.error(self._ids.next("event"), code, message, event.get("event_id")))

    def _add_item(self, item: dict[str, Any]) -> None:
        """Add ``item`` to the conversation and announce it (added, then done)."""
        previous, self._last_item_id = self._last_item_id, item["id"]
        self._items[item["id"]] = item
        self._send(ev.item_event("conversation.item.added", self._ids.next("event"), item, previous))
        self._send(ev.item_event("conversation.item.done", self._ids.next("event"), item))
