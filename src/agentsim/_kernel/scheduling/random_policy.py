"""The random strategy: every open choice drawn from a seeded stream.

Its chooser draws each pick straight from the stream (one C call per
choice, no label list) and records it compactly: the backends' hot path for
this strategy, kept here with the strategy it speeds up.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sortedcontainers import SortedList

from ..validation import number
from .delays import NAMED_LANDINGS, fine_landing
from .choice_options import SORTED_FROM
from .chooser import TrustedChooser
from .policy import ChoiceKind, SchedulingPolicy

if TYPE_CHECKING:
    from ..core import SimulationCore
    from .chooser import Chooser


class RandomPolicy(SchedulingPolicy):
    """Every open choice drawn from a generator seeded by ``seed``.

    Ties and batches: uniformly, ``int(u * options)`` for the next ``u`` of
    :attr:`uniforms` (drawn in bulk with numpy; its chooser, below, reads the stream
    without building the options' labels). Windows: a uniform pick among the candidates
    alone would fire a windowed timer early whenever frequent timers compete
    with it (an audio chunk every 20 ms: surviving ``k`` of them takes ``k``
    coin flips), so a late reply would almost never be late. So each windowed
    timer, the first time it is a candidate, is either *free* (half the time)
    or *sampled*: it gets a target instant drawn uniformly in its window and
    is only eligible from there on. The pick is uniform among the eligible
    options: free timers explore orders inside narrow overlaps, sampled ones
    explore lateness as jitter would.
    """

    name = "random"
    #: Whether a windowed timer first seen among windows only (no point
    #: timer due within the choice) is always free (see ``eligible_window_options``).
    frees_uncontested_windows = False

    def __init__(self, seed: int, *, late: float | None = None) -> None:
        # A string seed goes through SHA-512, so the stream is the same in every
        # process whatever PYTHONHASHSEED is.
        self._rng = random.Random(f"agentsim:schedule:{seed}")
        #: None: lone windows fire at their nominal instant. A number in
        #: [0, 1]: delays are timed too (``"delay"`` choices, delays.py), this
        #: share of them landing late (the ``timed`` strategy).
        self.late = late if late is None else number("late", late, maximum=1.0, expected="a share of delays landing late, 0 to 1")
        self.times_delays = late is not None
        self._uniform_seed = self._rng.getrandbits(128)
        #: Uniform floats in [0, 1) for the uniform picks: a ``__next__`` the
        #: backends call directly (one C call per choice, no label list).
        self.uniforms: Callable[[], float] = uniform_stream(self._uniform_seed).__next__

    def for_seed(self, seed: int) -> SchedulingPolicy:
        return RandomPolicy(seed, late=self.late)

    def chooser(self, core: SimulationCore) -> Chooser:
        if type(self).choose is not RandomPolicy.choose:
            return super().chooser(core)
        return RandomChooser(core, self)

    # A policy template travels to sweep workers by pickle. The stream is a
    # generator, which does not pickle: a copy starts it afresh from its seed
    # (exact for a policy not used yet, which is what templates are).
    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        del state["uniforms"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self.uniforms = uniform_stream(self._uniform_seed).__next__

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        if kind == "delay" and self.late is not None:
            return landing(self.uniforms(), self.late)
        if kind != "window" or not hasattr(labels, "in_order"):
            return int(self.uniforms() * len(labels))
        eligible = eligible_window_options(labels, self._target, free_uncontested=self.frees_uncontested_windows)
        return eligible[int(self.uniforms() * len(eligible))]

    def _target(self, earliest: int, latest: int) -> int | None:
        return None if self._rng.random() < 0.5 else self._rng.randint(earliest, latest)


def landing(u: float, late: float) -> int:
    """The ``"delay"`` option (delays.py) a uniform ``u`` picks when a share
    ``late`` of the delays lands late: at the latest instant (60% of those)
    or anywhere in the window's later half (a fine landing); the rest land at
    their nominal instant (half of them), at the earliest instant (15%) or
    anywhere in the window (35%, a fine landing).

    The fine landings are what make a landing, or a sum of many, reachable
    between the named points: on those alone every turn of a long call
    falls on a grid that a race's narrow band can lie between. (One uniform
    per choice, as before: the fraction is the rest of ``u``.)"""
    if u < late:
        part = u / late
        return 1 if part < 0.6 else fine_landing(0.5 + (part - 0.6) / 0.4 * 0.5)
    rest = (u - late) / (1.0 - late)
    if rest < 0.5:
        return 0
    return 2 if rest < 0.65 else fine_landing((rest - 0.65) / 0.35)


class TimedPolicy(RandomPolicy):
    """Random orders, and random landings: each timer with a window is also
    a ``"delay"`` choice (delays.py), so a reply that must land *late* to
    break the program is tried, not only its order among other timers. The
    share of delays landing late is drawn per run from 0.2, 0.5 and 0.8
    (swarm testing: some runs make most delays late, which a race of two or
    three late steps needs; others few).

    Its window choices differ from ``random``'s in one way: a windowed timer
    first seen among windows only is always free. Sampling its instant is
    how a delay outlasts many frequent point timers (audio frames:
    ``random``'s reason for it); among windows alone it only hides narrow
    overlaps (two overlaps of 5 ms each going the rare way: 1 run in 4,
    not 1 in 16). Lateness where no timer competes is the delay choice's job.
    """

    name = "timed"
    frees_uncontested_windows = True

    def __init__(self, seed: int) -> None:
        super().__init__(seed, late=late_share(seed))

    def for_seed(self, seed: int) -> SchedulingPolicy:
        return TimedPolicy(seed)


def late_share(seed: int) -> float:
    """The share of delays landing late in run ``seed`` (swarm testing: 0.2, 0.5 or 0.8)."""
    return random.Random(f"agentsim:timed:{seed}").choice((0.2, 0.5, 0.8))


def uniform_stream(seed: int, largest_chunk: int = 4096) -> Iterator[float]:
    """Endless uniform floats in [0, 1) from numpy's PCG64 seeded by ``seed``
    (the same on every platform), drawn in chunks that double from 32 up to
    ``largest_chunk``: a short run draws little, a long one in bulk."""
    return itertools.chain.from_iterable(_uniform_chunks(seed, largest_chunk))


def _uniform_chunks(seed: int, largest_chunk: int) -> Iterator[list[float]]:
    import numpy as np

    generator = np.random.Generator(np.random.PCG64(seed))  # made on the first draw
    size = 32
    while True:
        yield generator.random(size).tolist()
        size = min(2 * size, largest_chunk)


def eligible_window_options(labels: Sequence[str], target: Callable[[int, int], int | None], *, free_uncontested: bool = False) -> list[int]:
    """The options of a window choice a *free or sampled* policy may pick.

    Each windowed timer, the first time it is a candidate, asks ``target``
    (its earliest and latest tick): None leaves it free (its order inside the
    overlap is open), an instant makes it sampled (not picked before that
    instant: how lateness past frequent timers is reached). Options not yet
    at their sampled instant are left out; the rest are eligible.
    ``free_uncontested``: a timer first seen where every option is a
    windowed timer (no point timer competes) is free without asking.
    """
    deadline = labels.deadline  # type: ignore[attr-defined]
    in_order = labels.in_order  # type: ignore[attr-defined]
    uncontested = free_uncontested and all(option.timer is not None for option in in_order)
    eligible = []
    for index, option in enumerate(in_order):
        timer = option.timer
        if timer is not None:
            if timer.policy_state is None and uncontested:
                timer.policy_state = -1
            elif timer.policy_state is None:
                sampled = target(timer.earliest, timer.latest)
                timer.policy_state = -1 if sampled is None else sampled
            if timer.policy_state > deadline:
                continue  # sampled, and its instant is later
        eligible.append(index)
    return eligible


class RandomChooser(TrustedChooser):
    """:class:`RandomPolicy`'s decisions: option ``int(u * options)`` for the
    next uniform ``u``, drawn and recorded here, exactly as
    :meth:`RandomPolicy.choose` would pick (the same stream, the same draws)."""

    def __init__(self, core: SimulationCore, policy: RandomPolicy) -> None:
        super().__init__(core)
        self._uniforms = policy.uniforms
        self._target = policy._target
        self._late = policy.late or 0.0
        self._frees_uncontested = policy.frees_uncontested_windows

    def timer(self, length: int, fifo: int, unchanged: bool) -> int:
        return int(self._uniforms() * length)

    def delay(self, options: Sequence[str]) -> int:
        # A share ``late`` of the delays lands late (at the latest instant, or
        # in the later half); the rest at their nominal instant, the earliest, or anywhere.
        chosen = landing(self._uniforms(), self._late)
        self._trace.record_choice(self._clock.ticks, "delay", options, chosen, 0, NAMED_LANDINGS)
        return chosen

    def window(self, options: Sequence[str]) -> int:
        # (A window choice falls on most moves of time on a server's path.)
        eligible = eligible_window_options(options, self._target, free_uncontested=self._frees_uncontested)
        chosen = eligible[int(self._uniforms() * len(eligible))]
        self._trace.record_window_choice(self._clock.ticks, options.in_order, chosen)  # type: ignore[attr-defined]
        return chosen

    def batch(self, labels: list[str]) -> list[int]:
        # The picks BatchOptions would offer, over plain positions: below
        # SORTED_FROM a list (its C memmove beats a SortedList's Python there).
        size = len(labels)
        remaining: Any = list(range(size)) if size < SORTED_FROM else SortedList(range(size))
        uniforms = self._uniforms
        record_choice = self._record_choice
        ticks = self._clock.ticks
        order = []
        for options in range(size, 1, -1):
            chosen = int(uniforms() * options)
            record_choice((1, options, chosen, 0))
            position = remaining.pop(chosen)
            if chosen:
                # (The first remaining is the stock option: unmoved by this pop.)
                self._append_event(None)  # (trace.py: a deviation)
                self._append_deviation((ticks, "choice", labels[position], "batch", chosen, options, 0, labels[remaining[0]]))
            order.append(position)
        order.append(remaining[0])
        return order
