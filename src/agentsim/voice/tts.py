"""``TimedTTSModel``: any TTS model, with time to first chunk, pacing and mid-stream failures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio
from .._kernel.backends import direct_time
from ..contrib.openai_agents.sdk import TTSModel, TTSModelSettings

from ..contrib.openai_agents._wrapping import Wrapping
from .._kernel.core import record_event
from .._kernel.errors import SimulationConfigError
from ..toolkit.timing import DelaySource, DelaySpec
from .._kernel.validation import whole


@dataclass
class TimedTTSCall:
    """One TTS call: its text, when it started, when each chunk went out, how it ended."""

    index: int
    text: str
    started_at: float
    chunk_times: list[float]
    outcome: str = "running"
    error: BaseException | None = None


class TimedTTSModel(Wrapping, TTSModel):
    """Wrap a TTS model (e.g. ``ScriptedTTSModel``) so speech takes virtual time.

    ``first_chunk``: seconds before the first audio chunk; ``chunk_interval``:
    seconds between chunks (delay specs, see :mod:`agentsim.timing`).
    ``fail_next_call(error, after_chunks=n)`` makes the next call raise after
    ``n`` chunks — a provider failing mid-stream. Other attributes
    (``calls``, ``assert_complete``) come from the wrapped model.
    """

    def __init__(self, model: TTSModel, *, first_chunk: DelaySpec = 0.0, chunk_interval: DelaySpec = 0.0, name: str = "tts") -> None:
        self.model = model
        self.name = name
        self._first_chunk = DelaySource(first_chunk, name="first_chunk", stream=f"tts:{name}:first_chunk")
        self._chunk_interval = DelaySource(chunk_interval, name="chunk_interval", stream=f"tts:{name}:chunk_interval")
        self._failures: list[tuple[BaseException, int]] = []
        self.timed_calls: list[TimedTTSCall] = []

    @property
    def model_name(self) -> str:
        return str(self.model.model_name)

    def fail_next_call(self, error: BaseException, *, after_chunks: int = 0) -> None:
        """The next call raises ``error`` after yielding ``after_chunks`` chunks."""
        if not isinstance(error, BaseException):
            raise SimulationConfigError("error", error, "an exception instance")
        self._failures.append((error, whole("after_chunks", after_chunks, expected="a number of chunks >= 0")))

    async def run(self, text: str, settings: TTSModelSettings) -> AsyncIterator[bytes]:
        call = TimedTTSCall(len(self.timed_calls), text, direct_time.current_time(), [])
        self.timed_calls.append(call)
        failure = self._failures.pop(0) if self._failures else None
        record_event("tts", f"{self.name} call {call.index}: {text[:40]}")
        try:
            stream = self.model.run(text, settings)
            sent = 0
            async for chunk in stream:
                if failure is not None and sent == failure[1]:
                    raise failure[0]
                if sent == 0:
                    await self._first_chunk.sleep(call.index)
                else:
                    await self._chunk_interval.sleep(sent - 1)
                call.chunk_times.append(direct_time.current_time())
                yield chunk
                sent += 1
            if failure is not None:
                raise failure[0]
            call.outcome = "completed"
        except GeneratorExit:
            call.outcome = "closed"  # the consumer stopped reading
            raise
        except anyio.get_cancelled_exc_class():
            call.outcome = "cancelled"
            raise
        except Exception as exc:
            call.outcome, call.error = "failed", exc
            raise
