"""The options of a choice, as the backends offer them to a chooser.

A choice's options are a sequence of labels (what a user's policy sees: task
names, or :data:`~agentsim.CONTINUE`). The backends' views also answer PCT's
"which ranks highest" (``ranking.py``) and let the built-in choosers record a
choice without building a list:

* :class:`TimerOptions` (asyncio): "continue the ready queue" (when a batch
  is running: option 0, the stock one is then option 1) and each timer due
  now, without copying the due list at each step; the loop keeps one and
  refreshes ``fifo`` and ``length`` before each choice.
* :class:`RankedTimerOptions`: the same, ranked (PCT).
* :class:`BatchOptions` (trio): the tasks of a batch not yet ordered.

A due timer is the loop's entry ``(tick, sequence, handle, creator)``; its
label is its creator's (``"-"`` for a timer no task set).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Sequence
from operator import itemgetter
from typing import Any, Final

from sortedcontainers import SortedList

from .kinds import CONTINUE
from .ranking import Priority, RankHeap

#: PCT ranks up to this many due timers by a scan, more through a heap.
_SCAN_AT_MOST: Final = 8
#: A due timer's creator (the task that scheduled it, "" for none).
_CREATOR: Final = itemgetter(3)
#: Batches at least this large keep their remaining tasks in a SortedList
#: (O(log n) pops); smaller ones in a plain list, faster at that size.
SORTED_FROM: Final = 64


class TimerOptions(Sequence[str]):
    """The options of an asyncio ``"timer"`` choice: continue the ready queue
    (when ``fifo`` is 1, a batch is running) and each due timer."""

    __slots__ = ("fifo", "due", "length", "heap")

    def __init__(self, due: Any, *, ready: bool = False) -> None:
        #: The stock option: 1 (fire the first due timer) while a batch runs, else 0.
        self.fifo = 1 if ready else 0
        #: The due timers, in (tick, sequence) order (a list or a SortedList).
        self.due = due
        #: How many options (the due list does not change while a chooser decides).
        self.length = len(due) + self.fifo
        #: Unranked options keep no heap (see :class:`RankedTimerOptions`).
        self.heap: RankHeap | None = None

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if index < 0:
            index += self.length
        if self.fifo and index == 0:
            return CONTINUE
        label: str = self.due[index - self.fifo][3] or "-"
        return label

    def snapshot(self) -> TimerOptions:
        """A view of the same options that later refreshes leave alone (what a
        policy that may keep its options is given)."""
        return TimerOptions(self.due, ready=bool(self.fifo))

    def start_heap(self) -> RankHeap:  # pragma: no cover - ranked options only
        raise TypeError("unranked timer options keep no heap")


class RankedTimerOptions(TimerOptions):
    """The same options, also answering PCT's "which ranks highest" (see
    ``ranking.py``), in O(log n) when many timers are due.

    A few due timers are simply scanned: that is cheaper than keeping a heap,
    and it is every instant of a typical program. The heap (``heap``) is kept
    only while many timers are due, or two of them share a label (a task's
    sleep and its timeout: their threads, ``label`` and ``label'2``, then
    depend on the order the slots were taken), and dropped once no timer is
    due; the loop adds and removes options only while it exists. Both ways
    rank every option alike: a heap started from the due list takes its
    slots in due order, which is the order the timers were added (the loop
    starts the heap before an out-of-order timer joins), and two timers of
    one label cannot both be taken before a choice sees them together.
    """

    __slots__ = ()

    def start_heap(self) -> RankHeap:
        """Rank the due timers through a heap from now until none is due."""
        heap = self.heap = RankHeap()
        for entry in self.due:
            heap.add((entry[0], entry[1]), entry[3] or "-")
        return heap

    def best(self, priority: Priority) -> int:
        # (Priorities asked in due order, then CONTINUE's, as the heap asks
        # them; ties go to the lower index.)
        heap = self.heap
        if heap is None:
            due = self.due
            count = len(due)
            # (Continue, or fire the one due timer, is PCT's chooser's own
            # shortcut, pct.py; here it is a scan of one.)
            if count == 2 and (first := due[0][3] or "-") != (second := due[1][3] or "-"):
                value, index = priority(first), 0  # the next most usual: two tasks' timers
                if (other := priority(second)) > value:
                    value, index = other, 1
            else:
                threads = list(map(_CREATOR, due)) if count <= _SCAN_AT_MOST else []
                if "" in threads:
                    threads = [thread or "-" for thread in threads]
                if threads and len(set(threads)) == count:
                    values = list(map(priority, threads))
                    value = max(values)
                    index = values.index(value)
                else:
                    heap = self.start_heap()
        if heap is not None:
            top = heap.top(priority)
            if top is None:
                return 0
            key, value = top
            due = self.due
            index = bisect_left(due, key) if due.__class__ is list else due.bisect_left(key)
        return 0 if self.fifo and priority(CONTINUE) >= value else index + self.fifo

    def thread(self, index: int) -> str:
        if self.fifo and index == 0:
            return CONTINUE
        entry = self.due[index - self.fifo]
        if self.heap is None:
            label: str = entry[3] or "-"  # (scanned: no two due timers share a label)
            return label
        return self.heap.thread((entry[0], entry[1]))

    def snapshot(self) -> TimerOptions:
        return self  # (ranked options are only offered to PCT's chooser, which keeps none)


class BatchOptions(Sequence[str]):
    """The labels of a batch's tasks not yet ordered, as a policy sees them.

    Taking an option is O(log n) for large batches, and PCT's "which ranks
    highest" is a heap over the batch (``ranking.py``): a batch of 10,000
    tasks costs O(n log n) to order, not O(n^2)."""

    __slots__ = ("_labels", "_remaining", "_heap")

    def __init__(self, labels: list[str]) -> None:
        self._labels = labels
        positions = range(len(labels))
        self._remaining: Any = SortedList(positions) if len(labels) >= SORTED_FROM else list(positions)
        self._heap: list[tuple[float, int]] | None = None

    def __len__(self) -> int:
        return len(self._remaining)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        return self._labels[self._remaining[index]]  # type: ignore[no-any-return]

    def take(self, index: int) -> int:
        """Remove option ``index``; returns its position in the batch."""
        return self._remaining.pop(index)  # type: ignore[no-any-return]

    def best(self, priority: Priority) -> int:
        heap = self._heap
        if heap is None:
            # Each task is in a batch once, so its label is its thread.
            heap = self._heap = [(-priority(label), position) for position, label in enumerate(self._labels)]
            heapq.heapify(heap)
        remaining = self._remaining
        while True:
            position = heap[0][1]
            index = _index_in(remaining, position)
            if index is not None:
                return index
            heapq.heappop(heap)  # already taken

    def thread(self, index: int) -> str:
        return self[index]


def _index_in(remaining: Any, position: int) -> int | None:
    """Where ``position`` is among the sorted ``remaining`` positions, or None."""
    index = bisect_left(remaining, position) if isinstance(remaining, list) else remaining.bisect_left(position)
    return index if index < len(remaining) and remaining[index] == position else None
