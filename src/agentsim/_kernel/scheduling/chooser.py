"""The one interface between the backends and a scheduling strategy.

A backend never knows which strategy runs. Where a real event loop's order
is open, it asks the run's :class:`Chooser` (``policy.chooser(core)``, made
once per run) and takes the option it returns:

* :meth:`Chooser.timer` (asyncio): continue the ready queue or fire one of
  the timers due now (:class:`~.choice_options.TimerOptions`);
* :meth:`Chooser.window`: which windowed timer, or the first point timer,
  fires next when time must move (``windows.py``);
* :meth:`Chooser.batch` (trio): the order a batch of runnable tasks runs in;
* :meth:`Chooser.eager` (asyncio 3.12+, eager task factory): start a task
  eagerly or defer it;
* :meth:`Chooser.delay` (a policy that times delays): where in its window a
  timer firing alone lands (``delays.py``).

Each method but ``timer`` records the choice on the trace (its compact log,
and the deviation from the stock option if any): that record *is* the
schedule. A timer choice, asked several times per wake-up, is recorded by
the asyncio loop itself, in the same form, for every strategy alike. This base class asks
:meth:`SchedulingPolicy.choose` and checks every answer: it serves any
policy. A built-in strategy subclasses it in its own module with its fast
paths (random draws its picks from a stream, PCT ranks options without
being asked); a new strategy adds a policy, and a chooser if it wants one,
and nothing in the backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from .choice_options import BatchOptions, RankedTimerOptions, TimerOptions
from .delays import NAMED_LANDINGS
from .kinds import ChoiceKind

if TYPE_CHECKING:
    from ..core import SimulationCore
    from .policy import SchedulingPolicy

#: The options of an ``"eager"`` choice: start the task eagerly (option 0, the
#: stock one: the program installed the eager factory) or defer it.
EAGER_OPTIONS: Final = ("eager", "deferred")


class Chooser:
    """One run's scheduling decisions, as the backends ask them.

    Asks the policy's :meth:`~SchedulingPolicy.choose` at each decision;
    an answer that is not an option ends the run with a
    :class:`~agentsim.SimulationConfigError` naming the policy and the
    choice (the stock option is taken meanwhile, so that clean-up runs).
    """

    #: True: the backend offers ranked options (``ranking.py``) and keeps
    #: their heap up to date (PCT's chooser).
    ranks_options: bool = False

    def __init__(self, core: SimulationCore) -> None:
        if not callable(getattr(getattr(core, "policy", None), "choose", None)) or not hasattr(core, "trace"):
            from ..errors import SimulationConfigError

            raise SimulationConfigError(
                "core", core, "the simulation a policy's chooser(core) receives (a Chooser is made by SchedulingPolicy.chooser, not directly)"
            )
        self.policy: SchedulingPolicy = core.policy
        self._core = core
        self._clock = core.clock
        trace = core.trace
        self._trace = trace
        #: The trace's hot-path appends (trace.py, choices.py), bound once.
        self._record_choice = trace.choices.pending.extend
        self._append_event = trace.append_raw
        self._append_deviation = trace.append_deviation
        #: The options of a timer choice (:meth:`timer_options`).
        self._timer_options: TimerOptions | None = None

    # -- what the backends ask -------------------------------------------------

    def choose(self, kind: ChoiceKind, labels: Sequence[str], fifo: int = 0) -> int:
        """One choice among ``labels`` (``fifo``: the stock option), asked of
        the policy, checked and recorded. Doubles' own choices
        (:func:`agentsim.choose`) come here too."""
        chosen = self._checked(kind, labels, fifo)
        self._trace.record_choice(self._clock.ticks, kind, labels, chosen, fifo, len(labels))
        return chosen

    def timer_options(self, due: Any) -> TimerOptions:
        """The options of this run's timer choices over the loop's due list
        ``due``, made once: the loop keeps them up to date (ranked when
        :attr:`ranks_options`), the chooser reads them when it needs labels."""
        self._timer_options = (RankedTimerOptions if self.ranks_options else TimerOptions)(due)
        return self._timer_options

    def timer(self, length: int, fifo: int, unchanged: bool) -> int:
        """Continue the ready queue (option 0, when a batch runs: ``fifo`` is
        then 1, the stock option firing the first due timer) or fire one of
        the due timers; ``length`` options in all (:meth:`timer_options` has
        their labels). ``unchanged``: the options are those of the last timer
        choice, whose answer was to continue (a strategy whose answer depends
        only on the options may then repeat it). Not recorded here: the loop
        records every timer choice. (Counts, not an options object, are
        passed: this question is asked once or twice per wake-up.)"""
        return self._checked("timer", self._current_timer_options(length, fifo).snapshot(), fifo)

    def window(self, options: Sequence[str]) -> int:
        """Which candidate fires next when time must move (``windows.py``:
        options in nominal order, option 0 the stock one)."""
        return self.choose("window", options)

    def batch(self, labels: list[str]) -> list[int]:
        """The order a batch of runnable tasks (``labels``, in trio's batch
        order) runs in: their positions, first to run first. Each pick among
        the tasks not yet ordered is one ``"batch"`` choice (stock: the first)."""
        options = BatchOptions(labels)
        order = []
        while len(options) > 1:
            order.append(options.take(self.choose("batch", options)))
        order.append(options.take(0))
        return order

    def delay(self, options: Sequence[str]) -> int:
        """Where a timer with a window that fires alone lands (only asked of a
        policy that times delays; ``delays.py``): 0 is its nominal instant.
        Recorded with its named options only: enumeration tries those."""
        chosen = self._checked("delay", options, 0)
        self._trace.record_choice(self._clock.ticks, "delay", options, chosen, 0, NAMED_LANDINGS)
        return chosen

    def eager(self) -> bool:
        """Whether a task made under asyncio's eager task factory starts eagerly."""
        return self.choose("eager", EAGER_OPTIONS) == 0

    def _current_timer_options(self, length: int, fifo: int) -> TimerOptions:
        """The timer options, refreshed for the choice being asked."""
        options = self._timer_options
        if options is None:
            raise TypeError("Chooser.timer is asked after timer_options(due)")  # pragma: no cover - the loop's order
        options.fifo, options.length = fifo, length
        return options

    # -- checking ----------------------------------------------------------------

    def _checked(self, kind: ChoiceKind, labels: Sequence[str], fifo: int) -> int:
        """The policy's answer, if it is an option; else the run ends (below)."""
        chosen = self.policy.choose(kind, labels)
        if (chosen.__class__ is not int and (isinstance(chosen, bool) or not isinstance(chosen, int))) or not 0 <= chosen < len(labels):
            chosen = self._rejected(kind, labels, chosen, fifo)
        return chosen

    def _rejected(self, kind: ChoiceKind, labels: Sequence[str], chosen: object, fifo: int) -> int:
        """A policy answered something that is not an option: end the run, take FIFO's."""
        from ..errors import SimulationConfigError

        self._core.abort(
            SimulationConfigError(
                f"{type(self.policy).__name__}.choose",
                chosen,
                f"an index from 0 to {len(labels) - 1} for a {kind!r} choice among {list(labels)[:8]}",
            )
        )
        return fifo


class TrustedChooser(Chooser):
    """The chooser of a built-in policy whose answers are always options:
    asked directly, not checked, and recorded compactly."""

    def choose(self, kind: ChoiceKind, labels: Sequence[str], fifo: int = 0) -> int:
        chosen = self.policy.choose(kind, labels)
        self._trace.record_choice(self._clock.ticks, kind, labels, chosen, fifo, len(labels))
        return chosen

    def delay(self, options: Sequence[str]) -> int:
        chosen = self.policy.choose("delay", options)
        self._trace.record_choice(self._clock.ticks, "delay", options, chosen, 0, NAMED_LANDINGS)
        return chosen

    def timer(self, length: int, fifo: int, unchanged: bool) -> int:
        return self.policy.choose("timer", self._current_timer_options(length, fifo))

    def window(self, options: Sequence[str]) -> int:
        chosen = self.policy.choose("window", options)
        self._trace.record_window_choice(self._clock.ticks, options.in_order, chosen)  # type: ignore[attr-defined]
        return chosen
