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


def merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        merged[key] = merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged


def turn_detection(session: dict[str, Any]) -> dict[str, Any] | None:
    """The session's turn detection (server or semantic VAD), None when it is off."""
    detection = session.get("audio", {}).get("input", {}).get("turn_detection")
    return detection if isinstance(detection, dict) else None
