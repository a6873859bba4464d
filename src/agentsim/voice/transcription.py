"""Transcription turns released on the virtual clock."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from .._kernel.backends import direct_time
from ..contrib.openai_agents.sdk import StreamedAudioInput, voice_testing

from .._kernel.core import record_event
from .._kernel.errors import SimulationConfigError
from ..toolkit.timing import DelaySource, DelaySpec
from .microphone import Milestone, SimulatedMicrophone


@dataclass(frozen=True)
class TimedTurn:
    """A transcript released at virtual time ``at``, or ``delay`` after the
    milestone ``after`` (such as ``mic.speech_ended(i)``) was reached; ``delay``
    is a delay spec (seconds, or a distribution: a windowed timer, see
    :mod:`agentsim.timing`).

    Release times are absolute: a consumer that asks for the next turn late
    gets it at once, as from a real transcriber that has been buffering."""

    text: str
    at: float | None = None
    after: Milestone | None = None
    delay: DelaySpec = 0.0


def _timed_turn(index: int, turn: object) -> TimedTurn:
    if isinstance(turn, TimedTurn):
        return turn
    if isinstance(turn, tuple) and len(turn) == 2 and isinstance(turn[1], str):
        return TimedTurn(turn[1], at=turn[0])
    raise SimulationConfigError(f"turns[{index}]", turn, "a TimedTurn, or a (seconds, text) tuple")


class TimedTranscriptionSession(voice_testing().ScriptedTranscriptionSession):  # type: ignore[misc]
    """The SDK's ``ScriptedTranscriptionSession``, with each turn released on time.

    Pass it to ``agents.voice.testing.ScriptedSTTModel(sessions=[...])``.
    ``turns`` are :class:`TimedTurn`\\ s or ``(at_seconds, text)`` pairs. By
    default the session ends after its last turn; with ``ends=`` (a
    milestone, e.g. ``mic.finished``) it stays open until then, like a real session that
    ends with its audio; with ``audio_input`` it reads that input's frames
    (``frames_heard``) as a transcriber would — a session with no turns at all then ends when the
    caller hangs up::

        session = TimedTranscriptionSession.from_microphone(mic, delay=0.3)
        stt = ScriptedSTTModel(sessions=[session])
    """

    def __init__(
        self,
        turns: Sequence[TimedTurn | tuple[float, str]] = (),
        *,
        ends: Milestone | None = None,
        audio_input: StreamedAudioInput | None = None,
        close_error: Exception | None = None,
    ) -> None:
        if isinstance(turns, (str, bytes)) or not isinstance(turns, Sequence):
            raise SimulationConfigError("turns", turns, "a list of TimedTurn, or (seconds, text) tuples")
        timed = [_timed_turn(index, turn) for index, turn in enumerate(turns)]
        if ends is not None and not isinstance(ends, Milestone):
            raise SimulationConfigError("ends", ends, "a Milestone (e.g. mic.finished) the session stays open until, or None")
        if audio_input is not None and not hasattr(audio_input, "queue"):
            raise SimulationConfigError("audio_input", audio_input, "the pipeline's StreamedAudioInput, or None")
        if close_error is not None and not isinstance(close_error, Exception):
            raise SimulationConfigError("close_error", close_error, "an exception instance the session raises on close, or None")
        for index, turn in enumerate(timed):
            if (turn.at is None) == (turn.after is None):
                raise SimulationConfigError(f"turns[{index}]", turn, "a turn released either `at` a time or `after` an event")
        super().__init__([turn.text for turn in timed], close_error=close_error)
        self._timed = timed
        self._delays = [DelaySource(turn.delay, name=f"turns[{index}].delay", stream=f"stt:turn{index}") for index, turn in enumerate(timed)]
        self._ends = ends
        self._audio_input = audio_input
        #: Virtual time each turn was released, in order.
        self.released_at: list[float] = []
        #: Audio frames read from ``audio_input`` (a transcriber consumes its audio).
        self.frames_heard = 0

    @classmethod
    def from_microphone(cls, mic: SimulatedMicrophone, *, delay: DelaySpec = 0.3, ends_with_audio: bool = True) -> TimedTranscriptionSession:
        """One turn per speech segment with text, released ``delay`` (a delay
        spec) after it ends."""
        turns = [
            TimedTurn(text, after=mic.speech_ended(index), delay=delay)
            for index, text in enumerate(mic.speech_texts)
            if text is not None
        ]
        return cls(turns, ends=mic.finished if ends_with_audio else None, audio_input=mic.input)

    async def transcribe_turns(self) -> AsyncIterator[str]:
        # Like a real transcriber, read the audio as it arrives (otherwise an
        # hour of microphone frames would pile up in the input queue).
        listener = asyncio.get_running_loop().create_task(self._listen()) if self._audio_input is not None else None
        try:
            while self._timed and not self.closed:
                turn = self._timed[0]
                if turn.after is None:
                    assert turn.at is not None
                    await direct_time.sleep_until(turn.at)
                else:
                    await self._delays[0].sleep_from(await turn.after.wait(), len(self.released_at))
                if self.closed:
                    return
                self._timed.pop(0)
                self._delays.pop(0)
                self._turns.pop(0)
                self.released_at.append(direct_time.current_time())
                record_event("stt", f"turn released: {turn.text}")
                yield turn.text
            if self._ends is not None and not self.closed:
                await self._ends.wait()
        finally:
            if listener is not None:
                listener.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await listener

    async def _listen(self) -> None:
        assert self._audio_input is not None
        queue = self._audio_input.queue
        while await queue.get() is not None:
            self.frames_heard += 1
