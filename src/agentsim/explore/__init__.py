"""Exploration: sweep seeds for failing interleavings, shrink them, replay them.

``explore`` runs a function under many schedules (random, PCT), keeps
failing ones in ``.agentsim/`` and replays them first next time, shrinks
each failure to the fewest deviations from FIFO order and the least delay
jitter, and reports a line that replays it. ``replay`` runs one schedule.
"""

#: This folder's layer (tests/api/test_layers.py): imports point only down.
__layer__ = "explorer"

from ._database import CorruptFailureEntryWarning as CorruptFailureEntryWarning
from ._database import FailureDatabase as FailureDatabase
from ._database import FailureDatabaseWarning as FailureDatabaseWarning
from ._database import SavedFailure as SavedFailure
from ._explore import EXPLORE_STRATEGIES as EXPLORE_STRATEGIES
from ._explore import explore as explore
from ._explore import function_key as function_key
from ._explore import replay as replay
from ._focus import Focus as Focus
from ._focus import FocusNotReachedError as FocusNotReachedError
from ._options import ExploreOptions as ExploreOptions
from ._report import Branching as Branching
from ._report import ExploreReport as ExploreReport
from ._report import Failure as Failure
from ._report import MinimalSchedule as MinimalSchedule
from ._report import Nondeterminism as Nondeterminism
from ._report import SingleScheduleWarning as SingleScheduleWarning
from ._schedule import Schedule as Schedule

__all__ = [
    "CorruptFailureEntryWarning",
    "FailureDatabase",
    "FailureDatabaseWarning",
    "SavedFailure",
    "EXPLORE_STRATEGIES",
    "explore",
    "function_key",
    "replay",
    "Focus",
    "FocusNotReachedError",
    "ExploreOptions",
    "Branching",
    "ExploreReport",
    "Failure",
    "MinimalSchedule",
    "Nondeterminism",
    "SingleScheduleWarning",
    "Schedule",
]

