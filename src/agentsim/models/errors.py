"""Errors of the timed model doubles.

``ScriptedModelRequestAbortedError`` is the JS guide's abort error (``name``
``"AbortError"`` with ``callIndex``) for Python: a model request the test
aborted. ``RetryAdviceUnreachableError`` says a retry-advice callback was
scripted where nothing can ask it.
"""

from __future__ import annotations

from typing import Literal

from .._kernel.errors import AgentsimError, SimulationError, UsageError

AbortPhase = Literal["before_call", "latency", "responding", "streaming"]


class ScriptedModelRequestAbortedError(AgentsimError):
    """A model request was aborted (``TimedModel.abort``), as the JS SDK's
    ``ScriptedModelRequestAbortedError`` — an error named ``AbortError`` with
    the call index.

    Fields: ``call_index`` (0-based, into ``TimedModel.calls``), ``phase``
    where the abort took effect (``"before_call"``/``"latency"``: the wrapped
    model was never asked, a scripted step was not consumed;
    ``"responding"``: the wrapped model's answer was discarded when it came;
    ``"streaming"``: no event after the abort reached the caller), and
    ``consumed_step``. Aborts are cooperative inside the wrapped model: a
    responder or stream that is running is not interrupted; the abort is
    checked again when it returns control, before its result is accepted.
    """

    #: The JS error's ``name``.
    name = "AbortError"

    def __init__(self, call_index: int, phase: AbortPhase) -> None:
        self.call_index = call_index
        self.phase = phase
        self.consumed_step = phase in ("responding", "streaming")
        where = {
            "before_call": "before it started (no scripted step consumed)",
            "latency": "during its latency (no scripted step consumed)",
            "responding": "while the wrapped model answered (its answer was discarded)",
            "streaming": "mid-stream (no later event reached the caller)",
        }[phase]
        super().__init__(f"model request #{call_index} was aborted {where}")


class NotInModelCallError(UsageError, RuntimeError):
    """``agentsim.models.current_call()`` was called outside a model call: it
    answers only inside a responder or stream factory of a model wrapped in
    :class:`~agentsim.models.TimedModel` (the call it runs in)."""

    def __init__(self) -> None:
        super().__init__(
            "agentsim.models.current_call() was called outside a model call: call it inside a responder "
            "(ModelStep.respond) or a stream factory of a model wrapped in TimedModel"
        )


class RetryAdviceUnreachableError(UsageError, SimulationError):
    """``model_error(error, retry_advice=callback)`` was raised by a model that
    is not wrapped in :class:`~agentsim.models.TimedModel`: the runner asks the
    model it holds for advice, and a bare ``ScriptedModel`` only knows fixed
    advice, so the callback would be silently ignored.

    Fields: ``error`` (the scripted exception), ``streamed`` (whether the
    call was a stream). The simulation ends with this error
    even if the application catches it.
    """

    def __init__(self, error: BaseException, streamed: bool) -> None:
        self.error = error
        self.streamed = streamed
        super().__init__(
            f"model_error({type(error).__name__}(...), retry_advice=<callback>) was raised by a "
            f"{'streamed' if streamed else 'non-streamed'} call of a ScriptedModel that is not wrapped in TimedModel, so nothing can ask the "
            "callback for its advice. Wrap the model: TimedModel(ScriptedModel([...])), or pass a fixed "
            "ModelRetryAdvice(...) instead of a callback."
        )
