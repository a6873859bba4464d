"""Errors of recorded sessions: a file that is not a recording, and an
application that did something else than the recording did."""

from __future__ import annotations

import os
from typing import Any

from .._kernel.errors import SimulationError, UsageError


class RecordingFormatError(UsageError, ValueError):
    """A file given as a recording is not one, or not this version of one.

    Fields: ``path`` (the file), ``line`` (1-based; 0 for the file as a
    whole, e.g. empty) and ``problem`` (what was wrong there). Record the
    session again with :class:`~agentsim.recording.RecordingRealtimeModel`
    (or :class:`~agentsim.recording.RecordingModel`), or fix the line."""

    def __init__(self, path: str | os.PathLike[str], line: int, problem: str) -> None:
        self.path = os.fspath(path)
        self.line = line
        self.problem = problem
        where = f"{self.path} line {line}" if line else self.path
        super().__init__(
            f"{where}: {problem}. A recording is JSON Lines: a header line (format 'agentsim.recording'), then one event per line "
            "with t (seconds >= 0, never decreasing), direction ('client' or 'server'), type and payload; write one with "
            "agentsim.recording.RecordingRealtimeModel or RecordingModel"
        )


class RecordingDivergenceError(SimulationError):
    """The application sent something else than the recording had at that point.

    A replayed session (``SimulatedRealtimeServer.from_recording``) matches
    the application's client events against the recorded ones, in order (type by type); the
    first mismatch ends the simulation with this error. Fields: ``index``
    (0-based, among the recording's client events that are matched: the
    expected event's, or the count matched so far when the recording has
    no more events of the type),
    ``at`` (virtual seconds since the replay's connection), ``actual`` (the
    event the application sent: type and the fields compared), ``expected``
    (what the recording had there, with its recorded time ``expected_at``;
    None: the recording had no more client events) and ``line`` (the
    recording's line of the expected event).

    The recording is the application's behaviour in the incident: a change
    of the application (a fix) that sends something else is a divergence by
    design; ``from_recording(..., on_divergence="end")`` ends the replay
    there instead (the session closes and ``server.divergence`` holds this
    error), for a test that keeps the fixed behaviour."""

    def __init__(self, index: int, at: float, actual: dict[str, Any], expected: dict[str, Any] | None, expected_at: float | None, line: int | None) -> None:
        self.index = index
        self.at = at
        self.actual = actual
        self.expected = expected
        self.expected_at = expected_at
        self.line = line
        if expected is None:
            had = f"no more {actual.get('type', '?')} events (every one it had was already sent)"
        else:
            had = f"{_shown(expected)} (recorded at {expected_at:.3f} s, line {line})"
        super().__init__(
            f"the application diverged from the recording at client event #{index}, {at:.3f} s into the session: it sent "
            f"{_shown(actual)}, where the recording had {had}. The application behaves differently from the recorded session here: "
            "if that is the change you made, end the replay at the change with from_recording(..., on_divergence='end')"
        )


def _shown(event: dict[str, Any]) -> str:
    kind = event.get("type", "?")
    rest = ", ".join(f"{key}={value!r}" for key, value in event.items() if key != "type")
    return f"{kind} ({rest})" if rest else str(kind)
