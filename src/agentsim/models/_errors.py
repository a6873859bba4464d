"""``model_error``: a scripted model failure whose retry advice may depend on the attempt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._kernel.errors import SimulationConfigError
from ._timed import RETRY_ADVICE_ATTRIBUTE
from ..contrib.openai_agents.sdk import sdk_root, testing

RetryAdviceCallback = Callable[[int, Any], Any]


def model_error(error: Exception, retry_advice: Any = None) -> Any:
    """A ``ModelStep`` that raises ``error``, for ``agents.testing.ScriptedModel``.

    ``retry_advice`` is a fixed ``ModelRetryAdvice`` (as with
    ``ModelStep.raise_error``) or — the JS SDK's ``modelError`` semantics,
    which Python's helper lacks — a callback ``(attempt, request) ->
    ModelRetryAdvice | None`` asked each time this error is raised. The
    callback needs the model wrapped in :class:`TimedModel` (it answers the
    runner's ``get_retry_advice``). Each retry is a new model call and consumes
    the next scripted step, so script one ``model_error`` per failing attempt::

        advice = lambda attempt, request: ModelRetryAdvice(suggested=attempt < 3, replay_safety="safe")
        model = TimedModel(ScriptedModel([model_error(flaky, advice), model_error(flaky, advice), [assistant_message("ok")]]))
    """
    ModelStep = testing().ModelStep  # first: a typed error naming the release it needs
    ModelRetryAdvice = sdk_root().ModelRetryAdvice

    if not isinstance(error, Exception):
        raise SimulationConfigError("error", error, "an exception instance")
    if retry_advice is None or isinstance(retry_advice, ModelRetryAdvice):
        return ModelStep.raise_error(error, retry_advice=retry_advice)
    if not callable(retry_advice):
        raise SimulationConfigError("retry_advice", retry_advice, "a ModelRetryAdvice, a callback (attempt, request) -> advice, or None")
    setattr(error, RETRY_ADVICE_ATTRIBUTE, retry_advice)
    return ModelStep.raise_error(error)
