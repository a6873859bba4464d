"""Timeline lanes: how the events a double records are drawn.

A double that records its own event kinds (``record_event("server", ...)``)
can ask for them to be drawn in a lane of their own, above the task tracks,
instead of on the track of whichever task recorded them; and for numbers in
their ``key=value`` details to be drawn as counter tracks. The timeline
(``agentsim.timeline``) reads this registry; it knows no double.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Lane:
    """How events of ``kind`` are drawn: in a lane titled ``title``; numbers
    after ``key=`` in their details as counters titled ``counters[key]``."""

    kind: str
    title: str
    counters: dict[str, str] = field(default_factory=dict)


_lanes: dict[str, Lane] = {}


def register_lane(kind: str, title: str, *, counters: dict[str, str] | None = None) -> Lane:
    """Draw events of ``kind`` in a lane of their own (registering twice replaces)::

        register_lane("playback", "playback", counters={"heard_ms": "audio heard (ms)"})
    """
    from .errors import SimulationConfigError

    if not isinstance(kind, str) or not kind:
        raise SimulationConfigError("kind", kind, "the event kind to draw in the lane, a non-empty str")
    if not isinstance(title, str) or not title:
        raise SimulationConfigError("title", title, "the lane's title, a non-empty str")
    if counters is not None and not (isinstance(counters, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in counters.items())):
        raise SimulationConfigError("counters", counters, "a dict of detail key -> counter title (str -> str)")
    lane = _lanes[kind] = Lane(kind, title, dict(counters or {}))
    return lane


def lanes() -> dict[str, Lane]:
    """Every registered lane, by event kind, in registration order."""
    return dict(_lanes)
