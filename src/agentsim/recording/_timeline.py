"""A recording as timeline events: the same lines and Perfetto lanes as a
simulation's wire (``agentsim session show FILE``)."""

from __future__ import annotations

from typing import Any

from .._kernel.clock import TICKS_PER_SECOND
from .._kernel.lanes import lanes, register_lane
from .._kernel.tracing.trace import TraceEvent
from ._format import AUDIO_FIELDS, Recording, RecordedEvent, placeholder_bytes

#: The simulated server's lanes (the same kinds), if it has not named them.
_LANES = {"server": "wire: server events (at the client)", "client": "wire: client events (at the server)"}


def _register_lanes() -> None:
    known = lanes()
    for kind, title in _LANES.items():
        if kind not in known:
            register_lane(kind, title)


def _summary(event: RecordedEvent) -> str:
    """A few words on what the event carried: audio, an item, a call, text."""
    payload: dict[str, Any] = event.payload
    field = AUDIO_FIELDS.get(event.type)
    if field is not None:
        value = payload.get(field)
        count = placeholder_bytes(value) if not isinstance(value, str) else len(value) * 3 // 4
        return f"{count or 0} bytes" + (f" of {payload['item_id']}" if payload.get("item_id") else "")
    words = []
    item = payload.get("item") if isinstance(payload.get("item"), dict) else None
    if item:
        words.append(f"{item.get('type', '?')} {item.get('id', '')}".strip())
        if item.get("name"):
            words.append(f"{item['name']}({item.get('arguments', '')})")
        if item.get("role"):
            words.append(str(item["role"]))
    for key in ("item_id", "call_id", "audio_end_ms", "transcript", "delta", "code"):
        if key in payload and not isinstance(payload[key], (dict, list)):
            words.append(f"{key}={payload[key]!r}" if key in ("transcript", "delta") else f"{key}={payload[key]}")
    if isinstance(payload.get("response"), dict):
        response = payload["response"]
        words.append(f"{response.get('id', '')} {response.get('status', '')}".strip())
    if isinstance(payload.get("error"), dict):
        words.append(f"{payload['error'].get('code')}: {payload['error'].get('message')}")
    if "call" in payload:
        words.insert(0, f"call {payload['call']}")
    return " ".join(words)


def timeline_events(recording: Recording) -> list[TraceEvent]:
    """The recording's events as timeline events: kind ``client`` or
    ``server``, the event's type and a summary as the detail."""
    _register_lanes()
    events = []
    for index, event in enumerate(recording.events):
        summary = _summary(event)
        detail = f"{event.type} {summary}" if summary else event.type
        events.append(TraceEvent(index, round(event.t * TICKS_PER_SECOND), event.direction, "", detail))
    return events
