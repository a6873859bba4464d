"""The policy's choices of one run, kept compactly and in bounded memory.

A random run of a one-hour call makes hundreds of thousands of choices; as
tuples they cost ~47 MB. Here each choice is four integers appended to a
list (its kind, the options it had, the option taken, the stock option),
hashed in chunks as ``int64`` rows (the trace's digest covers that hash) and
then dropped, except:

* the last ``keep_last`` choices, kept for reading (as the event trace keeps
  its last events);
* every *deviation* (a choice that left FIFO order), kept whole: replaying
  and shrinking a schedule need all of them, and they are what a schedule is.

So memory grows with the deviations a run made (three integers each), not
with its choices.
"""

from __future__ import annotations

import hashlib
import struct
from collections import deque
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where rows are made and read, not with the
# module: ``import agentsim`` stays light, and a run without a choice never
# loads it.

#: Choice kinds as small integers (the compact form), and back.
#: (4: a kind a double named itself, agentsim.choose.)
KIND_CODES: Final = {"timer": 0, "batch": 1, "window": 2, "eager": 3, "delay": 5}
_KIND_NAMES: Final = {code: name for name, code in KIND_CODES.items()}


class Deviations(Mapping[int, int]):
    """A run's deviations, ``{choice number: chosen option}``, read from the
    choice log's rows (ascending choice numbers): lookups by binary search,
    iteration in order, no copy."""

    __slots__ = ("_rows",)

    def __init__(self, rows: np.ndarray) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return int(self._rows.shape[0])

    def __iter__(self) -> Iterator[int]:
        return iter(self._rows[:, 0].tolist())

    def __getitem__(self, number: object) -> int:
        import numpy as np  # (see the note at the imports)

        if not isinstance(number, (int, np.integer)) or isinstance(number, bool):
            raise KeyError(number)
        numbers = self._rows[:, 0]
        at = int(np.searchsorted(numbers, number))
        if at < len(numbers) and numbers[at] == number:
            return int(self._rows[at, 1])
        raise KeyError(number)

    def items(self) -> Any:
        # (One pass in C rather than a lookup per key.)
        return dict(self._rows[:, :2].tolist()).items()

    def __repr__(self) -> str:
        shown = dict(self._rows[:20, :2].tolist())
        return f"Deviations({shown}{' …' if len(self) > 20 else ''}, {len(self)} in all)"


def running_hash() -> Any:
    """A hash for run digests: SHA-1, which hardware computes (~2.4x
    blake2b's throughput here); a digest tells runs apart, it guards nothing."""
    return hashlib.sha1(usedforsecurity=False)


class Choice(NamedTuple):
    """One decision of the scheduling policy."""

    kind: str
    #: How many options it had.
    options: int
    #: The option taken.
    chosen: int
    #: The option stock (FIFO) order takes there.
    fifo: int


class ChoiceLog:
    """Every choice of a run: counted and hashed whole, kept in part (see module doc).

    Reads like a sequence of :class:`Choice` over the kept ones (the last
    ``keep_last``); ``len()`` counts them all; :attr:`deviations` and
    :meth:`stock_options` cover the whole run.
    """

    def __init__(self, keep_last: int | None = 50_000) -> None:
        #: The compact form not yet hashed: kind, options, chosen, stock option
        #: per choice. A list, not an array: a backend's ``pending.extend`` of
        #: a 4-tuple is then a C copy, where an array converts item by item.
        self.pending: list[int] = []
        self._keep_last = keep_last
        #: The kept window: ``(number of its first choice, rows)`` chunks of
        #: ``int64`` rows as :attr:`pending` was settled (no tuple per choice).
        self._kept: deque[tuple[int, np.ndarray]] = deque()
        self._kept_rows = 0
        self._count = 0
        #: Every deviation: ``(choice number, chosen, stock option)`` rows, in
        #: numpy chunks as settled (joined when read).
        self._deviation_chunks: list[np.ndarray] = []
        self._deviation_count = 0
        self._hash = running_hash()

    def append(self, kind: str, options: int, chosen: int, fifo: int) -> None:
        """Record one choice. (Backends on their hot path extend :attr:`pending`
        with the four integers themselves: one C call.)"""
        self.pending.extend((KIND_CODES.get(kind, 4), options, chosen, fifo))

    def settle(self) -> None:
        """Hash the choices recorded since the last call, note their deviations
        and move them to the kept window."""
        pending = self.pending
        if not pending:
            return
        # (struct packs the ints in one C call, ~40% cheaper than array("q", ...),
        # which parses each item's argument; numpy then reads the bytes.)
        import numpy as np  # (see the note at the imports)
        rows = np.frombuffer(struct.pack(f"={len(pending)}q", *pending), dtype=np.int64).reshape(-1, 4)
        pending.clear()  # in place: the backends hold its bound extend
        self._hash.update(rows.data)
        # Deviations are found here, vectorised, rather than tested per choice.
        deviating = np.flatnonzero(rows[:, 2] != rows[:, 3])
        if deviating.size:
            # (number, chosen, fifo, options): from (kind, options, chosen, fifo).
            found = rows[deviating][:, [0, 2, 3, 1]]
            found[:, 0] = deviating + self._count
            self._deviation_chunks.append(found)
            self._deviation_count += len(found)
        keep_last = self._keep_last
        if keep_last != 0:
            self._kept.append((self._count, rows))
            self._kept_rows += len(rows)
            if keep_last is not None:
                while self._kept_rows - len(self._kept[0][1]) >= keep_last:
                    self._kept_rows -= len(self._kept.popleft()[1])
        self._count += len(rows)

    def _recent(self) -> np.ndarray:
        """The kept choices' rows, oldest first (the last ``keep_last``)."""
        self.settle()
        import numpy as np  # (see the note at the imports)
        if not self._kept:
            return np.empty((0, 4), dtype=np.int64)
        rows = np.concatenate([chunk for _, chunk in self._kept])
        return rows if self._keep_last is None else rows[-self._keep_last :]

    def digest(self) -> bytes:
        """The hash of every choice so far."""
        self.settle()
        digest: bytes = self._hash.digest()
        return digest

    # -- reading ---------------------------------------------------------------

    def __len__(self) -> int:
        return self._count + len(self.pending) // 4

    @property
    def dropped(self) -> int:
        """How many early choices are no longer kept (still counted, hashed, and
        their deviations kept)."""
        kept = len(self._recent())  # (settles first)
        return self._count - kept

    def __iter__(self) -> Iterator[Choice]:
        for code, options, chosen, fifo in self._recent().tolist():
            yield Choice(_KIND_NAMES.get(code, "other"), options, chosen, fifo)

    def __getitem__(self, index: int) -> Choice:
        """The choice numbered ``index`` in the run (it must still be kept)."""
        recent = self._recent()
        first = self._count - len(recent)
        position = index + self._count if index < 0 else index
        if not first <= position < self._count:
            raise IndexError(f"choice {index} is not kept (kept: {first} to {self._count - 1})")
        code, options, chosen, fifo = recent[position - first].tolist()
        return Choice(_KIND_NAMES.get(code, "other"), options, chosen, fifo)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ChoiceLog):
            return len(self) == len(other) and list(self) == list(other) and self.deviations == other.deviations
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self.settle()
        return f"<ChoiceLog {len(self)} choices, {self._deviation_count} deviations>"

    @property
    def deviations(self) -> Deviations:
        """``{choice number: chosen option}`` where the run left FIFO order (all
        of them): a read-only mapping over the kept rows, so reading it costs
        no dict of a long run's deviations (``dict(...)`` makes one)."""
        return Deviations(self._deviation_rows())

    def stock_options(self) -> dict[int, int]:
        """``{choice number: the FIFO option there}`` at every deviation."""
        return dict(self._deviation_rows()[:, [0, 2]].tolist())

    def option_counts(self) -> dict[int, int]:
        """``{choice number: how many options it had}`` at every deviation."""
        return dict(self._deviation_rows()[:, [0, 3]].tolist())

    def _deviation_rows(self) -> np.ndarray:
        self.settle()
        import numpy as np  # (see the note at the imports)
        if len(self._deviation_chunks) > 1:  # joined once, kept joined
            self._deviation_chunks[:] = [np.concatenate(self._deviation_chunks)]
        return self._deviation_chunks[0] if self._deviation_chunks else np.empty((0, 4), dtype=np.int64)
