"""The built-in strategies by name: what ``strategy=`` accepts.

Adding a strategy: its policy (and chooser, if it has fast paths) in a new
module of this package, plus one entry in :data:`STRATEGIES`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ..errors import SimulationConfigError
from .pct import PCTPolicy
from .policy import SchedulingPolicy
from .portfolio import portfolio_policy
from .random_policy import RandomPolicy, TimedPolicy
from .replay import ReplayPolicy
from .stock import FifoPolicy, JitterPolicy


#: Strategy names accepted by ``strategy=``, each a factory taking the seed.
STRATEGIES: Final[dict[str, Callable[[int], SchedulingPolicy]]] = {
    "portfolio": portfolio_policy,
    "fifo": lambda seed: FifoPolicy(),
    "jitter": lambda seed: JitterPolicy(),
    "random": RandomPolicy,
    "timed": TimedPolicy,
    "pct": PCTPolicy,
}

#: The strategy ``explore``, the pytest marker and the command line use unless told.
DEFAULT_STRATEGY: Final = "portfolio"


def pct_parameters(strategy: str) -> tuple[int, int] | None:
    """``(depth, steps)`` of a strategy written ``"pct/DEPTH/STEPS"`` or
    ``"portfolio/DEPTH/STEPS"`` (as sweeps report them: PCT's parameters are
    part of the schedule), else None."""
    parts = strategy.split("/")
    if len(parts) != 3 or parts[0] not in ("pct", "portfolio") or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    depth, steps = int(parts[1]), int(parts[2])
    return (depth, steps) if depth >= 1 and steps >= 1 else None


def is_strategy(strategy: object) -> bool:
    """A strategy name, ``"pct/DEPTH/STEPS"``, or a :class:`SchedulingPolicy`."""
    if isinstance(strategy, SchedulingPolicy):
        return True
    return isinstance(strategy, str) and (strategy in STRATEGIES or pct_parameters(strategy) is not None)


#: What a strategy may be, for error messages.
STRATEGY_EXPECTED: Final = (
    "one of 'portfolio' (the default), 'fifo', 'jitter', 'random', 'timed', 'pct', 'pct/DEPTH/STEPS' or "
    "'portfolio/DEPTH/STEPS' (as reported by a sweep) or a SchedulingPolicy instance"
)


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
    if isinstance(strategy, SchedulingPolicy):
        return strategy
    if isinstance(strategy, str):
        parameters = pct_parameters(strategy)
        if parameters is not None:
            if strategy.startswith("portfolio"):
                return portfolio_policy(seed, depth=parameters[0], steps=parameters[1])
            return PCTPolicy(seed, depth=parameters[0], steps=parameters[1])
        factory = STRATEGIES.get(strategy)
        if factory is not None:
            return factory(seed)
    raise SimulationConfigError("strategy", strategy, STRATEGY_EXPECTED)


def sized_for_a_sweep(strategy: str | SchedulingPolicy, pct_depth: int, measure: Callable[[], int]) -> str | SchedulingPolicy:
    """``strategy`` as a sweep runs it: PCT's step bound is the choices a run
    makes, so ``"pct"`` becomes ``"pct/DEPTH/STEPS"`` with ``measure()``
    (the nominal run's choice points, at least 8); others (the portfolio
    draws its PCT member's bound per run) are unchanged and ``measure`` is
    not called."""
    if strategy == "pct":
        return f"pct/{pct_depth}/{max(8, measure())}"
    return strategy


def replay_policy(deviations: dict[int, int], *, jitter_scale: float, windows: bool, times_delays: bool = False, name: str | None = None) -> SchedulingPolicy:
    """The policy replaying a schedule's deviations (``name``: the strategy
    it stands for in reports, e.g. ``"fifo"`` for the nominal run)."""
    policy = ReplayPolicy(deviations, jitter_scale=jitter_scale, windows=windows, times_delays=times_delays)
    if name is not None:
        policy.name = name  # type: ignore[misc]
    return policy
