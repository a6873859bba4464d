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

``fifo`` policies are never asked; backends take their fast path. A policy
object is created per simulation, so it may keep state (PCT does).

Every choice has a *FIFO choice* (:func:`fifo_choice`): the option the stock
order takes. A schedule is therefore "FIFO plus deviations", which is what
:class:`ReplayPolicy` replays and what the explorer's shrinker minimises.
"""

from __future__ import annotations

import itertools
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, NamedTuple

from .errors import SimulationConfigError
from .ranking import Priority, scan_best
from .validation import number, whole

if TYPE_CHECKING:
    from .trace import Trace

ChoiceKind = Literal["timer", "batch", "window", "eager"]

#: Label of option 0 at a ``"timer"`` choice: keep running the ready queue.
CONTINUE: Final = "<ready>"


class FastPaths(NamedTuple):
    """What a strategy lets a backend do itself instead of asking
    :meth:`SchedulingPolicy.choose` for every decision: each fast path is
    defined by the strategy it speeds up (its ``fast_paths()``), and a
    backend binds them once per run without knowing which strategy runs.
    A strategy that offers none (a user's policy) is asked, and checked,
    every time."""

    #: ``choose`` itself when its answers are always options: the backend may
    #: call it directly and record the choice, skipping the checks.
    trusted: Callable[[ChoiceKind, Sequence[str]], int] | None = None
    #: The uniform stream ``"timer"``, ``"batch"`` and ``"eager"`` choices are
    #: drawn from, ``int(u * options)`` (random).
    uniforms: Callable[[], float] | None = None
    #: With ``uniforms``: the target drawn for a windowed timer (see
    #: :func:`eligible_window_options`), for ``"window"`` choices.
    window_target: Callable[[int, int], int | None] | None = None
    #: "Same options, same answer?": asked instead of choosing again while a
    #: batch runs on unchanged options (PCT).
    repeat_last_answer: Callable[[], bool] | None = None
    #: "Is the next choice a plain ranking?" and the priorities to rank by (PCT).
    plain_ranking: tuple[Callable[[], bool], Priority] | None = None
    #: The policy whose ``settled`` may be read instead of asking the two
    #: questions above (their answers are then True): PCT once settled.
    settling: PCTPolicy | None = None


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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not isinstance(cls.__dict__.get("name", getattr(cls, "name", None)), str):
            cls.name = cls.__name__

    def fast_paths(self) -> FastPaths:
        """What a backend may do itself instead of asking :meth:`choose` (see
        :class:`FastPaths`): nothing, unless the strategy says so. A built-in
        strategy offers its own only while ``choose`` (and what the fast path
        stands for) is its own, so a subclass that changes them is asked."""
        return _NO_FAST_PATHS

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


class FifoPolicy(SchedulingPolicy):
    """Stock order and nominal timing: the ready queue in FIFO order,
    same-instant timers in the order they were scheduled, trio batches in
    task-creation order, every delay at its nominal value (no jitter, windows
    fire at their nominal instant). The seed is unused."""

    name = "fifo"
    fifo = True
    jitter_scale = 0.0

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        return 0


class JitterPolicy(SchedulingPolicy):
    """Stock order with seeded delay jitter: each delay known as a range is a
    point drawn from its distribution with the seed. This is sampling timing
    instead of exploring it (a narrow overlap of two windows is hit about as
    often as the draws land in it); it is the baseline the windowed
    strategies are measured against, and what ``"fifo"`` did before windows."""

    name = "jitter"
    fifo = True
    windows = False

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        return 0


class RandomPolicy(SchedulingPolicy):
    """Every open choice drawn from a generator seeded by ``seed``.

    Ties and batches: uniformly, ``int(u * options)`` for the next ``u`` of
    :attr:`uniforms` (drawn in bulk with numpy; the backends read the stream
    themselves on their hot path instead of calling :meth:`choose`). Windows: a uniform pick among the candidates
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

    def __init__(self, seed: int) -> None:
        # A string seed goes through SHA-512, so the stream is the same in every
        # process whatever PYTHONHASHSEED is.
        self._rng = random.Random(f"agentsim:schedule:{seed}")
        self._uniform_seed = self._rng.getrandbits(128)
        #: Uniform floats in [0, 1) for the uniform picks: a ``__next__`` the
        #: backends call directly (one C call per choice, no label list).
        self.uniforms: Callable[[], float] = uniform_stream(self._uniform_seed).__next__

    def for_seed(self, seed: int) -> SchedulingPolicy:
        return RandomPolicy(seed)

    def fast_paths(self) -> FastPaths:
        if type(self).choose is not RandomPolicy.choose:
            return super().fast_paths()
        return FastPaths(trusted=self.choose, uniforms=self.uniforms, window_target=self._target)

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
        if kind != "window" or not hasattr(labels, "in_order"):
            return int(self.uniforms() * len(labels))
        eligible = eligible_window_options(labels, self._target)
        return eligible[int(self.uniforms() * len(eligible))]

    def _target(self, earliest: int, latest: int) -> int | None:
        return None if self._rng.random() < 0.5 else self._rng.randint(earliest, latest)


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


def eligible_window_options(labels: Sequence[str], target: Callable[[int, int], int | None]) -> list[int]:
    """The options of a window choice a *free or sampled* policy may pick.

    Each windowed timer, the first time it is a candidate, asks ``target``
    (its earliest and latest tick): None leaves it free (its order inside the
    overlap is open), an instant makes it sampled (not picked before that
    instant: how lateness past frequent timers is reached). Options not yet
    at their sampled instant are left out; the rest are eligible.
    """
    deadline = labels.deadline  # type: ignore[attr-defined]
    eligible = []
    for index, option in enumerate(labels.in_order):  # type: ignore[attr-defined]
        timer = option.timer
        if timer is not None:
            if timer.policy_state is None:
                sampled = target(timer.earliest, timer.latest)
                timer.policy_state = -1 if sampled is None else sampled
            if timer.policy_state > deadline:
                continue  # sampled, and its instant is later
        eligible.append(index)
    return eligible


def fifo_choice(kind: str, labels: Sequence[str]) -> int:
    """The option FIFO order takes: fire the first due timer; run a batch in
    order; fire the window option of nominal timing (option 0)."""
    if kind == "timer" and len(labels) > 1 and labels[0] == CONTINUE:
        return 1
    return 0


def check_deviations(deviations: object) -> dict[int, int]:
    """A replay's deviations, checked: choice numbers (>= 0) to options (>= 0)."""
    if deviations is None:
        return {}
    if not isinstance(deviations, dict):
        raise SimulationConfigError("deviations", deviations, "a dict of choice number -> option, both whole numbers >= 0 (e.g. {3: 1})")
    for index, option in deviations.items():
        whole("deviations", index, expected="choice numbers that are whole numbers >= 0")
        whole("deviations", option, expected="options that are whole numbers >= 0")
    return dict(deviations)


class ReplayPolicy(SchedulingPolicy):
    """FIFO order except at the numbered choices in ``deviations``.

    ``deviations`` maps a choice number (0-based, in the order the simulation
    asks) to the option to take there; an option that does not exist at that
    point falls back to FIFO. ``ReplayPolicy({})`` is FIFO taken through the
    policy path. ``jitter_scale`` scales seeded delays toward their nominal
    value and ``windows=False`` draws delays instead of windowing them (see
    :class:`SchedulingPolicy`).
    """

    name = "replay"

    def __init__(self, deviations: dict[int, int] | None = None, *, jitter_scale: float = 1.0, windows: bool = True) -> None:
        self.deviations = check_deviations(deviations)
        self.jitter_scale = number("jitter_scale", jitter_scale, expected="a delay jitter scale >= 0 (1: as drawn, 0: nominal)")
        if not isinstance(windows, bool):
            raise SimulationConfigError("windows", windows, "True (delays as windowed timers) or False (drawn points)")
        self.windows = windows
        self._index = 0

    def fast_paths(self) -> FastPaths:
        if type(self).choose is not ReplayPolicy.choose:
            return super().fast_paths()
        return FastPaths(trusted=self.choose)

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        index = self._index
        self._index += 1
        chosen = self.deviations.get(index)
        if chosen is not None and 0 <= chosen < len(labels):
            return chosen
        return fifo_choice(kind, labels)


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
    #: Backends offer this policy's choices as RankedOptions (ranking.py).
    ranks_options = True

    def for_seed(self, seed: int) -> SchedulingPolicy:
        return PCTPolicy(seed, depth=self.depth, steps=self.steps)

    def fast_paths(self) -> FastPaths:
        if type(self).choose is not PCTPolicy.choose:
            return super().fast_paths()
        own_answers = tuple(getattr(type(self), name, None) for name in _PCT_ANSWERS) == _PCT_OWN_ANSWERS
        return FastPaths(
            trusted=self.choose,
            repeat_last_answer=getattr(self, "repeat_last_answer", None),
            plain_ranking=(self.next_choice_is_plain, self.priority),
            # Settled, its answers are rankings alone: readable when it answers as PCT does.
            settling=self if own_answers else None,
        )

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
        #: always say True, so a backend may skip asking them (see
        #: :func:`settling_pct`). (An attribute: read at every step.)
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
        """Asked by a backend that can rank its options itself
        (``RankedOptions.best`` with :attr:`priority`) before :meth:`choose`:
        True if the next choice falls on no change point, so its answer is
        just the best-ranked option; it then counts as a choice made (the
        backend takes that option). False: ask :meth:`choose`."""
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


#: Strategy names accepted by ``strategy=``, each a factory taking the seed.
STRATEGIES: Final = {
    "fifo": lambda seed: FifoPolicy(),
    "jitter": lambda seed: JitterPolicy(),
    "random": RandomPolicy,
    "pct": PCTPolicy,
}


def pct_parameters(strategy: str) -> tuple[int, int] | None:
    """``(depth, steps)`` of a strategy written ``"pct/DEPTH/STEPS"`` (as sweeps
    report PCT, whose parameters are part of the schedule), else None."""
    parts = strategy.split("/")
    if len(parts) != 3 or parts[0] != "pct" or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    depth, steps = int(parts[1]), int(parts[2])
    return (depth, steps) if depth >= 1 and steps >= 1 else None


def is_strategy(strategy: object) -> bool:
    """A strategy name, ``"pct/DEPTH/STEPS"``, or a :class:`SchedulingPolicy`."""
    if isinstance(strategy, SchedulingPolicy):
        return True
    return isinstance(strategy, str) and (strategy in STRATEGIES or pct_parameters(strategy) is not None)


#: What a strategy may be, for error messages.
STRATEGY_EXPECTED: Final = "one of 'fifo', 'jitter', 'random', 'pct', 'pct/DEPTH/STEPS' (as reported by a sweep) or a SchedulingPolicy instance"


def parse_strategy(text: str) -> str:
    """``text`` if it names a strategy: the ``type`` of command-line options
    (argparse's error says what is expected)."""
    import argparse

    if not is_strategy(text):
        raise argparse.ArgumentTypeError(f"{text!r}: expected {STRATEGY_EXPECTED.replace(' or a SchedulingPolicy instance', '')}")
    return text


def make_policy(strategy: str | SchedulingPolicy, seed: int) -> SchedulingPolicy:
    """The policy for ``strategy`` (a name from :data:`STRATEGIES`,
    ``"pct/DEPTH/STEPS"``, or an instance)."""
    from .errors import SimulationConfigError

    if isinstance(strategy, SchedulingPolicy):
        return strategy
    if isinstance(strategy, str):
        parameters = pct_parameters(strategy)
        if parameters is not None:
            return PCTPolicy(seed, depth=parameters[0], steps=parameters[1])
        factory = STRATEGIES.get(strategy)
        if factory is not None:
            return factory(seed)
    raise SimulationConfigError("strategy", strategy, STRATEGY_EXPECTED)


_NO_FAST_PATHS: Final = FastPaths()
