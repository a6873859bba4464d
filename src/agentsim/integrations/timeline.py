"""Timelines: traces as Chrome/Perfetto trace-event JSON, and as text in virtual ms.

``export(trace, path)`` writes the Trace Event Format that ``ui.perfetto.dev``
and ``chrome://tracing`` open: one track per task (a span from spawn to exit,
an instant per step), and instants for timers, choices, cancellations and
everything doubles record (sends, emits, drops, model and TTS calls …).
Timestamps are virtual microseconds. ``render`` turns such a file (or a
trace) back into a readable text timeline in virtual milliseconds.

Doubles register lanes of their own for the event kinds they record
(``agentsim.register_lane``), drawn above the tasks on the same time axis:
the simulated Realtime server's events as the client received them, client
events as the server received them and rule violations; the player's
playback, with counter tracks of the audio actually heard (the call's second
clock) from the ``key=value`` numbers in its details.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from typing import Any

from .._kernel.errors import UsageError
from .._kernel.lanes import Lane, lanes
from .._kernel.tracing.trace import Trace, TraceEvent

PROCESS_ID = 1
_SPAN_KINDS = {"spawn": "B", "exit": "E"}
#: ``key=number`` in a detail: the value of a counter the lane declared.
_NUMBER = re.compile(r"(\w+)=(-?[0-9.]+)")


#: A task's identity in its label: asyncio labels end in ``#N`` (the task's
#: number in the simulation), which a rename (``task.set_name``) keeps.
_TASK_NUMBER = re.compile(r"#(\d+)$")


def _track_key(label: str) -> str:
    """What a task's track is keyed by: its number when the label has one
    (the same task under a new name keeps its track), else its label."""
    number = _TASK_NUMBER.search(label)
    return f"#{number.group(1)}" if number else label


def to_trace_events(events: Iterable[TraceEvent]) -> list[dict[str, Any]]:
    """Trace Event Format records for ``events`` (one thread track per task).

    Tracks are keyed by task identity: a task renamed after it started (the
    SDK names its tasks so) keeps its track, whose name is updated, with a
    ``renamed`` instant at the first event under the new name. Every span is
    balanced on its track: a task still running when the trace ends is
    closed at the trace's last instant, and an exit whose spawn fell out of
    a bounded trace is an instant. Records added for either carry
    ``"synthetic": true`` (:func:`load` leaves them out).
    """
    tracks: dict[str, int] = {}
    names: dict[int, str] = {}
    open_spans: dict[int, int] = {}
    records: list[dict[str, Any]] = []
    registered = lanes()
    order = list(registered)
    last_ts = 0.0

    def name_track(tid: int, name: str) -> None:
        names[tid] = name
        records.append({"ph": "M", "name": "thread_name", "pid": PROCESS_ID, "tid": tid, "args": {"name": name}})

    def track(label: str, key: str, ts: float, lane: Lane | None) -> int:
        name = label or "(scheduler)"
        if key not in tracks:
            tid = tracks[key] = len(tracks) + 1
            name_track(tid, name)
            if lane is not None:  # a new lane: listed above the tasks
                records.append({"ph": "M", "name": "thread_sort_index", "pid": PROCESS_ID, "tid": tid, "args": {"sort_index": -len(order) + order.index(lane.kind)}})
        tid = tracks[key]
        if names[tid] != name:
            previous = names[tid]
            name_track(tid, name)
            records.append({"ph": "i", "s": "t", "pid": PROCESS_ID, "tid": tid, "ts": ts, "cat": "rename", "name": "renamed",
                            "args": {"from": previous, "to": name, "synthetic": True}})
        return tid

    records.append({"ph": "M", "name": "process_name", "pid": PROCESS_ID, "args": {"name": "agentsim (virtual time)"}})
    for event in events:
        lane = registered.get(event.kind)
        ts = last_ts = event.ticks / 1000
        if lane is not None:
            tid = track(lane.title, f"lane:{lane.kind}", ts, lane)
        else:
            tid = track(event.task, _track_key(event.task or "(scheduler)"), ts, None)
        base = {"pid": PROCESS_ID, "tid": tid, "ts": ts, "cat": event.kind}
        args: dict[str, Any] = {"detail": event.detail, "index": event.index, "task": event.task}
        phase = _SPAN_KINDS.get(event.kind)
        if phase == "B":
            open_spans[tid] = open_spans.get(tid, 0) + 1
        elif phase == "E":
            if open_spans.get(tid, 0) == 0:
                phase = None  # its spawn is not in this trace
            else:
                open_spans[tid] -= 1
        if phase is not None:
            records.append({**base, "ph": phase, "name": event.task or "task", "args": args})
            continue
        name = event.detail.split(" ", 1)[0].rstrip(":") if lane is not None and event.detail else event.kind
        records.append({**base, "ph": "i", "s": "t", "name": name, "args": args})
        if lane is not None and lane.counters:
            records.extend(_counters(event, lane))
    for tid, count in open_spans.items():
        for _ in range(count):
            records.append({"ph": "E", "pid": PROCESS_ID, "tid": tid, "ts": last_ts, "cat": "exit", "name": names[tid],
                            "args": {"detail": "still running when the trace ended", "synthetic": True}})
    return records


def _counters(event: TraceEvent, lane: Lane) -> list[dict[str, Any]]:
    values = {key: float(value) for key, value in _NUMBER.findall(event.detail) if key in lane.counters}
    return [{"ph": "C", "pid": PROCESS_ID, "ts": event.ticks / 1000, "name": lane.counters[key], "args": {key: value}} for key, value in values.items()]


class TraceFileError(UsageError):
    """A file given as an exported timeline is not one (not JSON, not a
    trace-event document, a record without its fields). ``path`` names the
    file and ``reason`` what was wrong; export the trace again with
    :func:`export` (or ``agentsim replay ... --export``)."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(f"{self.path} is not an agentsim timeline: {reason}. Write one with agentsim.timeline.export or `agentsim replay ... --export FILE`")


def export(trace: Trace | Sequence[TraceEvent], path: str | os.PathLike[str], *, metadata: dict[str, Any] | None = None, follow_symlinks: bool = True) -> None:
    """Write ``trace`` (a trace, or timeline events such as a recording's)
    as Chrome/Perfetto trace-event JSON to ``path`` (``follow_symlinks=False``:
    refuse a path that is a symbolic link, with ``OSError``, as the command
    line does for the files it writes)."""
    if isinstance(trace, Trace):
        events, facts = trace.events, {"digest": trace.digest(), "events": len(trace), "dropped": trace.dropped}
    else:
        events, facts = list(trace), {"events": len(trace)}
    document = {
        "traceEvents": to_trace_events(events),
        "displayTimeUnit": "ms",
        "otherData": {**facts, **(metadata or {})},
    }
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (0 if follow_symlinks else getattr(os, "O_NOFOLLOW", 0))
    with open(os.open(path, flags, 0o644), "w") as file:
        json.dump(document, file)


def load(path: str | os.PathLike[str]) -> list[TraceEvent]:
    """Events back from a file written by :func:`export`; a file that is not
    one raises :class:`TraceFileError` (an ``OSError`` if it cannot be read)."""
    with open(path, "rb") as file:
        data = file.read()
    try:
        document = json.loads(data)
        return _events_of(document)
    except UnicodeDecodeError as error:
        raise TraceFileError(path, f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise TraceFileError(path, f"not JSON ({error.msg} at line {error.lineno}, column {error.colno})") from None
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise TraceFileError(path, f"not a trace-event document ({type(error).__name__}: {error})") from None


def _events_of(document: Any) -> list[TraceEvent]:
    if not isinstance(document, dict) or not isinstance(document.get("traceEvents"), list):
        raise ValueError("no traceEvents list")
    names = {record["tid"]: record["args"]["name"] for record in document["traceEvents"] if record.get("name") == "thread_name"}
    events: list[TraceEvent] = []
    for record in document["traceEvents"]:
        if record["ph"] in ("M", "C"):
            continue
        args = record.get("args", {})
        if args.get("synthetic"):
            continue
        task = args["task"] if "task" in args else names.get(record["tid"], "")
        events.append(TraceEvent(args.get("index", len(events)), round(record["ts"] * 1000), record["cat"], "" if task == "(scheduler)" else task, args.get("detail", "")))
    return events


def render(source: Trace | Sequence[TraceEvent], *, last: int | None = None, kinds: Iterable[str] | None = None) -> str:
    """A text timeline in virtual milliseconds (optionally the ``last`` events, or some ``kinds``)."""
    events = source.events if isinstance(source, Trace) else list(source)
    if kinds is not None:
        wanted = set(kinds)
        events = [event for event in events if event.kind in wanted]
    if last is not None:
        events = events[-last:]
    return "\n".join(event.format() for event in events)


# What tracebacks, reprs and pickles show: the public module name (see public_names.py).
from .._kernel.public_names import present_as  # noqa: E402

present_as("agentsim.timeline", globals())
