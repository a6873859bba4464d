"""The server's wire log, bounded: the last events in full, counts of all.

A long call sends hundreds of thousands of events an hour (audio chunks,
transcript deltas, the microphone's appends). Keeping a tuple for each grew
a call's memory by ~45 MB per simulated hour; the log keeps the last
``limit`` (what a failing test's report and a timeline show) and counts every
event by direction and type.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator, Sequence
from typing import overload

from ..._kernel.errors import SimulationConfigError

#: Wire events kept in full by default: about 10 MB, several minutes of a busy call.
DEFAULT_LIMIT = 100_000

Entry = tuple[float, str, str]


class WireLog(Sequence[Entry]):
    """``(virtual time, "client"|"server", event type)`` of the last ``limit``
    wire events, in order; ``total`` counts every event ever logged,
    ``counts[(direction, type)]`` each kind, ``dropped`` those no longer kept."""

    def __init__(self, limit: int | None = DEFAULT_LIMIT) -> None:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise SimulationConfigError("log_limit", limit, "how many wire events to keep in full (an int >= 1), or None for all")
        self.limit = limit
        self._entries: deque[Entry] = deque(maxlen=limit)
        self.total = 0
        self.counts: Counter[tuple[str, str]] = Counter()

    def append(self, entry: Entry) -> None:
        self._entries.append(entry)
        self.total += 1
        self.counts[entry[1], entry[2]] += 1

    @property
    def dropped(self) -> int:
        return self.total - len(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries)

    @overload
    def __getitem__(self, index: int) -> Entry: ...
    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...
    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, slice):
            return list(self._entries)[index]
        return self._entries[index]

    def __eq__(self, other: object) -> bool:
        return list(self._entries) == list(other) if isinstance(other, (list, WireLog)) else NotImplemented

    __hash__ = None  # type: ignore[assignment]
