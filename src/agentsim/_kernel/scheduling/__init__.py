"""Scheduling: every decision about the order of events, in one package.

* ``policy.py``: :class:`SchedulingPolicy`, the seam a strategy implements;
* ``chooser.py``: :class:`Chooser`, the one interface the backends call;
* ``choice_options.py``, ``ranking.py``, ``windows.py``: the options of a
  choice as the backends offer them (due timers, batches, windowed timers);
* one module per built-in strategy (``stock.py``: fifo and jitter,
  ``random_policy.py``: random and timed, ``pct.py``, ``replay.py``,
  ``portfolio.py``: the default, one of the others per run), each with its
  chooser; ``delays.py``: where a timed delay may land;
* ``registry.py``: the strategies by name.

The backends import this package's interface only and never name a
strategy (tests/api/test_layers.py checks it).
"""

from .chooser import EAGER_OPTIONS, Chooser, TrustedChooser
from .pct import PCTChooser, PCTPolicy
from .policy import CONTINUE, ChoiceKind, SchedulingPolicy, fifo_choice
from .portfolio import member_for, portfolio_policy
from .random_policy import RandomChooser, RandomPolicy, TimedPolicy, eligible_window_options, uniform_stream
from .registry import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    STRATEGY_EXPECTED,
    is_strategy,
    make_policy,
    parse_strategy,
    pct_parameters,
    replay_policy,
    sized_for_a_sweep,
)
from .replay import ReplayPolicy, check_deviations
from .stock import FifoPolicy, JitterPolicy

__all__ = [
    "CONTINUE",
    "DEFAULT_STRATEGY",
    "EAGER_OPTIONS",
    "STRATEGIES",
    "STRATEGY_EXPECTED",
    "ChoiceKind",
    "Chooser",
    "FifoPolicy",
    "JitterPolicy",
    "PCTChooser",
    "PCTPolicy",
    "RandomChooser",
    "RandomPolicy",
    "ReplayPolicy",
    "SchedulingPolicy",
    "TimedPolicy",
    "TrustedChooser",
    "check_deviations",
    "eligible_window_options",
    "fifo_choice",
    "is_strategy",
    "make_policy",
    "member_for",
    "parse_strategy",
    "pct_parameters",
    "portfolio_policy",
    "replay_policy",
    "sized_for_a_sweep",
    "uniform_stream",
]
