"""The scheduling policy: the one seam where a simulation's order is decided.

A backend asks its policy only where a real event loop's order depends on
things outside the program (network latency, CPU speed, timer slop), so that
every schedule the policy picks is one a real loop could produce:

* ``"timer"`` (asyncio): some timers are due at the current instant and others
  are already runnable. Option 0 runs the next ready callback (the ready
  queue itself is FIFO and is never reordered); option ``i`` fires pending
  timer ``i - 1`` now, appending it to the ready queue. This is the real-world
  freedom: timers "due at the same instant" fire in some order, each at a
  moment that may fall before or after work that other timers triggered.
* ``"batch"`` (trio): which task of trio's runnable batch runs next. Trio
  promises no order within a batch (it reverses batches at random itself).

``fifo`` policies are never asked; backends take their fast path. A policy
object is created per simulation, so it may keep state (PCT does).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar, Final, Literal

ChoiceKind = Literal["timer", "batch"]

#: Label of option 0 at a ``"timer"`` choice: keep running the ready queue.
CONTINUE: Final = "<ready>"


class SchedulingPolicy(ABC):
    """Decides the order of events that the program itself leaves open.

    Subclass it to add a strategy; pass an instance as ``strategy=`` to
    :func:`agentsim.simulate`. ``choose`` gets the kind of choice and one label
    per option (task names, or :data:`CONTINUE`) and returns an option index.
    """

    #: The name recorded in traces and reports.
    name: ClassVar[str]
    #: True if the policy always picks the stock FIFO order; backends then never
    #: call :meth:`choose` and run their fast path.
    fifo: ClassVar[bool] = False

    @abstractmethod
    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        """Return the index of the option to take, ``0 <= index < len(labels)``."""


class FifoPolicy(SchedulingPolicy):
    """Stock order: the ready queue in FIFO order, same-instant timers in the order
    they were scheduled, trio batches in task-creation order. The seed is unused."""

    name = "fifo"
    fifo = True

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        return 0


class RandomPolicy(SchedulingPolicy):
    """Every open choice drawn uniformly from a generator seeded by ``seed``."""

    name = "random"

    def __init__(self, seed: int) -> None:
        # A string seed goes through SHA-512, so the stream is the same in every
        # process whatever PYTHONHASHSEED is.
        self._rng = random.Random(f"agentsim:schedule:{seed}")

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        return self._rng.randrange(len(labels))


#: Strategy names accepted by ``strategy=``, each a factory taking the seed.
STRATEGIES: Final = {
    "fifo": lambda seed: FifoPolicy(),
    "random": RandomPolicy,
}


def make_policy(strategy: str | SchedulingPolicy, seed: int) -> SchedulingPolicy:
    """The policy for ``strategy`` (a name from :data:`STRATEGIES` or an instance)."""
    from .errors import SimulationConfigError

    if isinstance(strategy, SchedulingPolicy):
        return strategy
    factory = STRATEGIES.get(strategy) if isinstance(strategy, str) else None
    if factory is None:
        names = ", ".join(repr(name) for name in STRATEGIES)
        raise SimulationConfigError(
            "strategy", strategy, f"one of {names} or a SchedulingPolicy instance"
        )
    return factory(seed)
