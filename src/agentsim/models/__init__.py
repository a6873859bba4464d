"""Timed model doubles: latency, first token, pacing and dynamic retry advice.

``TimedModel`` wraps any ``agents.models.interface.Model`` (the SDK's
``agents.testing.ScriptedModel`` included) so its calls take virtual time;
``model_error`` scripts a failure whose retry advice can depend on the attempt;
``TimedModel.abort`` aborts a request (``ScriptedModelRequestAbortedError``).
"""

#: This folder's layer (tests/api/test_layers.py): imports point only down.
__layer__ = "doubles"

from ..toolkit.timing import exponential as exponential
from ..toolkit.timing import lognormal as lognormal
from ..toolkit.timing import uniform as uniform
from ._errors import model_error as model_error
from ._signal import AbortSignal as AbortSignal
from ._signal import current_call as current_call
from ._timed import TimedModel as TimedModel
from ._timed import TimedModelCall as TimedModelCall
from .errors import NotInModelCallError as NotInModelCallError
from .errors import RetryAdviceUnreachableError as RetryAdviceUnreachableError
from .errors import ScriptedModelRequestAbortedError as ScriptedModelRequestAbortedError

__all__ = [
    "exponential",
    "lognormal",
    "uniform",
    "model_error",
    "AbortSignal",
    "current_call",
    "NotInModelCallError",
    "TimedModel",
    "TimedModelCall",
    "RetryAdviceUnreachableError",
    "ScriptedModelRequestAbortedError",
]

