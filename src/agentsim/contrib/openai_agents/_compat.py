"""The few places where supported openai-agents releases differ at the realtime model boundary.

The transport supports the whole range declared in pyproject.toml (see
docs/realtime.md); older releases lack ``RealtimeModelEndOfStreamEvent``,
response ids on turn events, and the scoped interrupt fields.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agents.realtime import model_events

#: ``RealtimeModelEndOfStreamEvent``, or None on releases without it (their
#: sessions do not end iteration on a server close).
END_OF_STREAM: Any = getattr(model_events, "RealtimeModelEndOfStreamEvent", None)


def _accepts(cls: type, field: str) -> bool:
    return any(f.name == field for f in dataclasses.fields(cls))


_TURN_EVENTS_HAVE_IDS = _accepts(model_events.RealtimeModelTurnStartedEvent, "response_id")


def turn_started(response_id: str) -> model_events.RealtimeModelTurnStartedEvent:
    """A ``turn_started`` event carrying ``response_id`` where the SDK supports it."""
    if _TURN_EVENTS_HAVE_IDS:
        return model_events.RealtimeModelTurnStartedEvent(response_id=response_id)
    return model_events.RealtimeModelTurnStartedEvent()


def turn_ended(response_id: str) -> model_events.RealtimeModelTurnEndedEvent:
    """A ``turn_ended`` event carrying ``response_id`` where the SDK supports it."""
    if _TURN_EVENTS_HAVE_IDS:
        return model_events.RealtimeModelTurnEndedEvent(response_id=response_id)
    return model_events.RealtimeModelTurnEndedEvent()


def interrupt_scope(event: Any) -> tuple[bool, str | None]:
    """``(playback_only, response_id)`` of an interrupt (False/None on old releases)."""
    return bool(getattr(event, "playback_only", False)), getattr(event, "response_id", None)
