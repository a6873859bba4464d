"""The server's session configuration, as ``session.update`` changes it."""

from __future__ import annotations

from typing import Any

DEFAULT_SESSION: dict[str, Any] = {
    "type": "realtime",
    "model": "gpt-realtime",
    "output_modalities": ["audio"],
    "audio": {
        "input": {
            "format": {"type": "audio/pcm", "rate": 24000},
            "turn_detection": {"type": "server_vad", "interrupt_response": True, "create_response": True},
        },
        "output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "alloy"},
    },
}


#: The objects ``session.update`` merges into (their fields are updated one by
#: one); any other field, objects included (``turn_detection``,
#: ``transcription``, ``format``, ``tools`` …), is replaced whole, and null
#: clears it, as the API reference says: "Only the fields that are present in
#: the session.update are updated … To clear a field like turn_detection,
#: pass null."
CONTAINERS: dict[str, Any] = {"audio": {"input": {}, "output": {}}}


def apply_update(session: dict[str, Any], update: dict[str, Any], containers: dict[str, Any] = CONTAINERS) -> dict[str, Any]:
    """``session`` after a ``session.update`` of ``update``."""
    updated = dict(session)
    for key, value in update.items():
        inner = containers.get(key)
        if inner is not None and isinstance(value, dict) and isinstance(updated.get(key), dict):
            updated[key] = apply_update(updated[key], value, inner)
        else:
            updated[key] = value
    return updated


def merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        merged[key] = merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged


def turn_detection(session: dict[str, Any]) -> dict[str, Any] | None:
    """The session's turn detection (server or semantic VAD), None when it is off."""
    detection = session.get("audio", {}).get("input", {}).get("turn_detection")
    return detection if isinstance(detection, dict) else None
