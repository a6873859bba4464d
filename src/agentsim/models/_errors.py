"""``model_error``: a scripted model failure whose retry advice may depend on the attempt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sys

from .._kernel.core import current_core
from .._kernel.errors import SimulationConfigError
from ._timed import RETRY_ADVICE_ATTRIBUTE, TimedModel
from ..contrib.openai_agents.sdk import sdk_root, testing
from .errors import RetryAdviceUnreachableError

RetryAdviceCallback = Callable[[int, Any], Any]


def model_error(error: Exception, retry_advice: Any = None) -> Any:
    """A ``ModelStep`` that raises ``error``, for ``agents.testing.ScriptedModel``.

    ``retry_advice`` is a fixed ``ModelRetryAdvice`` (as with
    ``ModelStep.raise_error``) or — the JS SDK's ``modelError`` semantics,
    which Python's helper lacks — a callback ``(attempt, request) ->
    ModelRetryAdvice | None`` asked each time this error is raised. The
    callback needs the model wrapped in :class:`TimedModel` (it answers the
    runner's ``get_retry_advice``); raised by a bare ``ScriptedModel`` it
    would be ignored, so the call fails with
    :class:`~agentsim.models.errors.RetryAdviceUnreachableError` instead (and
    the simulation ends with it). Each retry is a new model call and consumes
    the next scripted step, so script one ``model_error`` per failing attempt::

        advice = lambda attempt, request: ModelRetryAdvice(suggested=attempt < 3, replay_safety="safe")
        model = TimedModel(ScriptedModel([model_error(flaky, advice), model_error(flaky, advice), [assistant_message("ok")]]))
    """
    ModelStep = testing("agentsim.models.model_error (built on agents.testing.ModelStep)").ModelStep  # first: a typed error naming the release it needs
    ModelRetryAdvice = sdk_root().ModelRetryAdvice

    if not isinstance(error, Exception):
        raise SimulationConfigError("error", error, "an exception instance")
    if retry_advice is None or isinstance(retry_advice, ModelRetryAdvice):
        return ModelStep.raise_error(error, retry_advice=retry_advice)
    if not callable(retry_advice):
        raise SimulationConfigError("retry_advice", retry_advice, "a ModelRetryAdvice, a callback (attempt, request) -> advice, or None")
    setattr(error, RETRY_ADVICE_ATTRIBUTE, retry_advice)

    def raise_it(call: Any) -> Any:
        # A responder runs inside the model call: check that a TimedModel is
        # on the way out, the one place the runner's advice question reaches.
        if not _inside_timed_model():
            unreachable = RetryAdviceUnreachableError(error, bool(getattr(call, "streamed", False)))
            core = current_core()
            if core is not None:
                core.abort(unreachable)
            raise unreachable
        return ModelStep.raise_error(error)

    return ModelStep.respond(raise_it)


_TIMED_CALLS = frozenset({TimedModel.get_response.__code__, TimedModel.stream_response.__code__})


def _inside_timed_model() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code in _TIMED_CALLS:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False
