"""Scripted user turns: server VAD, barge-in, committed items, input transcription."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

from . import _events as ev
from ._session import turn_detection
from ._responses import Responses
from ._rules import LANGUAGE_LIST_MODELS
from ._state import NON_STREAMING_TRANSCRIBERS, TRANSCRIPTION_DELAYS
from ..moments import BARGE_IN_DURING_AUDIO, INTERRUPT_DURING_TOOL_CALL
from ..._kernel.coverage import sometimes


class UserTurns(Responses):
    """Scripted user speech as server VAD hears it: speech started/stopped
    (a barge-in cancels the active response), the committed item, its input
    transcription, then a response."""

    # -- scripted user speech ---------------------------------------------------------------------

    async def _user_turn(self, transcript: str, start: float, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(start - loop.time())
        if self.closed:
            return  # not connected yet: nobody hears it
        detection = turn_detection(self._session)
        if detection is None:
            # No VAD: the server hears nothing until the app commits the buffer;
            # the words become the transcript of that commit.
            await asyncio.sleep(seconds)
            self._pending_speech.append(transcript)
            return
        item_id = self._ids.next("item")
        self._cancel_idle_timer()
        self._send(ev.speech_started(self._ids.next("event"), item_id, round((loop.time() - self._connected_at) * 1000)))
        active = self._active
        sometimes(active is not None and not active.text_only and self._audio_sent_ms.get(active.item_id or "", 0.0) > 0, BARGE_IN_DURING_AUDIO)
        sometimes(bool(self._open_calls), INTERRUPT_DURING_TOOL_CALL)
        if self._active is not None and detection.get("interrupt_response", True):
            self._request_cancel(self._active, "turn_detected")  # barge-in
        await asyncio.sleep(seconds)
        self._last_speech_ms = round((loop.time() - self._connected_at) * 1000)
        self._send(ev.speech_stopped(self._ids.next("event"), item_id, self._last_speech_ms))
        self._buffered_input_ms = 0.0  # VAD committed the buffer
        self._commit_user_turn(item_id, transcript)
        if detection.get("create_response", True):
            await self._idle.wait()  # a cancelled response must end first
            if not self.closed:
                self._start_response()

    def _commit_user_turn(self, item_id: str, transcript: str | None) -> None:
        self._send(ev.committed(self._ids.next("event"), item_id, self._last_item_id))
        self._add_item(ev.user_audio_item(item_id, None))
        if transcript is None:
            return
        self._last_user_text = transcript  # the model hears the words, transcribed or not
        transcription = self._session.get("audio", {}).get("input", {}).get("transcription")
        if isinstance(transcription, dict) and transcription.get("model"):
            index, model = self._transcriptions, str(transcription["model"])
            self._transcriptions += 1
            latency = self._transcription_latency
            delay = TRANSCRIPTION_DELAYS.get(str(transcription.get("delay")), 0.0)
            if latency.window(index) is None and latency.seconds(index) == 0 and not delay:
                self._send_transcript(item_id, transcript, transcription)  # with the commit, in order
            else:
                self._spawn(self._transcribe(item_id, transcript, transcription, index, delay), self._speech_tasks)

    async def _transcribe(self, item_id: str, transcript: str, transcription: dict[str, Any], index: int, delay: float) -> None:
        # gpt-realtime-whisper's `delay` setting: it waits that much longer
        # for more audio before it writes the text.
        await asyncio.sleep(delay)
        await self._transcription_latency.sleep(index)
        self._send_transcript(item_id, transcript, transcription)

    def _send_transcript(self, item_id: str, transcript: str, transcription: dict[str, Any]) -> None:
        """Input audio transcription: partial transcripts (word by word, for
        models that stream them), then the completed transcript."""
        burst: list[dict[str, Any]] = []
        model = str(transcription["model"])
        if model not in NON_STREAMING_TRANSCRIBERS:
            words = transcript.split(" ")
            burst += [ev.transcription_delta(self._ids.next("event"), item_id, word if position == len(words) - 1 else word + " ") for position, word in enumerate(words)]
        completed = ev.transcription_completed(self._ids.next("event"), item_id, transcript)
        if model in LANGUAGE_LIST_MODELS:
            # These models report the language they detected: the one set, else
            # the first of the possible ones, else English.
            detected = transcription.get("language") or next(iter(transcription.get("languages") or ()), None) or "en"
            completed["languages"] = [{"code": detected}]
        burst.append(completed)
        self._send_together(burst)
