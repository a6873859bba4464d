"""``TimedModel``: any SDK ``Model``, with latency, time to first token, token
pacing and cooperative aborts."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from ..contrib.openai_agents.sdk import Model

from ..contrib.openai_agents._wrapping import Wrapping
from .._kernel.core import record_event
from .._kernel.errors import SimulationConfigError
from .._kernel.validation import whole
from ..toolkit.timing import DelaySource, DelaySpec, Pacer, Speed, check_speed
from ._signal import _CURRENT, AbortSignal
from .errors import AbortPhase, ScriptedModelRequestAbortedError

Outcome = Literal["running", "completed", "failed", "cancelled", "closed", "aborted"]
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
    #: The call's abort signal, for code running inside it (``current_call().signal``).
    signal: AbortSignal = field(init=False)

    def __post_init__(self) -> None:
        self.signal = AbortSignal(self.index)

    @property
    def consumed_step(self) -> bool:
        """Whether the wrapped model was called (a scripted model consumed a step)."""
        return self.phase != "latency"


RETRY_ADVICE_ATTRIBUTE = "_agentsim_retry_advice"
TEXT_DELTA = "response.output_text.delta"
_WORDS = re.compile(r"\s*\S+\s*|\s+")


def words(text: str) -> list[str]:
    """Default tokens of streamed text: each word with the spaces around it."""
    return _WORDS.findall(text)


async def _inside(call: TimedModelCall, stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """``stream``'s events, each produced with ``call`` as ``current_call()``
    (only while the wrapped stream runs: the caller's code between events
    is not inside the call)."""
    iterator = aiter(stream)
    while True:
        entered = _CURRENT.set(call)
        try:
            event = await anext(iterator)
        except StopAsyncIteration:
            return
        finally:
            _CURRENT.reset(entered)
        yield event


def _located(error: Exception, call: TimedModelCall) -> Exception:
    """An error of the SDK's scripted model, with the fields its JS
    counterpart carries and the Python one lacks: ``call_index``,
    ``streamed`` and ``step_type`` (``"stream"`` or ``"response"``: the kind of
    call the step had to answer). Fields already set are kept."""
    if type(error).__module__.startswith("agents.testing"):
        for name, value in (("call_index", call.index), ("streamed", call.streamed), ("step_type", "stream" if call.streamed else "response")):
            if not hasattr(error, name):
                try:
                    setattr(error, name, value)
                except AttributeError:  # (an error with slots keeps what it has)
                    pass
    return error


class TimedModel(Wrapping, Model):
    """Wrap a model so its calls take virtual time.

    ``latency``: seconds before a non-streamed response; ``first_token``:
    seconds before a stream's first event (defaults to ``latency``);
    ``event_interval``: seconds between stream events. Each is a delay spec
    (see :mod:`agentsim.timing`): fixed, per call, computed or seeded::

        model = TimedModel(ScriptedModel([...]), latency=uniform(0.2, 1.5), event_interval=0.02)

    ``tokens_per_second``: stream text the way a model generates it — each
    ``response.output_text.delta`` is split into tokens (``tokenize``;
    default: words with their spaces, ``tokenize=list`` for characters) sent
    ``1 / tokens_per_second`` apart after the first token; a ``(low,
    high)`` range makes each spacing a window the explorer orders against
    other timers. With ``first_token`` this makes time-to-first-token and
    per-token races testable (a guardrail on the third word, a cancel
    between two tokens).

    ``abort(call_index)`` aborts a request as the JS guide's abort signal
    does: the call raises
    :class:`~agentsim.models.errors.ScriptedModelRequestAbortedError` with
    its index (see there for where an abort takes effect).

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
        tokens_per_second: Speed | None = None,
        tokenize: Callable[[str], list[str]] = words,
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
        if tokens_per_second is not None:
            check_speed(tokens_per_second, name="tokens_per_second")
        if not callable(tokenize):
            raise SimulationConfigError("tokenize", tokenize, "a function str -> list[str] (e.g. list, for characters)")
        self._tokens_per_second = tokens_per_second
        self._tokenize = tokenize
        self._calls: list[TimedModelCall] = []
        self._aborted: set[int] = set()
        self._waits: dict[int, anyio.CancelScope] = {}

    @classmethod
    def from_recording(cls, recording: Any, *, tolerance: Any = None, name: str = "model") -> TimedModel:
        """A model that replays a recording of
        :class:`~agentsim.recording.RecordingModel` call by call: each call
        answers as recorded (its output items and usage, or its stream of
        events, or its failure as a ``RecordedModelError``) after its recorded
        latency, a stream's events at their recorded gaps. Each latency and
        gap is a window of ``tolerance`` (see
        :class:`~agentsim.recording.Tolerance`; default 10 % and 30 ms), so
        ``explore`` tries the neighbouring timings while the stock schedule
        keeps the recorded ones::

            model = TimedModel.from_recording("run.jsonl")
            result = await Runner.run(Agent(name="A", model=model), "hi")

        ``recording`` is a path or a loaded :class:`~agentsim.recording.Recording`.
        The wrapped model is the SDK's ``ScriptedModel``, one step per
        recorded call: ``assert_complete()`` says whether the app made them all."""
        from ..contrib.openai_agents.sdk import testing
        from ..recording._format import Recording, load
        from ..recording._gaps import Tolerance, as_tolerance
        from ..recording._model import replay_steps

        if not isinstance(recording, Recording):
            if not isinstance(recording, (str, os.PathLike)):
                raise SimulationConfigError("recording", recording, "a recording's path (str or os.PathLike) or an agentsim.recording.Recording")
            recording = load(recording)
        steps = replay_steps(recording, Tolerance() if tolerance is None else as_tolerance(tolerance))
        return cls(testing("TimedModel.from_recording").ScriptedModel(steps), name=name)

    @property
    def calls(self) -> tuple[TimedModelCall, ...]:
        """Timing records of every call, in order."""
        return tuple(self._calls)

    def _start(self, streamed: bool) -> TimedModelCall:
        call = TimedModelCall(len(self._calls), streamed, anyio.current_time())
        self._calls.append(call)
        if call.index in self._aborted:
            call.signal._abort()
        record_event("model", f"{self.name} call {call.index} {'stream' if streamed else 'response'}")
        return call

    def _finish(self, call: TimedModelCall, outcome: Outcome, error: BaseException | None = None) -> None:
        call.outcome = outcome
        call.error = error
        call.finished_at = anyio.current_time()
        record_event("model", f"{self.name} call {call.index} {outcome} in {call.phase}")

    def abort(self, call_index: int | None = None) -> int:
        """Abort model request ``call_index`` (default: the latest running one);
        a future index aborts that call as it starts. Returns the index.

        Waiting (latency, first token, pacing) ends at once; inside the
        wrapped model the abort is cooperative, checked when it returns
        control. The call raises ``ScriptedModelRequestAbortedError``."""
        if call_index is None:
            running = [call.index for call in self._calls if call.outcome == "running"]
            if not running:
                raise SimulationConfigError("call_index", None, "the index of a model call: no call is running now")
            call_index = running[-1]
        whole("call_index", call_index, minimum=0, expected="a 0-based model call index (TimedModel.calls)")
        if call_index < len(self._calls) and self._calls[call_index].outcome != "running":
            raise SimulationConfigError("call_index", call_index, f"a running or future call: call #{call_index} already ended ({self._calls[call_index].outcome})")
        self._aborted.add(call_index)
        record_event("model", f"{self.name} abort call {call_index}")
        if call_index < len(self._calls):
            self._calls[call_index].signal._abort()  # custom code inside the call sees it now
        scope = self._waits.get(call_index)
        if scope is not None:
            scope.cancel()
        return call_index

    def _check_abort(self, call: TimedModelCall, phase: AbortPhase) -> None:
        if call.index in self._aborted:
            raise ScriptedModelRequestAbortedError(call.index, phase)

    async def _wait(self, call: TimedModelCall, phase: AbortPhase, sleep: Any, index: int) -> None:
        """Sleep ``sleep(index)``, cut short by an abort of this call."""
        with anyio.CancelScope() as scope:
            self._waits[call.index] = scope
            try:
                await sleep(index)
            finally:
                del self._waits[call.index]
        self._check_abort(call, phase)

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        call = self._start(streamed=False)
        try:
            self._check_abort(call, "before_call")
            await self._wait(call, "latency", self._latency.sleep, call.index)
            call.phase = "responding"
            entered = _CURRENT.set(call)
            try:
                response = await self.model.get_response(*args, **kwargs)
            finally:
                _CURRENT.reset(entered)
            self._check_abort(call, "responding")  # the answer came after the abort: discarded
        except anyio.get_cancelled_exc_class():
            self._finish(call, "cancelled")
            raise
        except ScriptedModelRequestAbortedError as error:
            self._finish(call, "aborted", error)
            raise
        except Exception as error:
            self._finish(call, "failed", _located(error, call))
            raise
        self._finish(call, "completed")
        return response

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        call = self._start(streamed=True)
        outcome: Outcome = "closed"
        error: BaseException | None = None
        try:
            self._check_abort(call, "before_call")
            await self._wait(call, "latency", self._first_token.sleep, call.index)
            call.phase = "streaming"
            stream = self.model.stream_response(*args, **kwargs)
            tokens = Pacer(1.0, self._tokens_per_second, name="tokens_per_second") if self._tokens_per_second is not None else None
            token_index = 0
            try:
                async for event in _inside(call, stream):
                    self._check_abort(call, "streaming")  # checked again when the stream returns control
                    for piece, is_token in self._pieces(event, tokens is not None, call.events):
                        if is_token:
                            assert tokens is not None  # tokens only when paced
                            await self._wait(call, "streaming", tokens.until, token_index)
                            token_index += 1
                        elif call.events:
                            await self._wait(call, "streaming", self._event_interval.sleep, call.events - 1)
                        yield piece
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
        except ScriptedModelRequestAbortedError as exc:
            outcome, error = "aborted", exc
            raise
        except Exception as exc:
            outcome, error = "failed", _located(exc, call)
            raise
        finally:
            self._finish(call, outcome, error)

    def _pieces(self, event: Any, paced: bool, sent: int) -> Iterator[tuple[Any, bool]]:
        """``event`` as it reaches the caller: a text delta split into tokens
        when paced (sequence numbers renumbered to stay increasing)."""
        if not paced:
            yield event, False
            return
        pieces = [event]
        if getattr(event, "type", None) == TEXT_DELTA and isinstance(getattr(event, "delta", None), str):
            pieces = [event.model_copy(update={"delta": token}) for token in self._tokenize(event.delta)] or [event]
        for offset, piece in enumerate(pieces):
            if hasattr(piece, "sequence_number") and hasattr(piece, "model_copy"):
                piece = piece.model_copy(update={"sequence_number": sent + offset})
            yield piece, getattr(piece, "type", None) == TEXT_DELTA

    def get_retry_advice(self, request: Any) -> Any:
        if not hasattr(request, "error") or not hasattr(request, "attempt"):
            raise SimulationConfigError("request", request, "the SDK's ModelRetryAdviceRequest (with error and attempt)")
        advise = getattr(request.error, RETRY_ADVICE_ATTRIBUTE, None)
        if advise is not None:
            return advise(request.attempt, request)
        # Releases before retry advice (0.2) have no such method on Model.
        wrapped = getattr(self.model, "get_retry_advice", None)
        return wrapped(request) if wrapped is not None else None

    async def close(self) -> None:
        close = getattr(self.model, "close", None)  # Model.close is newer than 0.2
        if close is not None:
            await close()

    async def _cleanup_on_run_end(self, owner: object) -> None:
        await self.model._cleanup_on_run_end(owner)
