"""What a recording's header says about where it was made."""

from __future__ import annotations

from importlib import metadata
from typing import Any

from .._kernel.core import current_core


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def header(kind: str, layer: str, model: object, *, keep_audio: bool, config: dict[str, Any]) -> dict[str, Any]:
    """The header fields every recording has (``config``: already JSON and credential-free)."""
    from .. import __version__

    return {
        "kind": kind,
        "layer": layer,
        "model": type(model).__name__,
        "sdk_version": _version("openai-agents"),
        "agentsim_version": __version__,
        # Virtual seconds inside a simulation, the loop's monotonic clock outside.
        "clock": "virtual" if current_core() is not None else "monotonic",
        "audio": "full" if keep_audio else "duration",
        "config": config,
    }
