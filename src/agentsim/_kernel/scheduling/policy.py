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
* ``"window"`` (both): time must move and timers with windows (delays known
  only as a range, ``agentsim.timing``) overlap the first deadline: which
  fires next. Options are in nominal order, so option 0 is nominal timing
  (see ``windows.py``).
* ``"eager"`` (asyncio, Python 3.12+): the program installed
  ``asyncio.eager_task_factory``; option 0 starts a new task eagerly (inside
  ``create_task``), option 1 defers its start to the ready queue.
* ``"delay"`` (both, only for a policy whose ``times_delays`` is True): time
  must move and a timer with a window is the only candidate: where in its
  window it lands. Option 0 is its nominal instant; the others its latest,
  its earliest, three quarters and one quarter of the way (``delays.py``).

``fifo`` policies are never asked; backends take their fast path. A policy
object is created per simulation, so it may keep state (PCT does). The
backends never ask the policy itself: they ask its *chooser*
(``chooser.py``), one per run, which a built-in strategy provides from its
own module (its fast paths live there) and which, for any other policy,
asks :meth:`SchedulingPolicy.choose` and checks the answer.

Every choice has a *FIFO choice* (:func:`fifo_choice`): the option the stock
order takes. A schedule is therefore "FIFO plus deviations", which is what
:class:`ReplayPolicy` replays and what the explorer's shrinker minimises.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from .kinds import CONTINUE, ChoiceKind, fifo_choice

__all__ = ["CONTINUE", "ChoiceKind", "SchedulingPolicy", "fifo_choice"]

if TYPE_CHECKING:
    from ..core import SimulationCore
    from ..tracing.trace import Trace
    from .chooser import Chooser

class SchedulingPolicy(ABC):
    """Decides the order of events that the program itself leaves open.

    Subclass it to add a strategy; pass an instance as ``strategy=`` to
    :func:`agentsim.simulate`. ``choose`` gets the kind of choice and one label
    per option (task names, or :data:`CONTINUE`) and returns an option index.
    """

    #: The name recorded in traces and reports (a subclass that sets none is
    #: named after its class).
    name: ClassVar[str]
    #: True if the policy always picks the stock FIFO order; backends then never
    #: call :meth:`choose` and run their fast path.
    fifo: ClassVar[bool] = False
    #: How far seeded delays (``agentsim.timing`` distributions) stray from
    #: their nominal value where a number is drawn: 1 as drawn, 0 no jitter.
    #: The shrinker lowers it.
    jitter_scale: float = 1.0
    #: True: a delay known as a range sleeps on a windowed timer, whose order
    #: against other timers is a ``"window"`` choice. False: a point is drawn
    #: from its distribution with the seed instead (jitter-only sampling).
    windows: bool = True
    #: True: a timer with a window that fires alone (no other candidate when
    #: time moves) is a ``"delay"`` choice: where in its window it lands
    #: (late, early), so that durations are searched and not only orders.
    #: False (the default, and every strategy before it existed): it fires
    #: at its nominal instant.
    times_delays: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not isinstance(cls.__dict__.get("name", getattr(cls, "name", None)), str):
            cls.name = cls.__name__

    def chooser(self, core: SimulationCore) -> Chooser:
        """This policy's decisions for one run, as the backends ask them (see
        :class:`~agentsim.Chooser`). The default asks :meth:`choose` at every
        decision and checks its answers. A built-in strategy returns its own
        chooser (its fast paths live there, with the strategy) while
        ``choose`` is its own, so a subclass that changes it is asked."""
        from .chooser import Chooser

        return Chooser(core)

    def for_seed(self, seed: int) -> SchedulingPolicy:
        """A fresh policy like this one for another run (the explorer calls it
        once per run). The default deep-copies the instance; seeded policies
        override it to reseed."""
        import copy

        return copy.deepcopy(self)

    @abstractmethod
    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        """Return the index of the option to take, ``0 <= index < len(labels)``."""

    def finished(self, trace: Trace, seed: int) -> None:
        """Called once when the simulation has ended (outside it), with its
        trace and seed: a policy may report what it chose. The default does
        nothing."""

