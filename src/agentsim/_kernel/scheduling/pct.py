"""PCT: probabilistic concurrency testing, with its chooser.

The chooser answers most timer choices without calling :meth:`PCTPolicy.choose`:
off the change points an answer is the best-ranked option, found by the
backend's ranked options (``choice_options.py``, ``ranking.py``) in O(log n);
while a batch runs on unchanged options the last answer stands. Schedules
are the same as asking ``choose`` every time (tests/kernel/test_ranking.py
turns each shortcut off and compares).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ..validation import whole
from .chooser import TrustedChooser
from .kinds import CONTINUE
from .policy import ChoiceKind, SchedulingPolicy
from .ranking import Priority, scan_best

if TYPE_CHECKING:
    from ..core import SimulationCore
    from .chooser import Chooser


class PCTPolicy(SchedulingPolicy):
    """Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010).

    Every "thread" — the task behind an option's label, with "keep running
    the ready queue" as one more — gets a random priority of at least
    ``depth``; at each choice the highest-priority option wins. At
    ``depth - 1`` change points, drawn uniformly among the first ``steps``
    choices, the winner's priority drops below all others. A bug that needs
    ``d`` ordering constraints among ``n`` threads is found with probability
    at least ``1 / (n * steps**(d-1))`` per run; ``steps`` should bound the
    choices a run makes (the explorer measures it).
    """

    name = "pct"

    def for_seed(self, seed: int) -> SchedulingPolicy:
        return PCTPolicy(seed, depth=self.depth, steps=self.steps)

    def chooser(self, core: SimulationCore) -> Chooser:
        # Its chooser answers as choose, repeat_last_answer and
        # next_choice_is_plain do: only while all three are PCT's own.
        if tuple(getattr(type(self), name, None) for name in _PCT_ANSWERS) != _PCT_OWN_ANSWERS:
            return super().chooser(core)
        return PCTChooser(core, self)

    def __init__(self, seed: int, *, depth: int = 3, steps: int = 64) -> None:
        self._rng = random.Random(f"agentsim:pct:{whole('seed', seed, minimum=-(2**63))}")
        self.depth = whole("depth", depth, minimum=1, expected="PCT's depth d >= 1 (the ordering constraints a bug needs)")
        self.steps = max(1, whole("steps", steps, expected="PCT's step bound >= 0 (the choices a run makes)"))
        #: Each thread's priority, drawn the first time it is asked
        #: (``__getitem__``: a C call for known threads).
        self._priorities = _Priorities(self._rng, depth)
        self._change_points = sorted(self._rng.sample(range(1, self.steps + 1), k=min(depth - 1, self.steps)))
        self._step = 0
        self._changes = 0
        #: How many change points had passed when the last answer was chosen.
        self._answered_at_change = 0
        #: True once every change point has passed and an answer was ranked
        #: since the last: from then on every answer is the best-ranked option
        #: and :meth:`repeat_last_answer` and :meth:`next_choice_is_plain`
        #: always say True, so its chooser may skip asking them. (An attribute: read at every step.)
        self.settled = not self._change_points

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        self._step += 1
        # Two options of one task (its sleep and its timeout) are two threads
        # here: with one priority, the first would always win. The backends'
        # options find the best in O(log n) (ranking.py); plain lists are scanned.
        best = getattr(labels, "best", None)  # a RankedOptions (cheaper than isinstance)
        if best is None:
            chosen, winner = scan_best(labels, self._priorities.__getitem__)
        else:
            chosen = best(self._priorities.__getitem__)
        self._answered_at_change = self._changes
        if self._change_points and self._step == self._change_points[0]:
            # The i-th change point drops the winner to priority depth - i.
            if best is not None:
                winner = labels.thread(chosen)  # type: ignore[attr-defined]
            self._change_points.pop(0)
            self._changes += 1
            self._priorities[winner] = self.depth - self._changes
        else:
            self.settled = not self._change_points
        return chosen

    def repeat_last_answer(self) -> bool:
        """Asked instead of :meth:`choose` when the options of the last choice
        come again unchanged (the backend vouches for it): True if the answer
        is the same, which then counts as a choice made; False to be asked.

        PCT's answer depends only on the options' priorities, which change
        only at a change point: so unless one passed since that answer or
        falls on this step, it stands. (A batch of a thousand steps, each
        one "continue", then costs one ranking, not a thousand.)
        """
        step = self._step + 1
        if self._changes != self._answered_at_change or (self._change_points and step == self._change_points[0]):
            return False
        self._step = step
        return True

    def next_choice_is_plain(self) -> bool:
        """Asked by a chooser that can rank its options itself
        (``RankedOptions.best`` with :attr:`priority`) before :meth:`choose`:
        True if the next choice falls on no change point, so its answer is
        just the best-ranked option; it then counts as a choice made (the
        chooser takes that option). False: ask :meth:`choose`."""
        step = self._step + 1
        if self._change_points and step == self._change_points[0]:
            return False
        self._step = step
        self._answered_at_change = self._changes
        self.settled = not self._change_points
        return True

    @property
    def priority(self) -> Priority:
        """A thread's priority (drawn the first time it is asked)."""
        return self._priorities.__getitem__


class _Priorities(dict[str, float]):
    """PCT's thread priorities: a fresh thread gets a random rank among the
    high priorities (at least ``depth``) when first looked up."""

    def __init__(self, rng: random.Random, depth: int) -> None:
        super().__init__()
        self._rng = rng
        self._depth = depth

    def __missing__(self, thread: str) -> float:
        priority = self[thread] = self._depth + self._rng.random() * 1_000_000
        return priority


#: What PCT's ``settling`` fast path requires to be PCT's own (a policy whose
#: class replaces or drops one of them is asked as it says).
_PCT_ANSWERS: Final = ("choose", "repeat_last_answer", "next_choice_is_plain")
_PCT_OWN_ANSWERS: Final = tuple(getattr(PCTPolicy, name) for name in _PCT_ANSWERS)


class PCTChooser(TrustedChooser):
    """:class:`PCTPolicy`'s decisions, with its shortcuts (see the module doc)."""

    ranks_options = True
    #: The shortcuts, each a switch so that a test can show it changes no schedule.
    repeats_answers = True
    ranks_plain_choices = True
    ranks_one_due_here = True
    trusts_settling = True

    def __init__(self, core: SimulationCore, policy: PCTPolicy) -> None:
        super().__init__(core)
        self._pct = policy
        self._priority = policy.priority

    def timer(self, length: int, fifo: int, unchanged: bool) -> int:
        pct = self._pct
        settled = pct.settled and self.trusts_settling
        if unchanged and self.repeats_answers and fifo and (settled or pct.repeat_last_answer()):
            return 0  # the same options, the same answer
        if self.ranks_plain_choices and (settled or pct.next_choice_is_plain()):
            # Off the change points: the best-ranked option.
            options = self._timer_options
            if fifo and length == 2 and options.heap is None and self.ranks_one_due_here:  # type: ignore[union-attr]
                # The usual question (continue, or fire the one due timer),
                # ranked as best() ranks it: its label's priority asked
                # first, ties to continuing. Half the choices of a wake-up.
                priority = self._priority
                value = priority(options.due[0][3] or "-")  # type: ignore[union-attr]
                return 0 if priority(CONTINUE) >= value else 1
            return self._current_timer_options(length, fifo).best(self._priority)  # type: ignore[attr-defined,no-any-return]
        return pct.choose("timer", self._current_timer_options(length, fifo))
