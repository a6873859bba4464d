"""Timers with windows: "around 300 ms" is a range of instants, not a point.

A real network reply "around 300 ms" may land before or after a timer "around
320 ms". Drawing one point per delay (jitter) hides that freedom: two draws
almost never fall in the narrow overlap where the order flips, so a race
lives in 1 run of 100. Here a delay is a *windowed timer*
``(earliest, nominal, latest)`` and the order is decided when time must move:

* ``L`` is the smallest ``latest`` of every pending timer (a point timer's
  latest is its deadline): something must fire by then.
* Every timer whose window reaches back to ``L`` (``earliest <= L``) could
  fire next in some real run: they are the *candidates*, and the scheduling
  policy picks one.
* The chosen timer fires at its nominal instant, moved into
  ``[max(now, earliest), L]``: never before its window, never after any
  pending timer's window closes, never backwards.

Candidates are offered in *nominal order* (by nominal instant, then by
scheduling order), so option 0 is what nominal timing does: always taking it
fires every timer at its nominal instant, in the order plain sleeps of the
nominal delays would: when option 0 is taken, every timer nominally due at
that instant (windowed or plain) fires in one batch, as plain timers of one
instant do; an option picked out of nominal order fires alone, first. Point
timers due at ``L`` form one option (their internal order is the backend's
usual tie handling).

Both backends keep their point timers in their own heaps; this module keeps
the windowed ones, ordered by earliest and by latest instant, so the
candidate query and the deadline are range queries: on sortedcontainers'
SortedList once many are pending, on plain sorted lists while few are.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Final, NamedTuple

from sortedcontainers import SortedList



@dataclass(eq=False, slots=True)
class WindowedTimer:
    """One pending windowed timer. Instants are ticks; ``payload`` is the
    backend's (an asyncio timer handle, a trio task); ``label`` names the task
    that set it, for the policy and the trace."""

    earliest: int
    nominal: int
    latest: int
    sequence: int
    payload: Any
    label: str
    pending: bool = field(default=True)
    #: Free for the scheduling policy: what it decided about this timer the
    #: first time it was a candidate (the random policy keeps its draw here).
    policy_state: Any = field(default=None)


class Option(NamedTuple):
    """One way time can move next: fire ``timer`` (None: the point timers due at
    ``at``) at instant ``at``. (A named tuple: one is built per candidate
    every time time moves past a windowed timer.)"""

    at: int
    sequence: int
    timer: WindowedTimer | None
    label: str
    #: Where nominal timing puts it (``at`` is this, moved back to the deadline).
    nominal: int


class OptionLabels(Sequence[str]):
    """The labels of a window choice (the tasks that set the timers), without
    copying; :meth:`option` gives a policy the timing behind each label."""

    __slots__ = ("_options", "deadline")

    def __init__(self, options: list[Option], deadline: int) -> None:
        self._options = options
        #: The instant by which something must fire: the smallest latest
        #: instant of every pending timer (no option fires after it).
        self.deadline = deadline

    def __len__(self) -> int:
        return len(self._options)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        return self._options[index].label

    def __iter__(self) -> Iterator[str]:
        # (Sequence's own __iter__ indexes until IndexError, in Python.)
        return map(_LABEL, self._options)

    @property
    def in_order(self) -> list[Option]:
        """Every option, in nominal order."""
        return self._options

    def option(self, index: int) -> Option:
        """Option ``index``: its firing instant and timer (None for the point
        timers due at the deadline)."""
        return self._options[index]

    def window(self, index: int) -> tuple[int, int, int] | None:
        """Option ``index``'s window, ``(earliest, nominal, latest)`` in ticks
        (for the trace), or None for the point timers due at the deadline."""
        timer = self._options[index].timer
        return None if timer is None else (timer.earliest, timer.nominal, timer.latest)


#: An entry of either order: ``(instant, sequence, timer)``. Sequences are
#: unique, so comparing two entries never reaches the timers.
_Entry = tuple[int, int, WindowedTimer]

#: From this many pending windowed timers on, both orders are SortedLists
#: (O(log n) insertion and removal, range queries by bisection); below
#: ``_LISTED_BELOW`` again, plain lists kept in order with ``bisect``, several
#: times faster for the few a simulation usually has pending (a link's next
#: delivery, a pacer's next chunk).
_SORTED_FROM: Final = 512
_LISTED_BELOW: Final = 128


class WindowedTimers:
    """The pending windowed timers of one simulation."""

    __slots__ = ("_by_earliest", "_by_latest", "count")

    def __init__(self) -> None:
        #: ``(earliest, sequence, timer)`` in order, and ``(latest, sequence, timer)``.
        self._by_earliest: list[_Entry] | SortedList = []
        self._by_latest: list[_Entry] | SortedList = []
        #: How many are pending: a plain attribute, which the backends read
        #: every time the clock may move (``len()`` is two Python calls).
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def add(self, earliest: int, nominal: int, latest: int, sequence: int, payload: Any, label: str) -> WindowedTimer:
        """Add a pending timer; ``earliest <= nominal <= latest`` (ticks)."""
        timer = WindowedTimer(earliest, nominal, latest, sequence, payload, label)
        by_earliest, by_latest = self._by_earliest, self._by_latest
        if by_earliest.__class__ is list:
            insort(by_earliest, (earliest, sequence, timer))
            insort(by_latest, (latest, sequence, timer))
            if self.count >= _SORTED_FROM:
                self._by_earliest, self._by_latest = SortedList(by_earliest), SortedList(by_latest)
        else:
            by_earliest.add((earliest, sequence, timer))  # type: ignore[union-attr]
            by_latest.add((latest, sequence, timer))  # type: ignore[union-attr]
        self.count += 1
        return timer

    def remove(self, timer: WindowedTimer) -> None:
        """Forget a timer (cancelled, or fired); removing twice is harmless."""
        if not timer.pending:
            return
        timer.pending = False
        by_earliest, by_latest = self._by_earliest, self._by_latest
        if by_earliest.__class__ is list:
            # (A key is a prefix of its entry, so it sorts just before it.)
            del by_earliest[bisect_left(by_earliest, (timer.earliest, timer.sequence))]
            del by_latest[bisect_left(by_latest, (timer.latest, timer.sequence))]
        else:
            by_earliest.remove((timer.earliest, timer.sequence, timer))
            by_latest.remove((timer.latest, timer.sequence, timer))
            if self.count <= _LISTED_BELOW:
                self._by_earliest, self._by_latest = list(by_earliest), list(by_latest)
        self.count -= 1

    def options(self, now: int, point_at: int | None, point_sequence: int, point_label: str) -> OptionLabels | None:
        """The ways time can move next, in nominal order, or None when no
        windowed timer is a candidate (the backend then just fires its point
        timers at ``point_at``).

        ``point_at`` is the backend's earliest point deadline (None: none),
        ``point_sequence`` and ``point_label`` those of the timer behind it.
        """
        if not self.count:
            return None
        bound = self._by_latest[0][0]
        if point_at is not None and point_at < bound:
            bound = point_at
        options = []
        # (Iterating the order itself is a C iterator (a SortedList's too): a
        # few timers are candidates at a time, where bisecting costs more
        # than it saves.)
        for earliest, sequence, timer in self._by_earliest:
            if earliest > bound:
                break
            # Nominal order is by the nominal instant (never before now, nor
            # before the window opens); a timer picked out of that order
            # fires by the deadline.
            nominal = timer.nominal
            if nominal < now:
                nominal = now
            options.append(_new_option(Option, (nominal if nominal < bound else bound, sequence, timer, timer.label, nominal)))
        if not options:
            return None
        if point_at == bound:
            options.append(_new_option(Option, (bound, point_sequence, None, point_label, bound)))
        if len(options) > 1:
            options.sort(key=_NOMINAL_ORDER)
        return OptionLabels(options, bound)


#: Nominal order: by nominal instant, then by scheduling order.
_NOMINAL_ORDER: Final = itemgetter(4, 1)
#: An option's label.
_LABEL: Final = itemgetter(3)
#: ``Option(*fields)`` in C: a named tuple's own ``__new__`` is a Python
#: function, and options are built every time time moves past a window.
_new_option: Final = tuple.__new__
