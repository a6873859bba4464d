"""Builders for the GA Realtime server events the simulated server sends.

Plain dicts in the API's JSON shape (``tests/realtime_server`` validates every
builder against the ``openai`` package's ``RealtimeServerEvent`` union, and
the real adapter validates them again when it parses them).
"""

from __future__ import annotations

import base64
import functools
import itertools
import json
from typing import Any

Event = dict[str, Any]


class EventIds:
    """Deterministic ids for events, items and responses (per connection)."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def next(self, prefix: str) -> str:
        return f"{prefix}_sim{next(self._counter):06d}"


def session_event(kind: str, event_id: str, session: dict[str, Any]) -> Event:
    return {"type": kind, "event_id": event_id, "session": session}


def error(event_id: str, code: str, message: str, client_event_id: str | None = None) -> Event:
    body: dict[str, Any] = {"type": "invalid_request_error", "code": code, "message": message}
    if client_event_id is not None:
        body["event_id"] = client_event_id
    return {"type": "error", "event_id": event_id, "error": body}


def item_event(kind: str, event_id: str, item: dict[str, Any], previous_item_id: str | None = None) -> Event:
    event: Event = {"type": kind, "event_id": event_id, "item": item}
    if kind == "conversation.item.added" or kind == "conversation.item.created":
        event["previous_item_id"] = previous_item_id
    return event


def response(response_id: str, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"id": response_id, "object": "realtime.response", "status": status, "output": output}
    if usage is not None:
        body["usage"] = usage
    return body


def usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens, "total_tokens": input_tokens + output_tokens}


def response_event(kind: str, event_id: str, body: dict[str, Any]) -> Event:
    return {"type": kind, "event_id": event_id, "response": body}


def assistant_item(item_id: str, status: str, transcript: str | None, *, text: bool = False) -> dict[str, Any]:
    """An assistant message; its content is ``transcript`` as audio, or as text."""
    if transcript is None:
        content: list[dict[str, Any]] = []
    else:
        content = [{"type": "output_text", "text": transcript}] if text else [{"type": "output_audio", "transcript": transcript}]
    return {"id": item_id, "object": "realtime.item", "type": "message", "role": "assistant", "status": status, "content": content}


def function_call_item(item_id: str, call_id: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {"id": item_id, "object": "realtime.item", "type": "function_call", "call_id": call_id, "name": name, "arguments": arguments, "status": status}


def user_audio_item(item_id: str, transcript: str | None) -> dict[str, Any]:
    return {
        "id": item_id,
        "object": "realtime.item",
        "type": "message",
        "role": "user",
        "status": "completed",
        "content": [{"type": "input_audio", "transcript": transcript}],
    }


def output_item(kind: str, event_id: str, response_id: str, item: dict[str, Any]) -> Event:
    return {"type": kind, "event_id": event_id, "response_id": response_id, "output_index": 0, "item": item}


def content_event(kind: str, event_id: str, response_id: str, item_id: str, **fields: Any) -> Event:
    """A response event about content part 0 of output item 0: every delta and
    ``.done`` of an assistant message (audio, transcript, text, the part)."""
    return {"type": kind, "event_id": event_id, "response_id": response_id, "item_id": item_id, "output_index": 0, "content_index": 0, **fields}


def content_part(kind: str, event_id: str, response_id: str, item_id: str, transcript: str, *, text: bool = False) -> Event:
    part = {"type": "text", "text": transcript} if text else {"type": "audio", "transcript": transcript}
    return content_event(kind, event_id, response_id, item_id, part=part)


def audio_delta(event_id: str, response_id: str, item_id: str, chunk: bytes) -> Event:
    return content_event("response.output_audio.delta", event_id, response_id, item_id, delta=_base64(chunk))


def audio_delta_message(event_id: str, response_id: str, item_id: str, chunk: bytes) -> str:
    """``json.dumps(audio_delta(...))``, without the JSON encoder scanning the
    audio: base64 needs no escaping, so the delta is spliced in after the
    other fields (it is the last key). Most of what a long call sends is
    audio: encoding it char by char was a sixth of a long call's instructions."""
    head = json.dumps(content_event("response.output_audio.delta", event_id, response_id, item_id))
    return f'{head[:-1]}, "delta": "{_base64(chunk)}"}}'


@functools.lru_cache(maxsize=256)
def _base64(chunk: bytes) -> str:
    # Cached: a scripted answer's audio is a periodic tone (audio/pcm.py), so
    # its full chunks repeat (25 distinct 40 ms chunks of a 220 Hz tone).
    return base64.b64encode(chunk).decode("ascii")


def arguments_done(event_id: str, response_id: str, item_id: str, call_id: str, name: str, arguments: str) -> Event:
    return {
        "type": "response.function_call_arguments.done",
        "event_id": event_id,
        "response_id": response_id,
        "item_id": item_id,
        "output_index": 0,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }


def speech_started(event_id: str, item_id: str, audio_start_ms: int) -> Event:
    return {"type": "input_audio_buffer.speech_started", "event_id": event_id, "item_id": item_id, "audio_start_ms": audio_start_ms}


def speech_stopped(event_id: str, item_id: str, audio_end_ms: int) -> Event:
    return {"type": "input_audio_buffer.speech_stopped", "event_id": event_id, "item_id": item_id, "audio_end_ms": audio_end_ms}


def committed(event_id: str, item_id: str, previous_item_id: str | None) -> Event:
    return {"type": "input_audio_buffer.committed", "event_id": event_id, "item_id": item_id, "previous_item_id": previous_item_id}


def transcription_completed(event_id: str, item_id: str, transcript: str) -> Event:
    return {
        "type": "conversation.item.input_audio_transcription.completed",
        "event_id": event_id,
        "item_id": item_id,
        "content_index": 0,
        "transcript": transcript,
        "usage": {"type": "duration", "seconds": 1.0},
    }


def transcription_delta(event_id: str, item_id: str, delta: str) -> Event:
    return {"type": "conversation.item.input_audio_transcription.delta", "event_id": event_id, "item_id": item_id, "content_index": 0, "delta": delta}


def timeout_triggered(event_id: str, item_id: str, audio_start_ms: int, audio_end_ms: int) -> Event:
    return {"type": "input_audio_buffer.timeout_triggered", "event_id": event_id, "item_id": item_id, "audio_start_ms": audio_start_ms, "audio_end_ms": audio_end_ms}


def rate_limits(event_id: str, requests_remaining: int, tokens_remaining: int) -> Event:
    """``rate_limits.updated``: what the service reports at the start of each response."""
    return {
        "type": "rate_limits.updated",
        "event_id": event_id,
        "rate_limits": [
            {"name": "requests", "limit": REQUESTS_PER_MINUTE, "remaining": max(0, requests_remaining), "reset_seconds": 60.0},
            {"name": "tokens", "limit": TOKENS_PER_MINUTE, "remaining": max(0, tokens_remaining), "reset_seconds": 60.0},
        ],
    }


#: The limits ``rate_limits.updated`` reports (a tier's per-minute limits).
REQUESTS_PER_MINUTE = 5_000
TOKENS_PER_MINUTE = 800_000


def truncated(event_id: str, item_id: str, content_index: int, audio_end_ms: int) -> Event:
    return {"type": "conversation.item.truncated", "event_id": event_id, "item_id": item_id, "content_index": content_index, "audio_end_ms": audio_end_ms}
