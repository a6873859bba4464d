"""A simulated microphone: a ``StreamedAudioInput`` fed at real-time cadence.

The script is speech and silence segments (or a numpy array); frames of
``frame_ms`` are pushed every ``frame_ms`` of virtual time, so a pipeline
sees audio arrive exactly as from a live microphone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import anyio
import numpy as np
import numpy.typing as npt
from .._kernel.backends import direct_time
from ..contrib.openai_agents.sdk import StreamedAudioInput

from .._kernel.core import record_event
from .._kernel.errors import SimulationConfigError
from ..audio import pcm
from .._kernel.validation import positive, whole


@dataclass(frozen=True)
class Segment:
    """``seconds`` of speech (a tone, or ``samples``) or of silence; ``text`` is
    what the speaker says (used to script transcriptions)."""

    seconds: float
    speech: bool
    text: str | None = None
    samples: npt.NDArray[np.int16] | None = None


def speech(seconds: float, text: str | None = None, *, samples: npt.ArrayLike | None = None) -> Segment:
    """A speech segment of ``seconds`` (a deterministic tone unless ``samples`` are given)."""
    seconds = positive("seconds", seconds, expected="a positive duration in seconds")
    if text is not None and not isinstance(text, str):
        raise SimulationConfigError("text", text, "the words spoken (a str), or None")
    return Segment(seconds, True, text, None if samples is None else pcm.as_pcm16(samples))


def silence(seconds: float) -> Segment:
    """A silent segment of ``seconds``."""
    return Segment(positive("seconds", seconds, expected="a positive duration in seconds"), False)


class Milestone:
    """A moment that happens once: ``await milestone.wait()``; ``at`` is when it
    happened (virtual seconds), None before."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.at: float | None = None
        self._event = anyio.Event()

    def reach(self) -> None:
        if self.at is None:
            self.at = direct_time.current_time()
            self._event.set()

    def is_set(self) -> bool:
        return self.at is not None

    async def wait(self) -> float:
        await self._event.wait()
        assert self.at is not None
        return self.at


@dataclass(frozen=True)
class SpokenSegment:
    """Where a speech segment fell on the virtual clock once played."""

    index: int
    start: float
    end: float
    text: str | None


class SimulatedMicrophone:
    """Feeds ``input`` (a ``StreamedAudioInput``) with pcm16 frames in real-time cadence.

    Run :meth:`play` as a task beside the pipeline::

        mic = SimulatedMicrophone([silence(0.5), speech(1.2, "book a flight"), silence(2.0)])
        result = await pipeline.run(mic.input)
        async with anyio.create_task_group() as group:
            group.start_soon(mic.play)
            async for event in result.stream(): ...

    ``speech_ended(i)`` is a :class:`Milestone` reached when the i-th speech
    segment has been played; ``finished`` when the whole script has (``play``
    then sends the end-of-stream marker unless ``end_stream=False``).
    """

    def __init__(
        self,
        script: Sequence[Segment] | npt.ArrayLike,
        *,
        sample_rate: int = pcm.DEFAULT_SAMPLE_RATE,
        frame_ms: float = 20.0,
        end_stream: bool = True,
    ) -> None:
        positive("frame_ms", frame_ms, expected="a positive number of milliseconds")
        whole("sample_rate", sample_rate, minimum=1, expected="a positive number of samples per second")
        if isinstance(script, Sequence) and all(isinstance(part, Segment) for part in script):
            self.segments: tuple[Segment, ...] = tuple(script)  # type: ignore[arg-type]
        else:
            samples = pcm.as_pcm16(script, name="script")  # type: ignore[arg-type]
            self.segments = (Segment(len(samples) / sample_rate, True, None, samples),)
        self.input = StreamedAudioInput()  # type: ignore[no-untyped-call]
        self.sample_rate = sample_rate
        self.frame_ms = frame_ms
        self.end_stream = end_stream
        self.spoken: list[SpokenSegment] = []
        self.frames_sent = 0
        self._speech_ended = [Milestone(f"speech {i} ended") for i in range(sum(segment.speech for segment in self.segments))]
        self._finished = Milestone("microphone finished")

    @property
    def speech_texts(self) -> list[str | None]:
        return [segment.text for segment in self.segments if segment.speech]

    def speech_ended(self, index: int) -> Milestone:
        """Reached once the ``index``-th speech segment (0-based) has been played."""
        whole("index", index, expected=f"a speech segment's index, 0 to {len(self._speech_ended) - 1}")
        if index >= len(self._speech_ended):
            raise SimulationConfigError("index", index, f"a speech segment's index, 0 to {len(self._speech_ended) - 1}")
        return self._speech_ended[index]

    @property
    def finished(self) -> Milestone:
        """Reached when the whole script has been played."""
        return self._finished

    async def play(self) -> None:
        """Play the script: one frame per ``frame_ms`` of virtual time."""
        samples_per_frame = max(1, round(self.sample_rate * self.frame_ms / 1000))
        frame_seconds = samples_per_frame / self.sample_rate
        speech_index = 0
        origin = direct_time.current_time()
        frames = 0  # frames are counted, not times summed: no float drift over an hour
        try:
            for segment in self.segments:
                start = direct_time.current_time()
                audio = segment.samples if segment.samples is not None else (
                    pcm.tone(segment.seconds, sample_rate=self.sample_rate)
                    if segment.speech
                    else np.zeros(round(segment.seconds * self.sample_rate), dtype=np.int16)
                )
                for offset in range(0, len(audio), samples_per_frame):
                    await direct_time.sleep_until(origin + frames * frame_seconds)
                    await self.input.add_audio(audio[offset : offset + samples_per_frame])
                    self.frames_sent += 1
                    frames += 1
                await direct_time.sleep_until(origin + frames * frame_seconds)  # spoken once its last frame is
                if segment.speech:
                    self.spoken.append(SpokenSegment(speech_index, start, direct_time.current_time(), segment.text))
                    record_event("mic", f"speech {speech_index} ended: {segment.text or ''}")
                    self._speech_ended[speech_index].reach()
                    speech_index += 1
        finally:
            self._finished.reach()
            if self.end_stream:
                self.input.queue.put_nowait(None)  # no await: this also runs when cancelled
