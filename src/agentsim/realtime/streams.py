"""Timed emissions of the scripted transport: scheduled events and audio streams."""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any, Final

import anyio
import numpy.typing as npt
from .._kernel.backends import direct_time
from ..contrib.openai_agents.sdk import (
    RealtimeModelAudioDoneEvent,
    RealtimeModelAudioEvent,
    RealtimeModelEvent,
    RealtimeModelTranscriptDeltaEvent,
)

from .._kernel.core import record_event
from .._kernel.errors import SimulationConfigError
from ..audio import pcm
from ..toolkit.timing import Pacer, Speed, check_speed
from ..contrib.openai_agents.sdk import turn_ended, turn_started
from .._kernel.validation import positive, whole, non_negative

if TYPE_CHECKING:
    from .transport import ScriptedRealtimeTransport


_DESCRIBED_FIELDS: Final = ("response_id", "item_id", "call_id", "status")
#: Per event class with declared fields (dataclasses, pydantic models: the
#: SDK's events), which of the described fields it has and whether it has
#: ``data``: asked once per class, not with a failing lookup per event.
_fields_of_class: dict[type, tuple[tuple[str, ...], bool]] = {}


def describe_event(event: RealtimeModelEvent) -> str:
    """A short, address-free description of an event for the trace."""
    known = _fields_of_class.get(event.__class__)
    if known is None:
        known = (tuple(name for name in _DESCRIBED_FIELDS if hasattr(event, name)), hasattr(event, "data"))
        if hasattr(event.__class__, "__dataclass_fields__") or hasattr(event.__class__, "model_fields"):
            _fields_of_class[event.__class__] = known
    names, has_data = known
    parts: list[str] = [event.type]
    for name in names:
        value = getattr(event, name)
        if value is not None:
            parts.append(f"{name}={value}")
    if has_data and isinstance(data := event.data, bytes):  # type: ignore[union-attr]
        parts.append(f"{len(data)}B")
    return " ".join(parts)


class ScheduledEmit:
    """Events due at a virtual instant. ``cancel()`` before then to drop them;
    ``await handle`` to wait until they were delivered (or dropped)."""

    def __init__(self, transport: ScriptedRealtimeTransport, when: float, events: Sequence[RealtimeModelEvent]) -> None:
        if not all(hasattr(transport, name) for name in ("generation", "status", "emit")):
            raise SimulationConfigError("transport", transport, "the ScriptedRealtimeTransport that delivers the events")
        self.when = non_negative("when", when, expected="a virtual time in seconds >= 0")
        if isinstance(events, (str, bytes)) or not isinstance(events, Sequence):
            raise SimulationConfigError("events", events, "a sequence of RealtimeModelEvent")
        self.events = tuple(events)
        #: True once delivered to the listeners; False if cancelled or dropped.
        self.delivered = False
        self._transport = transport
        # The connection these events belong to: the current one, or — made
        # while disconnected — the next one.
        self._generation = transport.generation + (transport.status == "disconnected")
        self._cancel_scope = anyio.CancelScope()
        self._finished = anyio.Event()

    def cancel(self) -> None:
        self._cancel_scope.cancel()

    async def _run(self) -> None:
        try:
            with self._cancel_scope:
                await direct_time.sleep_until(self.when)
                if self._transport.generation != self._generation:
                    record_event("drop", f"{len(self.events)} event(s) at {self.when}: their connection was superseded")
                elif self._transport.connected:
                    self.delivered = await self._transport.enqueue(self.events)
                else:
                    record_event("drop", f"{len(self.events)} event(s) at {self.when}: transport closed")
        finally:
            self._finished.set()

    def __await__(self) -> Generator[Any, None, ScheduledEmit]:
        return self._wait().__await__()

    async def _wait(self) -> ScheduledEmit:
        await self._finished.wait()
        return self


class AudioStream:
    """An assistant audio response being streamed by the scripted transport.

    Readable while it runs: ``chunks_sent``, ``sent_ms`` (audio delivered),
    ``interrupted``, ``finished``. ``interrupt()`` stops it; ``await stream``
    waits for the end and returns it.
    """

    def __init__(
        self,
        transport: ScriptedRealtimeTransport,
        *,
        item_id: str,
        response_id: str,
        duration: float | None,
        samples: npt.ArrayLike | None,
        sample_rate: int,
        chunk_ms: float,
        transcript: str | None,
        content_index: int,
        pace: Speed,
        turn_events: bool,
        stop_on_interrupt: bool,
    ) -> None:
        if (duration is None) == (samples is None):
            raise SimulationConfigError("duration/samples", (duration, samples), "exactly one of duration (seconds) or samples")
        whole("sample_rate", sample_rate, minimum=1, expected="a positive number of samples per second")
        positive("chunk_ms", chunk_ms)
        check_speed(pace, name="pace")
        samples_per_chunk = max(1, round(sample_rate * chunk_ms / 1000))
        if duration is not None:
            non_negative("duration", duration, expected="seconds of audio (a finite number >= 0)")
            self._chunks = list(pcm.tone_chunks(float(duration), samples_per_chunk, sample_rate))
            total_samples = round(duration * sample_rate)
        else:
            audio = pcm.as_pcm16(samples)  # type: ignore[arg-type]
            self._chunks = list(pcm.chunks(audio, samples_per_chunk))
            total_samples = len(audio)
        self.item_id = item_id
        self.response_id = response_id
        self.content_index = content_index
        self.sample_rate = sample_rate
        self.chunk_ms = chunk_ms
        self.pace = pace
        self.transcript = transcript
        self.total_ms = total_samples / sample_rate * 1000
        self.chunks_sent = 0
        self.sent_ms = 0.0
        self.interrupted = False
        self.finished = False
        self._deltas = _spread(transcript, len(self._chunks))
        self._turn_events = turn_events
        self._stop_on_interrupt = stop_on_interrupt
        self._transport = transport
        self._pacing = anyio.CancelScope()
        self._done = anyio.Event()

    def interrupt(self) -> None:
        """Stop streaming now, as if the response was cancelled."""
        if not self.finished:
            self.interrupted = True
            self.stop()

    def stop(self) -> None:
        self._pacing.cancel()

    def on_interrupt_call(self) -> None:
        if self._stop_on_interrupt:
            self.interrupt()

    async def _run(self) -> None:
        transport = self._transport
        try:
            if self._turn_events and not await self._emit(turn_started(self.response_id)):
                return
            pacer = Pacer(self.chunk_ms / 1000, self.pace, name="pace")
            # One cancel scope for the whole stream: stop() cancels it, so an
            # interrupt takes effect at once without a timer per chunk.
            with self._pacing:
                for index, chunk in enumerate(self._chunks):
                    await pacer.until(index)
                    events: list[RealtimeModelEvent] = [
                        RealtimeModelAudioEvent(data=chunk, response_id=self.response_id, item_id=self.item_id, content_index=self.content_index)
                    ]
                    events += [
                        RealtimeModelTranscriptDeltaEvent(item_id=self.item_id, delta=delta, response_id=self.response_id)
                        for delta in self._deltas[index]
                    ]
                    if not await self._emit(*events):
                        return
                    self.chunks_sent += 1
                    self.sent_ms += pcm.duration_ms(len(chunk), self.sample_rate)
                # The response ends when its last chunk has played out.
                await pacer.until(len(self._chunks))
            ending: list[RealtimeModelEvent] = []
            if not self.interrupted:
                ending.append(RealtimeModelAudioDoneEvent(item_id=self.item_id, content_index=self.content_index))
            if self._turn_events:
                ending.append(turn_ended(self.response_id))
            if ending and transport.connected:
                await self._emit(*ending)
        finally:
            self.finished = True
            transport.stream_finished(self)
            self._done.set()

    async def _emit(self, *events: RealtimeModelEvent) -> bool:
        # Queued in order without waiting for the listeners, as a server streams.
        if not self._transport.connected:
            record_event("drop", f"audio stream {self.response_id}: transport closed")
            return False
        self._transport.enqueue_nowait(events, made_here=True)
        return True

    def __await__(self) -> Generator[Any, None, AudioStream]:
        return self._wait().__await__()

    async def _wait(self) -> AudioStream:
        await self._done.wait()
        return self


def _spread(transcript: str | None, chunk_count: int) -> list[list[str]]:
    """Transcript deltas per chunk: words spread evenly, spaces kept."""
    per_chunk: list[list[str]] = [[] for _ in range(chunk_count)]
    if not transcript or not chunk_count:
        return per_chunk
    words = transcript.split(" ")
    deltas = [word + " " for word in words[:-1]] + [words[-1]]
    for index, delta in enumerate(deltas):
        per_chunk[min(chunk_count - 1, math.floor(index * chunk_count / len(deltas)))].append(delta)
    return per_chunk

