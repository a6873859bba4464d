"""A recorded session's server side, played against the application.

Every recorded server event is *anchored* to the client event it followed
(the last one before it in the recording; the connection for those before
any) and keeps its recorded gap from it. The application's client events are
matched against the recorded ones in order, type by type: its n-th
``response.create`` against the recording's n-th ``response.create`` (the
fields that say what was asked must agree too: an item's kind, role, call
and output, a truncated item). Events of different types may interleave
otherwise than recorded (two actions of the app racing a server event did
so in the incident by a few ms). Each match fixes its anchor's instant, and
the server events waiting on it are sent at their gaps — each gap a window of the replay's tolerance, in
the recorded order (one connection never reorders). The first mismatch is a
:class:`~agentsim.recording.RecordingDivergenceError`.

Microphone audio (``input_audio_buffer.append``) is the caller's side: it
is accepted, counted and never matched, and no server event is anchored to
it (a replay needs no microphone; the recorded speech events play as the
caller spoke them).
"""

from __future__ import annotations

import asyncio
import base64
import functools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..._kernel.core import current_core, record_event
from ..._kernel.coverage import sometimes
from ...recording._format import AUDIO_FIELDS, Recording, RecordedEvent, bytes_per_ms, placeholder_bytes
from ...recording._gaps import Tolerance, call_at_gap
from ...recording._realtime import CLOSE
from ...recording.errors import RecordingDivergenceError, RecordingFormatError
from ..moments import BARGE_IN_DURING_AUDIO, INTERRUPT_DURING_TOOL_CALL
from ._rules import RULES, RuleViolation

OnDivergence = Literal["raise", "end"]
#: Client events that are the caller's, not the application's decisions.
UNMATCHED = frozenset({"input_audio_buffer.append"})
#: The anchor of events before any client event: the connection.
CONNECTION = -1


@dataclass(frozen=True)
class _Burst:
    """Server events recorded at one instant after one anchor: sent together."""

    anchor: int
    gap: float
    #: Seconds from the event before it (either side): what the tolerance is a fraction of.
    spacing: float
    events: tuple[RecordedEvent, ...]


def _asked(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """What a client event asked, as matched: its type, and for an item or a
    truncate the fields that say which (never timing-dependent ones such as
    ``audio_end_ms``, nor client-made ids)."""
    asked: dict[str, Any] = {"type": kind}
    if kind == "conversation.item.create":
        item = payload.get("item") or {}
        for key in ("type", "role", "call_id", "output"):
            if key in item:
                asked[f"item.{key}"] = item[key]
        texts = [str(part["text"]) for part in item.get("content") or () if isinstance(part, dict) and part.get("text")]
        if texts:
            asked["item.text"] = " ".join(texts)
    elif kind == "conversation.item.truncate":
        asked["item_id"] = payload.get("item_id")
    return asked


@functools.lru_cache(maxsize=64)
def _silence(byte_count: int) -> str:
    return base64.b64encode(bytes(byte_count)).decode("ascii")


def _regenerated(event: RecordedEvent) -> dict[str, Any]:
    """The event as sent: audio kept as a duration becomes audio of that length."""
    payload = event.payload
    field = AUDIO_FIELDS.get(event.type)
    if field is not None and not isinstance(payload.get(field), str):
        count = placeholder_bytes(payload.get(field))
        if count is not None:
            value = payload[field]
            payload = {**payload, field: value["$bytes"] if "$bytes" in value else _silence(count)}
    return payload


class RecordedPlayback:
    """The replay of one recording on one simulated server (one connection)."""

    def __init__(self, recording: Recording, tolerance: Tolerance, on_divergence: OnDivergence) -> None:
        if recording.kind != "realtime" or recording.layer != "wire":
            raise RecordingFormatError(
                recording.path, 1,
                f"a recording of kind {recording.kind!r} and layer {recording.layer!r}, where the simulated server replays a realtime session "
                "recorded on the wire (RecordingRealtimeModel around a WebSocket model)",
            )
        self.recording = recording
        self.tolerance = tolerance
        self.on_divergence = on_divergence
        #: The recorded client events that are matched, in order.
        self.expected: list[RecordedEvent] = []
        self._bursts: list[_Burst] = []
        anchor, anchor_t, previous_t = CONNECTION, 0.0, 0.0
        for event in recording.events:
            if event.direction == "client":
                if event.type not in UNMATCHED and event.type != CLOSE:
                    self.expected.append(event)
                    anchor, anchor_t, previous_t = len(self.expected) - 1, event.t, event.t
                continue
            gap = round(event.t - anchor_t, 9)
            last = self._bursts[-1] if self._bursts else None
            if last is not None and last.anchor == anchor and last.gap == gap:
                self._bursts[-1] = _Burst(anchor, gap, last.spacing, (*last.events, event))
            else:
                self._bursts.append(_Burst(anchor, gap, round(event.t - previous_t, 9), (event,)))
            previous_t = event.t
        self._anchored_at: dict[int, float] = {}
        #: The recorded client events of each type not matched yet, in order.
        self._waiting: dict[str, deque[int]] = {}
        for index, event in enumerate(self.expected):
            self._waiting.setdefault(event.type, deque()).append(index)
        self._matched = 0
        self._next = 0
        self._timer: asyncio.TimerHandle | None = None
        self._last_sent = 0.0
        self._connected_at = 0.0
        self.stopped = False
        #: The divergence, if the application diverged (also under ``on_divergence="raise"``).
        self.divergence: RecordingDivergenceError | None = None
        # What the replayed server said, for the rules and the coverage moments.
        self._active: str | None = None
        self._active_audio = False
        self._known_calls: set[str] = set()
        #: Tool calls the replay asked for and the app has not answered yet.
        self.open_calls: set[str] = set()
        self._audio_ms: dict[str, float] = {}
        self._output_bytes_per_ms = 48.0  # pcm16 at 24 kHz until the session says otherwise

    @property
    def sent(self) -> int:
        """Recorded server events sent so far."""
        return sum(len(burst.events) for burst in self._bursts[: self._next])

    @property
    def matched(self) -> int:
        """Recorded client events the application has sent, matched."""
        return self._matched

    # -- the connection -------------------------------------------------------------

    def connected(self, send: Callable[[str, dict[str, Any]], None], close: Callable[[bool], None], violation: Callable[[RuleViolation], None]) -> None:
        self._send, self._close, self._violation = send, close, violation
        now = asyncio.get_running_loop().time()
        self._connected_at = self._last_sent = now
        self._anchored_at[CONNECTION] = now
        self._arm()

    def stop(self) -> None:
        self.stopped = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- the application's events -----------------------------------------------------

    def client_event(self, event: dict[str, Any]) -> None:
        kind = str(event.get("type", "?"))
        if kind in UNMATCHED or self.stopped:
            return
        self._check_rules(kind, event)
        actual = _asked(kind, event)
        waiting = self._waiting.get(kind)
        index = waiting[0] if waiting else None
        expected = None if index is None else self.expected[index]
        if index is None or expected is None or _asked(expected.type, expected.payload) != actual:
            self._diverged(self._matched if index is None else index, actual, expected)
            return
        waiting.popleft()  # type: ignore[union-attr]
        now = asyncio.get_running_loop().time()
        self._anchored_at[index] = now
        self._matched += 1
        record_event("replay", f"client #{index} {kind} matched line {expected.line} ({(now - self._connected_at) - expected.t:+.3f} s from the recording)")
        self._arm()

    def _diverged(self, index: int, actual: dict[str, Any], expected: RecordedEvent | None) -> None:
        now = asyncio.get_running_loop().time()
        error = RecordingDivergenceError(
            index, now - self._connected_at, actual,
            None if expected is None else _asked(expected.type, expected.payload),
            None if expected is None else expected.t,
            None if expected is None else expected.line,
        )
        self.divergence = error
        self.stop()
        record_event("replay", f"diverged at client #{index}: {actual.get('type')}")
        if self.on_divergence == "end":
            self._close(True)
            return
        core = current_core()
        if core is not None:
            core.abort(error)

    # -- the server's events ------------------------------------------------------------

    def _arm(self) -> None:
        if self._timer is not None or self.stopped or self._next >= len(self._bursts):
            return
        burst = self._bursts[self._next]
        anchored = self._anchored_at.get(burst.anchor)
        if anchored is None:
            return  # waits for the application's event it followed
        self._timer = call_at_gap(anchored, burst.gap, self.tolerance, self._send_next, spacing=burst.spacing, not_before=self._last_sent)

    def _send_next(self) -> None:
        self._timer = None
        if self.stopped:
            return
        burst = self._bursts[self._next]
        self._next += 1
        self._last_sent = asyncio.get_running_loop().time()
        for event in burst.events:
            if event.type == CLOSE:
                self.stop()
                self._close(bool(event.payload.get("clean", True)))
                return
            self._note(event)
            self._send(event.type, _regenerated(event))
        self._arm()

    def _note(self, event: RecordedEvent) -> None:
        payload, kind = event.payload, event.type
        if kind == "response.created":
            self._active, self._active_audio = (payload.get("response") or {}).get("id"), False
        elif kind == "response.done":
            self._active = None
        elif kind in ("session.created", "session.updated"):
            output = ((payload.get("session") or {}).get("audio") or {}).get("output") or {}
            self._output_bytes_per_ms = bytes_per_ms(output.get("format") if isinstance(output, dict) else None)
        elif kind in ("response.output_audio.delta", "response.audio.delta"):
            self._active_audio = True
            count = event.audio_bytes() or 0
            audio_item = str(payload.get("item_id"))
            self._audio_ms[audio_item] = self._audio_ms.get(audio_item, 0.0) + count / self._output_bytes_per_ms
        elif kind in ("response.output_item.added", "response.output_item.done", "conversation.item.added", "conversation.item.done"):
            item: dict[str, Any] = payload.get("item") or {}
            call_id = item.get("call_id")
            if item.get("type") == "function_call" and isinstance(call_id, str):
                if call_id not in self._known_calls:
                    self.open_calls.add(call_id)
                self._known_calls.add(call_id)
        elif kind == "input_audio_buffer.speech_started":
            sometimes(self._active is not None and self._active_audio, BARGE_IN_DURING_AUDIO)

    def _check_rules(self, kind: str, event: dict[str, Any]) -> None:
        """The protocol rules the replay can judge from what it sent (the
        recording decides what the server answers: a broken rule is recorded,
        never answered)."""
        facts: tuple[str, dict[str, Any]] | None = None
        if kind == "response.create":
            facts = ("single_active_response", {"active_id": self._active})
        elif kind == "response.cancel":
            sometimes(bool(self.open_calls), INTERRUPT_DURING_TOOL_CALL)
        elif kind == "conversation.item.create":
            item = event.get("item") or {}
            if item.get("type") == "function_call_output":
                self.open_calls.discard(str(item.get("call_id")))
            facts = ("known_tool_call", {"item": item, "known_calls": self._known_calls})
        elif kind == "conversation.item.truncate" and event.get("item_id") in self._audio_ms:
            facts = ("truncate_within_sent_audio", {"item_id": event["item_id"], "end_ms": int(event.get("audio_end_ms", 0)), "sent_ms": self._audio_ms[event["item_id"]]})
        if facts is None:
            return
        rule, values = facts
        broken = RULES[rule].check(**values)
        if broken is not None:
            self._violation(RuleViolation(rule, asyncio.get_running_loop().time(), event, broken.detail))
