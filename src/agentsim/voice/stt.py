"""``TimedSTTModel``: static (non-streamed) transcription that takes virtual time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio

from .._kernel.backends import direct_time
from ..contrib.openai_agents.sdk import STTModel
from ..contrib.openai_agents._wrapping import Wrapping
from .._kernel.core import record_event
from .._kernel.errors import SimulationConfigError
from .._kernel.validation import non_negative
from ..toolkit.timing import DelaySource, DelaySpec


@dataclass
class TimedSTTCall:
    """One static transcription: audio length, when it started and ended, how."""

    index: int
    audio_seconds: float
    started_at: float
    finished_at: float | None = None
    outcome: str = "running"


class TimedSTTModel(Wrapping, STTModel):
    """Wrap an STT model (e.g. ``agents.voice.testing.ScriptedSTTModel``) so a
    static ``transcribe`` takes virtual time.

    ``latency``: a delay spec (see :mod:`agentsim.timing`) per call, plus
    ``per_audio_second`` seconds of processing per second of input audio (a
    real transcriber's time grows with the clip). Cancelling a call during its
    latency leaves the wrapped model untouched (no scripted transcription is
    consumed). Streamed sessions (``create_session``) pass through: time them
    with :class:`~agentsim.voice.TimedTranscriptionSession`. Other attributes
    (``calls``, ``assert_complete`` …) come from the wrapped model::

        stt = TimedSTTModel(ScriptedSTTModel(["book a table"]), latency=0.4, per_audio_second=0.1)
        pipeline = VoicePipeline(workflow=workflow, stt_model=stt, tts_model=tts)
    """

    def __init__(self, model: Any, *, latency: DelaySpec = 0.0, per_audio_second: float = 0.0, name: str = "stt") -> None:
        if not (callable(getattr(model, "transcribe", None)) and callable(getattr(model, "create_session", None))):
            raise SimulationConfigError("model", model, "an STT model (agents.voice.STTModel: transcribe and create_session), e.g. ScriptedSTTModel([...])")
        self.model = model
        self.name = name
        self._latency = DelaySource(latency, name="latency", stream=f"stt:{name}:latency")
        self._per_audio_second = non_negative("per_audio_second", per_audio_second, expected="seconds of processing per second of audio (>= 0)")
        #: Timing of every static transcription, in order.
        self.timed_calls: list[TimedSTTCall] = []

    @property
    def model_name(self) -> str:
        return str(self.model.model_name)

    async def transcribe(self, input: Any, *args: Any, **kwargs: Any) -> str:
        seconds = _audio_seconds(input)
        call = TimedSTTCall(len(self.timed_calls), seconds, direct_time.current_time())
        self.timed_calls.append(call)
        record_event("stt", f"{self.name} transcribe {call.index}: {seconds:.3f}s of audio")
        try:
            await self._latency.sleep(call.index)
            if self._per_audio_second:
                await direct_time.sleep(seconds * self._per_audio_second)
            text = await self.model.transcribe(input, *args, **kwargs)
        except anyio.get_cancelled_exc_class():
            call.outcome = "cancelled"
            raise
        except Exception:
            call.outcome = "failed"
            raise
        finally:
            call.finished_at = direct_time.current_time()
        call.outcome = "completed"
        return str(text)

    async def create_session(self, *args: Any, **kwargs: Any) -> Any:
        return await self.model.create_session(*args, **kwargs)


def _audio_seconds(input: Any) -> float:
    buffer, rate = getattr(input, "buffer", None), getattr(input, "frame_rate", None)
    if buffer is None or not rate:
        return 0.0
    channels = getattr(input, "channels", 1) or 1
    return float(len(buffer) / rate / channels)
