"""Scripted scenarios on the clock: generic coordination for every double.

A double records the application's calls in a :class:`CallScript`; a
scenario expects them in order, and :func:`run_scenario` runs the scripted
side beside the application side under structured concurrency and one
deadline. The realtime transport (``agentsim.realtime``) is built on it.
"""

#: This folder's layer (tests/api/test_layers.py): imports point only down.
__layer__ = "toolkit"

from ._run import run_scenario as run_scenario
from ._script import CallScript as CallScript
from ._script import Notifier as Notifier
from ._script import RecordedCall as RecordedCall
from ._script import ScenarioErrors as ScenarioErrors
from .errors import CallMatcherError as CallMatcherError
from .errors import IncompleteScenarioError as IncompleteScenarioError
from .errors import InvalidCallKindError as InvalidCallKindError
from .errors import PendingExpectation as PendingExpectation
from .errors import PendingFailure as PendingFailure
from .errors import ScenarioCancelledError as ScenarioCancelledError
from .errors import ScenarioError as ScenarioError
from .errors import ScenarioTimeoutError as ScenarioTimeoutError
from .errors import ScenarioUsageError as ScenarioUsageError
from .errors import UnexpectedCallError as UnexpectedCallError

__all__ = [
    "ScenarioCancelledError",
    "run_scenario",
    "CallScript",
    "Notifier",
    "RecordedCall",
    "ScenarioErrors",
    "CallMatcherError",
    "IncompleteScenarioError",
    "InvalidCallKindError",
    "PendingExpectation",
    "PendingFailure",
    "ScenarioError",
    "ScenarioTimeoutError",
    "ScenarioUsageError",
    "UnexpectedCallError",
]

