"""The trace: what happened in a simulation, in order, in bounded memory.

Every event feeds a running hash, so :meth:`Trace.digest` covers the whole run
however long it was; only the last ``keep_last`` events are kept as objects.
An hour-long simulated call therefore costs a fixed amount of trace memory.

Backends record on their hot path, so recording is one ``list.append`` of a
plain tuple; hashing and the ring buffer are fed in chunks.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from .clock import TICKS_PER_SECOND

#: Event kinds that record the scheduler's own work and the delays it drew: left
#: out of the order digest (timing, not order).
_SCHEDULER_KINDS: Final = frozenset({"timer", "choice", "jump", "delay"})

#: How many raw events are buffered before they are hashed and moved to the ring.
_CHUNK: Final = 4096


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One event of a simulation.

    ``kind`` is what happened (``"timer"`` a timer fired for ``task``,
    ``"choice"`` the policy chose, ``"spawn"``/``"exit"`` task lifecycle,
    ``"inline"`` thread work run inline, or a kind recorded by a double);
    ``detail`` says the rest in words.
    """

    index: int
    ticks: int
    kind: str
    task: str
    detail: str

    @property
    def time(self) -> float:
        """Virtual time of the event in seconds."""
        return self.ticks / TICKS_PER_SECOND

    def format(self) -> str:
        ms = self.ticks / 1_000_000
        detail = f" {self.detail}" if self.detail else ""
        return f"{ms:12.3f} ms  {self.kind:<7} {self.task}{detail}"


RawEvent = tuple[int, str, str, str]


class Trace:
    """The ordered record of one simulation.

    ``digest()`` is identical for identical schedules and differs when the
    order of events differs. ``events`` holds the last ``keep_last`` events
    (all of them when ``keep_last`` is None); ``choices`` every choice the
    scheduling policy made, as ``(kind, option count, chosen index)``.
    """

    def __init__(self, keep_last: int | None = 50_000) -> None:
        self._pending: list[RawEvent | int | str] = []
        #: Hot-path recording: append a ``(ticks, kind, task, detail)`` tuple,
        #: or the compact form of task steps: an ``int`` tick, then the label
        #: ``str`` of each task stepped at that tick (no tuple per step).
        #: Whoever uses it calls :meth:`flush_if_large` now and then.
        self.append_raw = self._pending.append
        self._step_ticks = 0
        self._ring: deque[RawEvent] = deque(maxlen=keep_last)
        self._hash = hashlib.blake2b(digest_size=16)
        # The same events without their instants: equal for runs that did the
        # same things in the same order at different times (jitter variants).
        self._order_hash = hashlib.blake2b(digest_size=16)
        self._count = 0
        #: Every policy choice: (kind, option count, chosen, the FIFO choice).
        self.choices: list[tuple[str, int, int, int]] = []

    # -- recording (hot path) ------------------------------------------------

    def record(self, ticks: int, kind: str, task: str, detail: str = "") -> None:
        """Append one event. ``task`` is the acting task's name (or ``""``)."""
        pending = self._pending
        pending.append((ticks, kind, task, detail))
        if len(pending) >= _CHUNK:
            self._flush()

    def record_choice(self, ticks: int, kind: str, labels: Sequence[str], chosen: int, fifo: int = 0) -> None:
        """Record a decision of the scheduling policy (``fifo``: what FIFO would have chosen)."""
        self.choices.append((kind, len(labels), chosen, fifo))
        deviation = f" (fifo {fifo}: {labels[fifo]})" if chosen != fifo else ""
        timing = getattr(labels, "timing", None)
        if deviation and timing is not None:  # a window choice: the windows, and when the pick fired
            deviation = f" {timing(chosen)} fired at {labels.fires_at(chosen)} (fifo {fifo}: {labels[fifo]} {timing(fifo)})"  # type: ignore[attr-defined]
        self.record(ticks, "choice", labels[chosen], f"{kind} {chosen}/{len(labels)}{deviation}")

    def flush_if_large(self) -> None:
        if len(self._pending) >= _CHUNK:
            self._flush()

    def _flush(self) -> None:
        pending = self._pending
        if not pending:
            return
        events = self._expand(pending)
        # Unit and record separators cannot appear in names, so the encoding is
        # unambiguous. The instants are hashed apart, as one packed array.
        blob = "\x1e".join(f"{k}\x1f{n}\x1f{d}" for _, k, n, d in events).encode("utf-8", "surrogatepass")
        # The order is what the program did: its steps and what doubles saw,
        # not the scheduler's bookkeeping (timer firings, choices, jumps),
        # which the policy path records and the FIFO fast path does not.
        self._order_hash.update(
            "\x1e".join(f"{k}\x1f{n}\x1f{d}" for _, k, n, d in events if k not in _SCHEDULER_KINDS).encode("utf-8", "surrogatepass")
        )
        self._order_hash.update(b"\x1d")
        self._hash.update(blob)
        self._hash.update(array("q", [event[0] for event in events]).tobytes())
        self._hash.update(b"\x1d")
        self._ring.extend(events)
        self._count += len(events)
        pending.clear()

    def _expand(self, pending: list[RawEvent | int | str]) -> list[RawEvent]:
        """Decode the compact hot-path form: an ``int`` sets the current tick,
        a ``str`` is a task step at that tick, a tuple is a whole event."""
        events: list[RawEvent] = []
        ticks = self._step_ticks
        for item in pending:
            kind = item.__class__
            if kind is str:
                events.append((ticks, "step", item, ""))  # type: ignore[arg-type]
            elif kind is int:
                ticks = item  # type: ignore[assignment]
            else:
                events.append(item)  # type: ignore[arg-type]
        self._step_ticks = ticks
        return events

    # -- reading -------------------------------------------------------------

    def digest(self) -> str:
        """Hex digest of every event so far: equal schedules, equal digests."""
        self._flush()
        return self._hash.copy().hexdigest()

    def order_digest(self) -> str:
        """Hex digest of every event so far without its instant: equal for runs
        that did the same things in the same order, whatever the timing."""
        self._flush()
        return self._order_hash.copy().hexdigest()

    def __len__(self) -> int:
        """Number of events recorded (including those no longer kept)."""
        self._flush()
        return self._count

    @property
    def events(self) -> list[TraceEvent]:
        """The kept events, oldest first, each with its index in the whole run."""
        self._flush()
        first = self._count - len(self._ring)
        return [TraceEvent(first + i, *raw) for i, raw in enumerate(self._ring)]

    @property
    def deviations(self) -> dict[int, int]:
        """``{choice number: chosen option}`` where the schedule left FIFO order."""
        return {i: chosen for i, (_, _, chosen, fifo) in enumerate(self.choices) if chosen != fifo}

    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self.events)

    @property
    def dropped(self) -> int:
        """How many early events are no longer kept (still part of the digest)."""
        self._flush()
        return self._count - len(self._ring)

    def format(self, last: int | None = 50) -> str:
        """A readable timeline of the last ``last`` kept events, in virtual ms."""
        events = self.events
        if last is not None:
            events = events[-last:]
        return "\n".join(event.format() for event in events)
