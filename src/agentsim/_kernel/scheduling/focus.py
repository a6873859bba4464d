"""Focus: a strategy's deviations confined to a window of virtual time.

A long call's race usually needs a coincidence in one minute of it; a
sweep whose deviations are spread over the whole call spends almost all of
them where they change nothing. :class:`FocusedPolicy` answers every choice
made before its window as a *base* chooser does (the stock order, or a
seeded drift of the prefix), every choice inside ``[start, end)`` as its
*inner* strategy does, and every choice after the window in stock order. So
all the runs of one base share their prefix exactly, which is what lets the
explorer run that prefix once and branch from it (``explore/_forking.py``).

Every focused run is numbered as a ``timed`` replay numbers its choices
(windows explored, lone delays timed: ``windows`` and ``times_delays`` are
always True, whatever the inner strategy), so a branch's schedule is a plain
replay schedule (``"SEED:timed+N=K,..."``) that replays from scratch.

The chooser calls ``on_checkpoint(index, chooser)`` at the first choice
made at or after each of ``checkpoints`` (ticks): the holder process forks
there, and each child takes a window of its own (:meth:`FocusChooser.enter`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .chooser import Chooser, TrustedChooser
from .delays import NAMED_LANDINGS
from .kinds import ChoiceKind, fifo_choice
from .pct import PCTPolicy
from .policy import SchedulingPolicy
from .portfolio import member_for, portfolio_policy
from .random_policy import TimedPolicy
from .replay import ReplayPolicy

if TYPE_CHECKING:
    from ..core import SimulationCore

#: No window: a base run's chooser (its prefix strategy all along).
NO_WINDOW: tuple[int, int] = (2**62, 2**62)


class FocusedPolicy(SchedulingPolicy):
    """``inner``'s choices inside ``window`` (ticks, end excluded), ``base``'s
    before it (None: stock order), stock order after it.

    ``checkpoints`` (ticks, ascending) and ``on_checkpoint`` are the
    branching process's: the chooser calls ``on_checkpoint(index, chooser)``
    at the first choice at or after each checkpoint.
    """

    name = "focus"
    windows = True
    times_delays = True
    #: As ``timed``'s: a branch's schedule replays as a ``timed`` replay does.
    jitter_scale = 1.0
    #: A base run keeps the instants of its moments (``sometimes``): where to branch.
    records_moments = False

    def __init__(
        self,
        inner: SchedulingPolicy | None,
        window: tuple[int, int] = NO_WINDOW,
        *,
        base: SchedulingPolicy | None = None,
        checkpoints: Sequence[int] = (),
        on_checkpoint: Callable[[int, FocusChooser], None] | None = None,
    ) -> None:
        for part in (inner, base):
            if part is not None and (not part.windows or part.fifo):
                from ..errors import SimulationConfigError

                raise SimulationConfigError(
                    "strategy", part, "a strategy that explores windows (random, timed, pct, a policy of your own) inside a focus window"
                )
        self.inner = inner
        self.base = base
        self.window = window
        self.checkpoints = tuple(checkpoints)
        self.on_checkpoint = on_checkpoint
        if inner is not None:
            self.name = inner.name  # type: ignore[misc]  # (a report says which member ran)

    def chooser(self, core: SimulationCore) -> Chooser:
        return FocusChooser(core, self)

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        return fifo_choice(kind, labels)  # (never asked: the chooser answers)


class _CoreFor:
    """The simulation as a part's chooser sees it: its own policy, the rest shared."""

    def __init__(self, core: SimulationCore, policy: SchedulingPolicy) -> None:
        self.policy = policy
        self._core = core

    def __getattr__(self, name: str) -> Any:
        return getattr(self._core, name)


class FocusChooser(TrustedChooser):
    """:class:`FocusedPolicy`'s decisions: each asked of the part whose phase
    the clock is in (base, inner, or stock after the window), recorded as
    that part records it; stock answers are recorded here."""

    #: Ranked options are kept for every run: PCT inside the window reads them,
    #: and whether they are kept must not differ between runs of one prefix.
    ranks_options = True

    def __init__(self, core: SimulationCore, policy: FocusedPolicy) -> None:
        super().__init__(core)
        self._focus = policy
        self._base = self._part(policy.base)
        self._inner: Chooser | None = None
        self._start, self._end = policy.window
        self._checkpoints = list(policy.checkpoints)
        self._next_checkpoint = self._checkpoints[0] if self._checkpoints else math.inf
        #: The first choice inside the window: told as "options changed".
        self._fresh = True

    def _part(self, policy: SchedulingPolicy | None) -> Chooser | None:
        if policy is None:
            return None
        chooser = policy.chooser(_CoreFor(self._core, policy))  # type: ignore[arg-type]
        chooser._timer_options = self._timer_options
        return chooser

    def timer_options(self, due: Any) -> Any:
        options = super().timer_options(due)
        for part in (self._base, self._inner):
            if part is not None:
                part._timer_options = options
        return options

    # -- phases ------------------------------------------------------------------

    def enter(self, window: tuple[int, int], inner: SchedulingPolicy) -> None:
        """Take ``window`` and ``inner`` from now on (a branch, at its checkpoint)."""
        self._focus.inner, self._focus.window = inner, window
        self._focus.name = inner.name  # type: ignore[misc]
        self._start, self._end = window
        self._inner = None
        self._checkpoints.clear()
        self._next_checkpoint = math.inf

    def _phase(self) -> Chooser | None:
        """The part answering now (None: stock order)."""
        ticks = self._clock.ticks
        if ticks >= self._next_checkpoint:
            self._reach_checkpoints(ticks)
        if ticks < self._start:
            return self._base
        if ticks < self._end:
            inner = self._inner
            if inner is None:
                inner = self._inner = self._part(self._focus.inner)
            return inner
        return None

    def _reach_checkpoints(self, ticks: int) -> None:
        hook = self._focus.on_checkpoint
        while self._checkpoints and ticks >= self._checkpoints[0]:
            self._checkpoints.pop(0)
            index = len(self._focus.checkpoints) - len(self._checkpoints) - 1
            if hook is not None:
                hook(index, self)  # a branch returns from it inside its own window
        self._next_checkpoint = self._checkpoints[0] if self._checkpoints else math.inf

    @property
    def choices_made(self) -> int:
        """Choices recorded so far (where a branch's replay picks up)."""
        return len(self._trace.choices)

    # -- what the backends ask -------------------------------------------------

    def choose(self, kind: ChoiceKind, labels: Sequence[str], fifo: int = 0) -> int:
        part = self._phase()
        if part is not None:
            return part.choose(kind, labels, fifo)
        self._trace.record_choice(self._clock.ticks, kind, labels, fifo, fifo, len(labels))
        return fifo

    def timer(self, length: int, fifo: int, unchanged: bool) -> int:
        part = self._phase()
        if part is None:
            return fifo
        if part is self._inner and self._fresh:
            self._fresh, unchanged = False, False
        return part.timer(length, fifo, unchanged)

    def window(self, options: Sequence[str]) -> int:
        part = self._phase()
        if part is not None:
            return part.window(options)
        self._trace.record_window_choice(self._clock.ticks, options.in_order, 0)  # type: ignore[attr-defined]
        return 0

    def batch(self, labels: list[str]) -> list[int]:
        part = self._phase()
        if part is not None:
            return part.batch(labels)
        return super().batch(labels)  # (each pick through choose: stock, recorded)

    def delay(self, options: Sequence[str]) -> int:
        part = self._phase()
        if part is not None and part.policy.times_delays:
            return part.delay(options)
        self._trace.record_choice(self._clock.ticks, "delay", options, 0, 0, NAMED_LANDINGS)
        return 0

    def eager(self) -> bool:
        part = self._phase()
        if part is not None:
            return part.eager()
        return super().eager()


#: PCT's step bound inside a window, drawn per run (as the portfolio draws it).
_PCT_STEPS = (8, 32, 128)


def focus_member(strategy: str | SchedulingPolicy, seed: int, pct_depth: int) -> SchedulingPolicy:
    """The inner strategy of a focused sweep's run ``seed``. The portfolio
    takes its members in its rotation, ``jitter``'s turns going to
    ``timed`` (a focused run explores windows: a drawn point could not be
    kept inside one)."""
    from .registry import make_policy

    if isinstance(strategy, SchedulingPolicy):
        return strategy.for_seed(seed)
    if strategy.startswith("portfolio"):
        if member_for(seed) == "jitter":
            policy: SchedulingPolicy = TimedPolicy(seed)
            policy.name = "portfolio:timed"  # type: ignore[misc]
            return policy
        return portfolio_policy(seed, depth=pct_depth) if strategy == "portfolio" else make_policy(strategy, seed)
    if strategy == "pct":
        steps = _PCT_STEPS[seed % len(_PCT_STEPS)]
        policy = PCTPolicy(seed, depth=pct_depth, steps=steps)
        policy.name = f"pct/{pct_depth}/{steps}"  # type: ignore[misc]
        return policy
    return make_policy(strategy, seed)


def drift_policy(seed: int) -> SchedulingPolicy:
    """A base run's prefix that drifts: ``timed``'s orders and landings, from ``seed``."""
    return TimedPolicy(seed)


def replay_after(deviations: dict[int, int], offset: int) -> SchedulingPolicy:
    """Every choice from a checkpoint on, as a replay of ``deviations``
    (numbered from the run's first choice; ``offset`` choices were made
    before the checkpoint) numbers and takes them."""
    return ReplayPolicy({index - offset: option for index, option in deviations.items()}, times_delays=True)
