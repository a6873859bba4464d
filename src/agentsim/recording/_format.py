"""The recording file: JSON Lines, a header and then one event per line.

::

    {"format": "agentsim.recording", "version": 1, "kind": "realtime", "layer": "wire", ...}
    {"t": 0.0, "direction": "server", "type": "session.created", "payload": {...}}
    {"t": 0.021, "direction": "client", "type": "session.update", "payload": {...}}

``t`` is seconds since the recorder connected, on the loop's clock
(``loop.time()``: monotonic time in production, virtual time in a
simulation). Credentials never reach the file: any field whose name says it
holds one is replaced by ``"<redacted>"``. Audio is kept as its size
(``{"$audio": {"bytes": n, "ms": d}}``) unless the recorder keeps it in full
(``{"$bytes": "<base64>"}``).
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from .errors import RecordingFormatError

FORMAT = "agentsim.recording"
#: The version this release writes and reads.
VERSION = 1
Direction = Literal["client", "server"]
DIRECTIONS = ("client", "server")
REDACTED = "<redacted>"
#: Field names (lower case, ``-``/``_`` alike) whose values are credentials.
_SECRET_NAMES = frozenset({"api_key", "apikey", "authorization", "client_secret", "secret", "token", "access_token", "password", "bearer", "cookie"})
#: Wire fields that carry base64 audio, by event type.
AUDIO_FIELDS = {
    "input_audio_buffer.append": "audio",
    "response.output_audio.delta": "delta",
    "response.audio.delta": "delta",
}
#: Bytes per millisecond of each wire audio format (pcm16 at 24 kHz: 48).
_BYTES_PER_MS = {"audio/pcm": 48.0, "pcm16": 48.0, "audio/pcmu": 8.0, "audio/pcma": 8.0, "g711_ulaw": 8.0, "g711_alaw": 8.0}


def _is_secret(name: str) -> bool:
    key = name.lower().replace("-", "_")
    return key in _SECRET_NAMES or key.endswith("_api_key") or key.endswith("_secret") or key.endswith("_token")


def scrub(value: Any) -> Any:
    """``value`` (JSON-like) with every credential field replaced by ``"<redacted>"``."""
    if isinstance(value, Mapping):
        return {str(key): (REDACTED if _is_secret(str(key)) and value[key] not in (None, "") else scrub(item)) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(item) for item in value]
    return value


def bytes_per_ms(audio_format: object) -> float:
    """Bytes per millisecond of a session's audio format (a GA format dict,
    a beta name, or None for the default pcm16 at 24 kHz)."""
    if isinstance(audio_format, Mapping):
        audio_format = audio_format.get("type")
    return _BYTES_PER_MS.get(str(audio_format), 48.0) if audio_format else 48.0


def audio_placeholder(data: bytes, per_ms: float, keep: bool) -> dict[str, Any]:
    """How audio is written: its size and duration, or (``keep``) in full."""
    if keep:
        return {"$bytes": base64.b64encode(data).decode("ascii")}
    return {"$audio": {"bytes": len(data), "ms": round(len(data) / per_ms, 3)}}


def placeholder_bytes(value: object) -> int | None:
    """The byte count of an audio placeholder (or of audio kept in full)."""
    if isinstance(value, Mapping):
        if "$audio" in value and isinstance(value["$audio"], Mapping):
            count = value["$audio"].get("bytes")
            return count if isinstance(count, int) else None
        if "$bytes" in value and isinstance(value["$bytes"], str):
            return len(base64.b64decode(value["$bytes"]))
    return None


def jsonable(value: Any, *, keep_audio: bool, per_ms: float = 48.0, depth: int = 0) -> Any:
    """SDK objects (dataclasses, pydantic models, enums, bytes) as JSON values,
    credentials removed; what cannot be written is its type's name."""
    if depth > 12:
        return f"<{type(value).__name__}>"
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return audio_placeholder(bytes(value), per_ms, keep_audio)
    if isinstance(value, enum.Enum):
        return jsonable(value.value, keep_audio=keep_audio, per_ms=per_ms, depth=depth + 1)
    if isinstance(value, Mapping):
        return {str(key): (REDACTED if _is_secret(str(key)) and item not in (None, "") else jsonable(item, keep_audio=keep_audio, per_ms=per_ms, depth=depth + 1)) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(item, keep_audio=keep_audio, per_ms=per_ms, depth=depth + 1) for item in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # pydantic (the openai types)
        try:
            return jsonable(dump(mode="json", exclude_unset=True), keep_audio=keep_audio, per_ms=per_ms, depth=depth + 1)
        except Exception:
            pass
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {item.name: getattr(value, item.name) for item in dataclasses.fields(value)}
        return jsonable(fields, keep_audio=keep_audio, per_ms=per_ms, depth=depth + 1)
    name = getattr(value, "name", None)  # a tool, a handoff, an agent
    if isinstance(name, str):
        return {"$object": type(value).__name__, "name": name}
    return f"<{type(value).__name__}>"


def names_of(values: Any) -> list[str]:
    """Tools, handoffs, guardrails: by name (their code is not data)."""
    return [str(getattr(value, "name", getattr(value, "tool_name", type(value).__name__))) for value in values or ()]


#: Settings that hold code (tools, handoffs, guardrails): written by name.
_CODE_SETTINGS = ("tools", "handoffs", "output_guardrails", "input_guardrails", "prompt")


def settings_summary(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A connection's or a model call's settings as JSON, code by name."""
    plain = {key: (names_of(value) if key in _CODE_SETTINGS and isinstance(value, (list, tuple)) else value) for key, value in settings.items()}
    nested = plain.get("initial_model_settings")
    if isinstance(nested, Mapping):
        plain["initial_model_settings"] = settings_summary(nested)
    result = jsonable(plain, keep_audio=False)
    return result if isinstance(result, dict) else {}


class RecordingWriter:
    """Appends a recording's lines to a file, flushed line by line (a crash
    mid-call still leaves every event before it)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._file: IO[str] | None = None
        self._origin: float | None = None

    @property
    def started(self) -> bool:
        return self._file is not None

    def start(self, header: dict[str, Any], now: float) -> None:
        """Open the file (replacing it) and write ``header``; ``now`` is t=0."""
        self._file = open(self.path, "w", encoding="utf-8")
        self._origin = now
        self._write({"format": FORMAT, "version": VERSION, **scrub(header)})

    def event(self, now: float, direction: Direction, kind: str, payload: dict[str, Any]) -> None:
        if self._file is None or self._origin is None:
            return
        self._write({"t": round(now - self._origin, 6), "direction": direction, "type": kind, "payload": payload})

    def _write(self, line: dict[str, Any]) -> None:
        assert self._file is not None
        self._file.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclass(frozen=True)
class RecordedEvent:
    """One line of a recording: ``t`` (seconds since the connection),
    ``direction`` (``"client"``: the application sent it; ``"server"``: it
    arrived from the model or server), ``type``, ``payload`` (the event as
    JSON, credentials removed, audio as ``{"$audio": {...}}`` unless kept)
    and ``line`` (1-based, in the file)."""

    t: float
    direction: Direction
    type: str
    payload: dict[str, Any]
    line: int

    def __post_init__(self) -> None:
        from .._kernel.errors import SimulationConfigError

        if isinstance(self.t, bool) or not isinstance(self.t, (int, float)) or not self.t >= 0:
            raise SimulationConfigError("t", self.t, "seconds since the connection, a number >= 0")
        if self.direction not in DIRECTIONS:
            raise SimulationConfigError("direction", self.direction, "'client' or 'server'")
        if not isinstance(self.type, str) or not self.type:
            raise SimulationConfigError("type", self.type, "the event's type, a non-empty str")
        if not isinstance(self.payload, dict):
            raise SimulationConfigError("payload", self.payload, "the event as a JSON object (a dict)")
        if isinstance(self.line, bool) or not isinstance(self.line, int) or self.line < 0:
            raise SimulationConfigError("line", self.line, "the 1-based line in the file (0: not from a file)")

    def audio_bytes(self) -> int | None:
        """Bytes of audio this event carries (wire audio events), else None."""
        field = AUDIO_FIELDS.get(self.type)
        if field is None:
            return None
        value = self.payload.get(field)
        return len(base64.b64decode(value)) if isinstance(value, str) else placeholder_bytes(value)


@dataclass(frozen=True)
class Recording:
    """A loaded recording: ``header`` (format version, SDK version, what was
    recorded, the connection's settings without credentials), ``events`` in
    order, ``duration`` (the last event's ``t``) and ``path``.

    ``kind`` is ``"realtime"`` or ``"model"``; ``layer`` is ``"wire"`` (the
    GA JSON events on the WebSocket: replayable by
    ``SimulatedRealtimeServer.from_recording``), ``"model"`` (a realtime
    model's SDK events, where it has no wire) or ``"calls"`` (an agents
    ``Model``'s calls: ``TimedModel.from_recording``)."""

    header: dict[str, Any]
    events: tuple[RecordedEvent, ...]
    path: str = ""
    kind: str = field(init=False)
    layer: str = field(init=False)

    def __post_init__(self) -> None:
        from .._kernel.errors import SimulationConfigError

        if not isinstance(self.header, dict):
            raise SimulationConfigError("header", self.header, "the recording's header, a dict (load() reads one from a file)")
        if not isinstance(self.events, tuple) or not all(isinstance(event, RecordedEvent) for event in self.events):
            raise SimulationConfigError("events", self.events, "a tuple of RecordedEvent, in time order")
        if not isinstance(self.path, str):
            raise SimulationConfigError("path", self.path, "the file it was read from, a str ('' for none)")
        object.__setattr__(self, "kind", str(self.header.get("kind", "")))
        object.__setattr__(self, "layer", str(self.header.get("layer", "")))

    @property
    def duration(self) -> float:
        return self.events[-1].t if self.events else 0.0

    def client_events(self) -> list[RecordedEvent]:
        return [event for event in self.events if event.direction == "client"]

    def server_events(self) -> list[RecordedEvent]:
        return [event for event in self.events if event.direction == "server"]

    def window_around(self, event_type: str | None = None, *, at: float | None = None, margin: float = 1.0, occurrence: int = 0, offset: float = 0.0) -> tuple[float, float]:
        """A window of virtual time around the instant an incident happened in
        this recording, for ``agentsim.explore(..., focus=...)`` of its replay
        (``SimulatedRealtimeServer.from_recording``): ``margin`` seconds
        either side of the ``occurrence``-th event of ``event_type`` (0: the
        first), of the recorded instant ``at``, or, given neither, of the
        recording's end (where a recorded session broke off). Recorded times
        count from the connection: ``offset`` is when the replaying app
        connects in the simulation (0 when it connects first thing)::

            incident = agentsim.recording.load("incident.jsonl")
            agentsim.explore(replay, focus=incident.window_around("input_audio_buffer.speech_started"))
        """
        from .._kernel.errors import SimulationConfigError
        from .._kernel.validation import non_negative

        non_negative("margin", margin, expected="seconds either side of the incident (>= 0)")
        non_negative("offset", offset, expected="when the replaying app connects, in virtual seconds (>= 0)")
        if isinstance(occurrence, bool) or not isinstance(occurrence, int) or occurrence < 0:
            raise SimulationConfigError("occurrence", occurrence, "which event of that type: 0 for the first, 1 for the second, ...")
        if at is not None and event_type is not None:
            raise SimulationConfigError("at", at, "either an event type or an instant, not both")
        if at is not None:
            instant = non_negative("at", at, expected="a recorded instant, seconds since the connection (>= 0)")
        elif event_type is not None:
            found = [event.t for event in self.events if event.type == event_type]
            if len(found) <= occurrence:
                recorded = sorted({event.type for event in self.events})
                raise SimulationConfigError("event_type", event_type, f"a type recorded at least {occurrence + 1} time(s) in {self.path or 'this recording'}; it has {len(found)}. Recorded types: {recorded}")
            instant = found[occurrence]
        else:
            instant = self.duration
        return (max(0.0, offset + instant - margin), offset + instant + margin)

    def __iter__(self) -> Iterator[RecordedEvent]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)


def load(path: str | os.PathLike[str]) -> Recording:
    """Read a recording written by ``RecordingRealtimeModel`` or
    ``RecordingModel``. A file that is not one raises
    :class:`~agentsim.recording.errors.RecordingFormatError` naming the line
    (also a file that cannot be read)::

        recording = agentsim.recording.load("incident.jsonl")
        print(recording.duration, [event.type for event in recording.server_events()][:5])
    """
    if not isinstance(path, (str, os.PathLike)):
        from .._kernel.errors import SimulationConfigError

        raise SimulationConfigError("path", path, "a recording's path (str or os.PathLike)")
    try:
        with open(path, "rb") as file:
            lines = file.read().splitlines()
    except OSError as error:
        raise RecordingFormatError(path, 0, f"the file cannot be read ({error.strerror or error})") from None
    if not lines:
        raise RecordingFormatError(path, 0, "the file is empty (no header line)")
    header = _json_object(path, 1, lines[0])
    if header.get("format") != FORMAT:
        raise RecordingFormatError(path, 1, f"the first line is not a recording's header (format {header.get('format')!r}, expected {FORMAT!r})")
    if header.get("version") != VERSION:
        raise RecordingFormatError(path, 1, f"format version {header.get('version')!r}, where this agentsim reads version {VERSION}")
    events: list[RecordedEvent] = []
    last = 0.0
    for number, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        events.append(_event(path, number, _json_object(path, number, raw), last))
        last = events[-1].t
    return Recording(header, tuple(events), os.fspath(path))


def _json_object(path: str | os.PathLike[str], number: int, raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise RecordingFormatError(path, number, f"not UTF-8 text ({error.reason})") from None
    except json.JSONDecodeError as error:
        raise RecordingFormatError(path, number, f"not JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(value, dict):
        raise RecordingFormatError(path, number, f"a JSON {type(value).__name__}, where a line is an object")
    return value


def _event(path: str | os.PathLike[str], number: int, line: dict[str, Any], last: float) -> RecordedEvent:
    t, direction, kind, payload = line.get("t"), line.get("direction"), line.get("type"), line.get("payload", {})
    if isinstance(t, bool) or not isinstance(t, (int, float)) or t < 0 or t != t:
        raise RecordingFormatError(path, number, f"t is {t!r}, where it is seconds since the connection (a number >= 0)")
    if t < last:
        raise RecordingFormatError(path, number, f"t goes back in time ({t} after {last})")
    if direction not in DIRECTIONS:
        raise RecordingFormatError(path, number, f"direction is {direction!r}, where it is 'client' or 'server'")
    if not isinstance(kind, str) or not kind:
        raise RecordingFormatError(path, number, f"type is {kind!r}, where it is the event's type (a non-empty str)")
    if not isinstance(payload, dict):
        raise RecordingFormatError(path, number, f"payload is a {type(payload).__name__}, where it is the event as a JSON object")
    return RecordedEvent(float(t), direction, kind, payload, number)
