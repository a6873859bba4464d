"""Which realtime features the installed openai-agents release has.

CI runs these tests against the newest release and against 0.13.6; a test of
a feature an old release lacks is skipped there with the reason, never hidden.
"""

from __future__ import annotations

import dataclasses

import pytest
from agents.realtime import model_events
from agents.realtime.model import RealtimeModel
from agents.realtime.model_inputs import RealtimeModelSendInterrupt

HAS_END_OF_STREAM = hasattr(model_events, "RealtimeModelEndOfStreamEvent")
HAS_USAGE_EVENTS = hasattr(model_events, "RealtimeModelUsageEvent")
HAS_TEXT_DELTAS = hasattr(model_events, "RealtimeModelOutputTextDeltaEvent")
HAS_SEND_EVENT_IF = hasattr(RealtimeModel, "send_event_if")
HAS_SCOPED_INTERRUPTS = any(field.name == "response_id" for field in dataclasses.fields(RealtimeModelSendInterrupt))

needs_end_of_stream = pytest.mark.skipif(
    not HAS_END_OF_STREAM, reason="this openai-agents release has no end-of-stream event: a server close does not end session iteration"
)
needs_usage_events = pytest.mark.skipif(not HAS_USAGE_EVENTS, reason="this openai-agents release has no realtime usage events")
needs_guardrail_follow_up = pytest.mark.skipif(
    not HAS_SEND_EVENT_IF, reason="this openai-agents release sends guardrail follow-ups without send_event_if"
)
needs_scoped_interrupts = pytest.mark.skipif(
    not HAS_SCOPED_INTERRUPTS, reason="this openai-agents release has no response-scoped or playback-only interrupts"
)
