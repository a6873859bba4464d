"""``TimedModel``: any SDK ``Model``, with latency, time to first token and pacing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from ..contrib.openai_agents.sdk import Model

from .._kernel.core import record_event
from .._kernel.errors import SimulationConfigError
from ..timing import DelaySource, DelaySpec

Outcome = Literal["running", "completed", "failed", "cancelled", "closed"]
Phase = Literal["latency", "responding", "streaming"]


@dataclass
class TimedModelCall:
    """Timing of one model call, as it happened in virtual time.

    ``index`` is 0-based in call order; ``phase`` is where the call was when
    it ended (``"latency"``: before the wrapped model was asked, so no
    scripted step was consumed; ``"responding"``/``"streaming"``: inside the
    wrapped model); ``outcome`` how it ended; ``events`` how many stream
    events reached the caller.
    """

    index: int
    streamed: bool
    started_at: float
    finished_at: float | None = None
    phase: Phase = "latency"
    outcome: Outcome = "running"
    events: int = 0
    error: BaseException | None = None

    @property
    def consumed_step(self) -> bool:
        """Whether the wrapped model was called (a scripted model consumed a step)."""
        return self.phase != "latency"


RETRY_ADVICE_ATTRIBUTE = "_agentsim_retry_advice"


class TimedModel(Model):
    """Wrap a model so its calls take virtual time.

    ``latency``: seconds before a non-streamed response; ``first_token``:
    seconds before a stream's first event (defaults to ``latency``);
    ``event_interval``: seconds between stream events. Each is a delay spec
    (see :mod:`agentsim.timing`): fixed, per call, computed or seeded::

        model = TimedModel(ScriptedModel([...]), latency=uniform(0.2, 1.5), event_interval=0.02)

    The runner sees the time pass: ``ModelSettings(timeout=...)``, retry
    back-off and cancellation land at the right virtual instants. Cancelling
    a call during its latency leaves the wrapped model untouched (a scripted
    model consumes no step); ``calls`` records where each call ended.
    Attributes the wrapper does not define (``assert_complete``,
    ``last_call`` …) come from the wrapped model.
    """

    def __init__(
        self,
        model: Model,
        *,
        latency: DelaySpec = 0.0,
        first_token: DelaySpec | None = None,
        event_interval: DelaySpec = 0.0,
        name: str = "model",
    ) -> None:
        # Duck-typed like the runner: anything that answers get_response and
        # stream_response (the SDK's Model, or a model of your own).
        if not (callable(getattr(model, "get_response", None)) and callable(getattr(model, "stream_response", None))):
            raise SimulationConfigError("model", model, "a model (agents.models.interface.Model: get_response and stream_response), e.g. ScriptedModel([...])")
        if not isinstance(name, str):
            raise SimulationConfigError("name", name, "a str naming the model in traces")
        self.model = model
        self.name = name
        self._latency = DelaySource(latency, name="latency", stream=f"model:{name}:latency")
        self._first_token = (
            self._latency if first_token is None else DelaySource(first_token, name="first_token", stream=f"model:{name}:first_token")
        )
        self._event_interval = DelaySource(event_interval, name="event_interval", stream=f"model:{name}:event_interval")
        self._calls: list[TimedModelCall] = []

    @property
    def calls(self) -> tuple[TimedModelCall, ...]:
        """Timing records of every call, in order."""
        return tuple(self._calls)

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes TimedModel lacks: delegate to the wrapped model.
        if name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)

    def _start(self, streamed: bool) -> TimedModelCall:
        call = TimedModelCall(len(self._calls), streamed, anyio.current_time())
        self._calls.append(call)
        record_event("model", f"{self.name} call {call.index} {'stream' if streamed else 'response'}")
        return call

    def _finish(self, call: TimedModelCall, outcome: Outcome, error: BaseException | None = None) -> None:
        call.outcome = outcome
        call.error = error
        call.finished_at = anyio.current_time()
        record_event("model", f"{self.name} call {call.index} {outcome} in {call.phase}")

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        call = self._start(streamed=False)
        try:
            await self._latency.sleep(call.index)
            call.phase = "responding"
            response = await self.model.get_response(*args, **kwargs)
        except anyio.get_cancelled_exc_class():
            self._finish(call, "cancelled")
            raise
        except Exception as error:
            self._finish(call, "failed", error)
            raise
        self._finish(call, "completed")
        return response

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        call = self._start(streamed=True)
        outcome: Outcome = "closed"
        error: BaseException | None = None
        try:
            await self._first_token.sleep(call.index)
            call.phase = "streaming"
            stream = self.model.stream_response(*args, **kwargs)
            try:
                async for event in stream:
                    if call.events:
                        await self._event_interval.sleep(call.events - 1)
                    yield event
                    call.events += 1
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()
            outcome = "completed"
        except anyio.get_cancelled_exc_class():
            outcome = "cancelled"
            raise
        except GeneratorExit:
            outcome = "closed"  # the consumer stopped reading
            raise
        except Exception as exc:
            outcome, error = "failed", exc
            raise
        finally:
            self._finish(call, outcome, error)

    def get_retry_advice(self, request: Any) -> Any:
        advise = getattr(request.error, RETRY_ADVICE_ATTRIBUTE, None)
        if advise is not None:
            return advise(request.attempt, request)
        return self.model.get_retry_advice(request)

    async def close(self) -> None:
        await self.model.close()

    async def _cleanup_on_run_end(self, owner: object) -> None:
        await self.model._cleanup_on_run_end(owner)
