"""Priority choices in O(log n): what PCT asks of the options it picks from.

PCT picks, at every choice, the option whose *thread* has the highest
priority. Asked as a plain list of labels, that is a scan of every option:
with 10,000 tasks waking together, 10,000 choices of 10,000 options each.
The backends' option sequences therefore also offer two methods
(:class:`RankedOptions`), which a policy may use when present:

* ``best(priority)``: the index of the option whose thread ranks highest
  (ties: the lowest index), found through a heap kept across choices
  (:class:`RankHeap`) when there are many (the asyncio loop scans a few);
* ``thread(index)``: that option's thread (its label; a task's second
  pending timer is ``label'2``, so its sleep and its timeout rank apart).

The backend may reuse one options object from choice to choice: a policy
reads it while it chooses and keeps no reference to it.

A thread's priority must not change while one of its options is pending,
except the winner's own (PCT lowers only the winner's priority, at a change
point; the winner is then taken, so no pending option carries it).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

Priority = Callable[[str], float]


@runtime_checkable
class RankedOptions(Protocol):
    """Option labels that can also answer "which option ranks highest" quickly."""

    def best(self, priority: Priority) -> int: ...

    def thread(self, index: int) -> str: ...


class ThreadSlots:
    """Thread names for pending options: a label's first pending option is
    ``label``, a second one ``label'2`` and so on, slots reused once free."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}
        self._free: dict[str, list[int]] = {}

    def take(self, label: str) -> tuple[str, int]:
        free = self._free.get(label)
        if free:
            slot = heapq.heappop(free)
            if not free:
                del self._free[label]
        else:
            slot = self._next.get(label, 0) + 1
            self._next[label] = slot
        return (label if slot == 1 else f"{label}'{slot}"), slot

    def release(self, label: str, slot: int) -> None:
        # The usual case, without a list per label: the highest slot is
        # released and none below it is free (every task's one pending timer).
        if slot == self._next[label] and label not in self._free:
            if slot == 1:
                del self._next[label]
            else:
                self._next[label] = slot - 1
            return
        heapq.heappush(self._free.setdefault(label, []), slot)


class RankHeap:
    """The pending options of one kind of choice, by thread priority.

    Options are added with a sort key (their order among the options, which
    ties break on) and their label; they are ranked lazily, the first time a
    policy asks with its priority function, and dropped lazily from the heap
    once :meth:`remove` has said they are gone.
    """

    def __init__(self) -> None:
        self._slots = ThreadSlots()
        #: Pending options not ranked yet (no choice since they were added),
        #: by sort key: an option taken meanwhile is simply deleted.
        self._unranked: dict[Any, str] = {}
        self._heap: list[tuple[float, Any, str]] = []
        #: Each pending option's thread, label and slot, by its sort key.
        self._threads: dict[Any, tuple[str, str, int]] = {}

    def add(self, key: Any, label: str) -> None:
        thread, slot = self._slots.take(label)
        self._threads[key] = (thread, label, slot)
        self._unranked[key] = thread

    def remove(self, key: Any) -> None:
        """The option is taken (or gone): its thread slot is free again."""
        known = self._threads.pop(key, None)
        if known is not None:
            self._slots.release(known[1], known[2])
            if self._unranked:
                self._unranked.pop(key, None)

    def thread(self, key: Any) -> str:
        return self._threads[key][0]

    def top(self, priority: Priority) -> tuple[Any, float] | None:
        """The highest-ranked pending option's sort key and priority (None: none left)."""
        heap = self._heap
        pending = self._threads
        if self._unranked:
            for key, thread in self._unranked.items():
                heapq.heappush(heap, (-priority(thread), key, thread))
            self._unranked.clear()
        elif heap and heap[0][1] in pending:
            return heap[0][1], -heap[0][0]  # the usual case: the top is still pending
        if len(heap) > 2 * len(pending) + 64:
            # Options taken while ranked low never reach the top to be dropped:
            # rebuild now and then, so the heap stays the size of what is pending.
            heap[:] = [entry for entry in heap if entry[1] in pending]
            heapq.heapify(heap)
        while heap and heap[0][1] not in pending:
            heapq.heappop(heap)
        if not heap:
            return None
        best = heap[0]
        return best[1], -best[0]


def scan_best(labels: Sequence[str], priority: Priority) -> tuple[int, str]:
    """The O(n) answer for plain label lists: the best option and its thread
    (a label's second occurrence among the options is ``label'2``, ...)."""
    keys = list(labels)
    if len(set(keys)) < len(keys):
        seen: dict[str, int] = {}
        for index, label in enumerate(keys):
            seen[label] = seen.get(label, 0) + 1
            if seen[label] > 1:
                keys[index] = f"{label}'{seen[label]}"
    chosen = max(range(len(keys)), key=lambda i: priority(keys[i]))
    return chosen, keys[chosen]
