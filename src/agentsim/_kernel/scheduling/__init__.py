"""Scheduling: every decision about the order of events, in one package.

* ``policy.py``: :class:`SchedulingPolicy`, the seam a strategy implements;
* ``chooser.py``: :class:`Chooser`, the one interface the backends call;
* ``choice_options.py``, ``ranking.py``, ``windows.py``: the options of a
  choice as the backends offer them (due timers, batches, windowed timers);
* one module per built-in strategy (``stock.py``: fifo and jitter,
  ``random_policy.py``, ``pct.py``, ``replay.py``), each with its chooser;
* ``registry.py``: the strategies by name.

The backends import this package's interface only and never name a
strategy (tests/api/test_layers.py checks it).
"""

from .chooser import EAGER_OPTIONS, Chooser, TrustedChooser
from .pct import PCTChooser, PCTPolicy
from .policy import CONTINUE, ChoiceKind, SchedulingPolicy, fifo_choice
from .random_policy import RandomChooser, RandomPolicy, eligible_window_options, uniform_stream
from .registry import (
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
    "TrustedChooser",
    "check_deviations",
    "eligible_window_options",
    "fifo_choice",
    "is_strategy",
    "make_policy",
    "parse_strategy",
    "pct_parameters",
    "replay_policy",
    "sized_for_a_sweep",
    "uniform_stream",
]
