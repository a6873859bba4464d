"""The trace: what happened in a simulation, in order, in bounded memory.

Every event feeds a running hash, so :meth:`Trace.digest` covers the whole run
however long it was; only the last ``keep_last`` events are kept as objects.
An hour-long simulated call therefore costs a fixed amount of trace memory.

Backends record on their hot path, so recording is one ``list.append`` of a
plain tuple (or of a bare label, for task steps); hashing happens in chunks,
in one C pass (``_hash_items``), and the kept window holds
chunks in that compact form, decoded into events only when read.

A policy's deviations are the exception: they go to a side list, marked in
the event list by ``None``. Their numbers are the choice log's (hashed
there), and the rest is words for reports: hashing their ``repr`` cost more
than the whole step they record.
"""

from __future__ import annotations

import io
import pickle
from collections import deque
from itertools import compress, count, repeat
from operator import countOf, is_, is_not
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .choices import KIND_CODES, ChoiceLog, running_hash
from ..clock import TICKS_PER_SECOND
from ..scheduling.windows import Option, OptionLabels

#: Event kinds that record the scheduler's own work and the delays it drew: left
#: out of the order digest (timing, not order).
_SCHEDULER_KINDS: Final = frozenset({"timer", "choice", "jump", "delay"})

#: What the order digest keeps of the compact form: task steps and events.
_ORDER_FORMS: Final = frozenset({str, tuple})

#: How many raw events are buffered before they are hashed and moved to the ring.
_CHUNK: Final = 4096

_WINDOW_CODE: Final = KIND_CODES["window"]


def _window_of(option: Option) -> tuple[int, int, int] | None:
    timer = option.timer
    return None if timer is None else (timer.earliest, timer.nominal, timer.latest)


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
#: A deviation as recorded on the hot path: ``(ticks, "choice", chosen label,
#: kind, chosen, options, fifo, fifo label)``; words only when read.
DeviationRecord = tuple[int, str, str, str, int, int, int, str]
#: A window choice's deviation: the same, then the chosen option's window
#: (``(earliest, nominal, latest)`` ticks, None for the point timers due),
#: the instant it fired, and FIFO's option's window.
Window = tuple[int, int, int] | None
WindowDeviationRecord = tuple[int, str, str, str, int, int, int, str, Window, int, Window]
#: What the hot path appends: an event, a tick, a task step's label, or
#: ``None`` for the next record of the deviation list.
Recorded = RawEvent | int | str | None
Deviation = DeviationRecord | WindowDeviationRecord


class Trace:
    """The ordered record of one simulation.

    ``digest()`` is identical for identical schedules and differs when the
    order of events differs. ``events`` holds the last ``keep_last`` events
    (all of them when ``keep_last`` is None); ``choices`` the choices the
    scheduling policy made (a :class:`~agentsim._kernel.tracing.choices.ChoiceLog`:
    all counted and hashed, the last ``keep_last`` kept, every deviation kept).
    """

    def __init__(self, keep_last: int | None = 50_000) -> None:
        self._pending: list[Recorded] = []
        #: Hot-path recording: append a ``(ticks, kind, task, detail)`` tuple,
        #: or the compact form of task steps: an ``int`` tick, then the label
        #: ``str`` of each task stepped at that tick (no tuple per step).
        #: Whoever uses it calls :meth:`flush_if_large` now and then.
        self.append_raw = self._pending.append
        #: The same for several task steps at once (their labels).
        self.extend_raw = self._pending.extend
        #: A deviation's record, appended here when ``None`` is appended to
        #: the events (two C calls on the hot path; see the module doc).
        self._deviations: list[Deviation] = []
        self.append_deviation = self._deviations.append
        self._keep_last = keep_last
        #: The kept window: chunks of the compact form, each with the tick in
        #: force at its start, its number of events and its deviations' records.
        self._chunks: deque[tuple[int, list[Recorded], int, list[Deviation]]] = deque()
        self._kept = 0
        self._step_ticks = 0
        self._hash = running_hash()
        # The same events without their instants: equal for runs that did the
        # same things in the same order at different times (jitter variants).
        self._order_hash = running_hash()
        self._count = 0
        #: Every policy choice, compactly (see choices.py).
        self.choices = ChoiceLog(keep_last)

    # -- recording (hot path) ------------------------------------------------

    def record(self, ticks: int, kind: str, task: str, detail: str = "") -> None:
        """Append one event. ``task`` is the acting task's name (or ``""``)."""
        pending = self._pending
        pending.append((ticks, kind, task, detail))
        if len(pending) >= _CHUNK:
            self._flush()

    def record_choice(self, ticks: int, kind: str, labels: Sequence[str], chosen: int, fifo: int = 0, options: int | None = None) -> None:
        """Record a decision of the scheduling policy (``fifo``: what FIFO would
        have chosen; ``options``: ``len(labels)``, if the caller knows it).

        Every choice goes to the compact log (and so into the digest); a
        choice that left FIFO order is also an event, for reports (kept in
        the compact form of :func:`deviation_event`, put in words when read)."""
        if labels.__class__ is OptionLabels:  # a window choice: the windows, and when the pick fired
            self.record_window_choice(ticks, labels.in_order, chosen)
            return
        if options is None:
            options = len(labels)
        # (ChoiceLog.append, inlined.)
        self.choices.pending.extend((KIND_CODES.get(kind, 4), options, chosen, fifo))
        if chosen == fifo:
            return
        self._pending.append(None)
        self._deviations.append((ticks, "choice", labels[chosen], kind, chosen, options, fifo, labels[fifo]))

    def record_window_choice(self, ticks: int, options: list[Option], chosen: int) -> None:
        """:meth:`record_choice` of a ``"window"`` choice among ``options`` (in
        nominal order, FIFO's option first), for a backend that asked a
        built-in policy itself: the same records, without the calls."""
        self.choices.pending.extend((_WINDOW_CODE, len(options), chosen, 0))
        if chosen:
            # A deviation: both options' labels and windows (None: the point
            # timers), and when the pick fired.
            picked, stock = options[chosen], options[0]
            self._pending.append(None)
            self._deviations.append((
                ticks, "choice", picked.label, "window", chosen, len(options), 0, stock.label,
                _window_of(picked), picked.at, _window_of(stock),
            ))  # fmt: skip

    def flush_if_large(self) -> None:
        if len(self._pending) >= _CHUNK:
            self._flush()
        if len(self.choices.pending) >= _CHUNK:
            self.choices.settle()

    def _flush(self) -> None:
        pending = self._pending
        if not pending:
            return
        _hash_items(self._hash, pending)
        self._hash.update(b"\x1d")
        # The order is what the program did: its steps and what doubles saw,
        # not the instants nor the scheduler's bookkeeping (timer firings,
        # choices, jumps), which the policy path records and the FIFO path not.
        # Steps and events, without ticks and deviation marks: picked in C;
        # then, if there are events, each without its instant (in Python).
        order: list[object] = list(compress(pending, map(_ORDER_FORMS.__contains__, map(type, pending))))
        if countOf(map(type, order), tuple):
            # Only the events are visited (in Python): the steps, most of a
            # chunk, stay as they are. (None, never in the order, marks the
            # scheduler's events, dropped after.)
            dropped = False
            for index in compress(count(), map(is_, map(type, order), repeat(tuple))):
                event = order[index]
                if event[1] in _SCHEDULER_KINDS:  # type: ignore[index]
                    order[index] = None
                    dropped = True
                else:
                    order[index] = event[1:4]  # type: ignore[index]
            if dropped:
                order = list(compress(order, map(is_not, order, repeat(None))))
        _hash_items(self._order_hash, order)
        self._order_hash.update(b"\x1d")
        events = len(pending) - countOf(map(type, pending), int)
        chunk = pending.copy()
        pending.clear()  # in place: the backends hold its bound append
        deviations = self._deviations.copy()
        self._deviations.clear()
        self._chunks.append((self._step_ticks, chunk, events, deviations))
        self._step_ticks = _last_tick(chunk, self._step_ticks)
        self._count += events
        self._kept += events
        keep_last = self._keep_last
        if keep_last is not None:
            chunks = self._chunks
            while self._kept - chunks[0][2] >= keep_last:
                self._kept -= chunks.popleft()[2]

    # -- reading -------------------------------------------------------------

    def digest(self) -> str:
        """Hex digest of every event so far: equal schedules, equal digests."""
        self._flush()
        whole = self._hash.copy()
        whole.update(self.choices.digest())  # every choice, compactly
        text: str = whole.hexdigest()[:32]
        return text

    def order_digest(self) -> str:
        """Hex digest of every event so far without its instant: equal for runs
        that did the same things in the same order, whatever the timing."""
        self._flush()
        text: str = self._order_hash.copy().hexdigest()[:32]
        return text

    def __len__(self) -> int:
        """Number of events recorded (including those no longer kept)."""
        self._flush()
        return self._count

    @property
    def events(self) -> list[TraceEvent]:
        """The kept events, oldest first, each with its index in the whole run."""
        self._flush()
        raw: list[RawEvent] = []
        for ticks, chunk, _, deviations in self._chunks:
            raw.extend(_decode(chunk, ticks, deviations))
        if self._keep_last is not None and len(raw) > self._keep_last:
            raw = raw[len(raw) - self._keep_last :]
        first = self._count - len(raw)
        return [TraceEvent(first + i, *event) for i, event in enumerate(raw)]

    @property
    def deviations(self) -> Mapping[int, int]:
        """``{choice number: chosen option}`` where the schedule left FIFO
        order: a read-only mapping over the choice log (``dict(...)`` for a copy)."""
        return self.choices.deviations

    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self.events)

    @property
    def dropped(self) -> int:
        """How many early events are no longer kept (still part of the digest)."""
        self._flush()
        kept = self._kept if self._keep_last is None else min(self._kept, self._keep_last)
        return self._count - kept

    def format(self, last: int | None = 50) -> str:
        """A readable timeline of the last ``last`` kept events, in virtual ms."""
        if last is not None and (not isinstance(last, int) or isinstance(last, bool) or last < 0):
            from ..errors import SimulationConfigError

            raise SimulationConfigError("last", last, "how many of the last events to show (a whole number >= 0), or None for all")
        events = self.events
        if last is not None:
            events = events[-last:]
        return "\n".join(event.format() for event in events)


def _hash_items(target: Any, items: list[Any]) -> None:
    """Feed ``items`` to the hash ``target`` by value, in one C pass.

    Pickle without its memo ("fast" mode): equal values give equal bytes
    whatever their identity (with the memo, a label met twice as one object
    would encode unlike two equal copies), and each form (str, int, tuple,
    None) has its own opcode, so the encoding is unambiguous. A third of the
    cost of hashing ``repr`` of each item. An item pickle refuses (a
    double's detail that is not plain data) falls back to its ``repr``.
    """
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=4)
    pickler.fast = True
    try:
        pickler.dump(items)
    except Exception:
        target.update("\x1e".join(map(repr, items)).encode("utf-8", "surrogatepass"))
        return
    target.update(buffer.getbuffer())


def _last_tick(chunk: list[Recorded], ticks: int) -> int:
    """The tick in force after ``chunk`` (its last bare ``int``, else ``ticks``)."""
    for item in reversed(chunk):
        if item.__class__ is int:
            return item
    return ticks


def _decode(chunk: list[Recorded], ticks: int, deviations: list[Deviation]) -> list[RawEvent]:
    """Events of the compact hot-path form: an ``int`` sets the current tick,
    a ``str`` is a task step at that tick, a tuple is a whole event, ``None``
    the next of the chunk's ``deviations``."""
    events: list[RawEvent] = []
    next_deviation = iter(deviations).__next__
    for item in chunk:
        kind = item.__class__
        if kind is str:
            events.append((ticks, "step", item, ""))  # type: ignore[arg-type]
        elif kind is int:
            ticks = item  # type: ignore[assignment]
        elif item is None:
            events.append(deviation_event(next_deviation()))
        else:
            events.append(item)  # type: ignore[arg-type]
    return events



def deviation_event(record: DeviationRecord | WindowDeviationRecord) -> RawEvent:
    """The event a compact deviation record stands for."""
    ticks, kind_of_event, label, kind, chosen, options, fifo, fifo_label = record[:8]
    # ("-": a timer scheduled outside any task.)
    if len(record) == 8:
        return (ticks, kind_of_event, label or "-", f"{kind} {chosen}/{options} (fifo {fifo}: {fifo_label or '-'})")
    window, fired_at, fifo_window = record[8:]
    detail = f"{kind} {chosen}/{options} {_window(window)} fired at {_ms(fired_at)} ms (fifo {fifo}: {fifo_label} {_window(fifo_window)})"
    return (ticks, kind_of_event, label, detail)


def _window(window: Window) -> str:
    """A window for reports: ``"[980.000-1010.000 ms, nominal 995.000]"``, or
    ``"[due]"`` for the point timers due at the deadline."""
    if window is None:
        return "[due]"
    earliest, nominal, latest = window
    return f"[{_ms(earliest)}-{_ms(latest)} ms, nominal {_ms(nominal)}]"


def _ms(ticks: int) -> str:
    return f"{ticks * 1000 / TICKS_PER_SECOND:.3f}"
