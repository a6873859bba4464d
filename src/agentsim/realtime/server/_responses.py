"""The server's responses: steps, generation, tool calls, cancellation, the idle timeout."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from ...audio import pcm
from ...toolkit.timing import Pacer
from . import _events as ev
from ._script import CallTool, Reply, Step
from ._session import turn_detection
from ._state import ServerState, _Response
from ..moments import CANCEL_BEFORE_FIRST_AUDIO
from ..._kernel.coverage import sometimes


class Responses(ServerState):
    """Responses: the next scripted step, generation (audio or text, paced),
    tool calls, cancellation and its confirmation, and server VAD's idle
    timeout."""

    # -- responses ------------------------------------------------------------------------------

    def _next_step(self) -> Step:
        said = self._last_user_text.lower()
        for index, (phrase, step) in enumerate(self._by_phrase):
            if phrase in said:
                del self._by_phrase[index]
                return step
        return self._steps.pop(0) if self._steps else Reply("")

    def _start_response(self, output_modalities: list[str] | None = None) -> None:
        modalities = output_modalities or self._session.get("output_modalities")
        response = _Response(self._ids.next("resp"), self._next_step(), text_only=modalities == ["text"])
        self._active = response
        self._idle.clear()
        self._responses.append(response)
        response.task = self._spawn(self._respond(response), self._response_tasks)

    def _request_cancel(self, response: _Response, reason: str) -> None:
        if response.cancel_requested:
            return
        if isinstance(response.step, Reply) and not response.text_only:
            sometimes(self._audio_sent_ms.get(response.item_id or "", 0.0) == 0.0, CANCEL_BEFORE_FIRST_AUDIO)
        response.cancel_requested = True
        response.cancel_reason = reason
        self._cancel_latency.call_later(len(self._responses), self._confirm_cancel, response)

    def _confirm_cancel(self, response: _Response) -> None:
        if response.task is not None and not response.task.done():
            response.task.cancel()

    def _stop_tasks(self) -> None:
        # Scripted speech belongs to the connection too: schedule it again
        # after a reconnect (and nothing outlives the call).
        for task in [*self._response_tasks, *self._speech_tasks]:
            task.cancel()
        self._cancel_idle_timer()
        self._idle_after_playback = False
        if self._expiry is not None and self.closed:
            self._expiry.cancel()  # (a session's limit ends with it)
            self._expiry = None
        self._active = None
        self._idle.set()

    async def _respond(self, response: _Response) -> None:
        step, rid = response.step, response.id
        self._send(ev.response_event("response.created", self._ids.next("event"), ev.response(rid, "in_progress", [])))
        if self.rate_limits:
            used = len(self._responses)
            self._send(ev.rate_limits(self._ids.next("event"), ev.REQUESTS_PER_MINUTE - used, ev.TOKENS_PER_MINUTE - 500 * used))
        output: list[dict[str, Any]] = []
        status = "completed"
        try:
            if isinstance(step, CallTool):
                output = [self._call_tool(response, step)]
            else:
                output = [await self._speak(response, step)]
        except asyncio.CancelledError:
            status = "cancelled"
            if response.item_id is not None:
                item = ev.assistant_item(response.item_id, "incomplete", "".join(response.spoken), text=response.text_only)
                self._send(ev.output_item("response.output_item.done", self._ids.next("event"), rid, item))
                output = [item]
            raise  # after response.done (below): the task ends cancelled, as asked
        finally:
            if self._active is response:
                self._active = None
                self._idle.set()
            self._check_truncate_without_cancel(response)
            if status == "completed":
                self._start_idle_timer(after_playback=isinstance(step, Reply) and not response.text_only)
            words = len(response.spoken) or 1
            body = ev.response(rid, status, output, ev.usage(20, words * 2))
            if status == "cancelled":
                body["status_details"] = {"type": "cancelled", "reason": response.cancel_reason}
            self._send(ev.response_event("response.done", self._ids.next("event"), body))

    def _check_truncate_without_cancel(self, response: _Response) -> None:
        if response.truncated_by is None or response.item_id is None:
            return
        more = self._audio_sent_ms.get(response.item_id, 0.0) - response.truncated_sent_ms
        self._broke(
            "truncate_needs_cancel", response.truncated_by, item_id=response.item_id, response_id=response.id, cancelled=response.cancel_requested, streamed_after_ms=more
        )

    # -- idle timeout (server VAD's idle_timeout_ms) ----------------------------------------------

    def _start_idle_timer(self, *, after_playback: bool = False) -> None:
        self._cancel_idle_timer()
        if after_playback and self._playback_player is not None:
            # The service counts the idle time from the end of playback:
            # the player says when (finished, or interrupted).
            self._idle_after_playback = True
            return
        detection = turn_detection(self._session)
        timeout_ms = detection.get("idle_timeout_ms") if detection is not None else None
        if not timeout_ms or self.closed:
            return
        self._idle_timer = asyncio.get_running_loop().call_later(timeout_ms / 1000, self._idle_timeout)

    def _cancel_idle_timer(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def _idle_timeout(self) -> None:
        # No speech since the last answer: the server says so and, as with a
        # turn, answers (typically a prompt to continue).
        self._idle_timer = None
        if self.closed or self._active is not None:
            return
        now_ms = round((asyncio.get_running_loop().time() - self._connected_at) * 1000)
        item_id = self._ids.next("item")
        self._send(ev.timeout_triggered(self._ids.next("event"), item_id, self._last_speech_ms, now_ms))
        detection = turn_detection(self._session) or {}
        if detection.get("create_response", True):
            self._start_response()

    def _call_tool(self, response: _Response, step: CallTool) -> dict[str, Any]:
        rid = response.id
        item_id = response.item_id = self._ids.next("item")
        call_id = step.call_id or self._ids.next("call")
        self._known_calls.add(call_id)
        self._open_calls.add(call_id)
        pending = ev.function_call_item(item_id, call_id, step.name, "", "in_progress")
        self._send(ev.output_item("response.output_item.added", self._ids.next("event"), rid, pending))
        self._send(ev.arguments_done(self._ids.next("event"), rid, item_id, call_id, step.name, step.arguments_json))
        done = ev.function_call_item(item_id, call_id, step.name, step.arguments_json, "completed")
        self._items[item_id] = done
        self._send(ev.output_item("response.output_item.done", self._ids.next("event"), rid, done))
        return done

    async def _speak(self, response: _Response, step: Reply) -> dict[str, Any]:
        """An assistant message: audio with its transcript, or text when the
        session's ``output_modalities`` is ``["text"]``."""
        rid, text = response.id, response.text_only
        item_id = response.item_id = self._ids.next("item")
        self._audio_sent_ms[item_id] = 0.0
        self._items[item_id] = ev.assistant_item(item_id, "in_progress", None, text=text)
        self._send(ev.output_item("response.output_item.added", self._ids.next("event"), rid, self._items[item_id]))
        self._send(ev.content_part("response.content_part.added", self._ids.next("event"), rid, item_id, "", text=text))
        seconds = step.audio_seconds if step.audio_seconds is not None else max(1, len(step.transcript.split())) * self.seconds_per_word
        words = [word + " " for word in step.transcript.split(" ")] if step.transcript else []
        if words:
            words[-1] = words[-1].rstrip()
        await self._first_audio.sleep(len(self._responses) - 1)
        if text:
            await self._stream_text(response, item_id, words, seconds)
        else:
            await self._stream_audio(response, item_id, words, seconds)
        transcript = "".join(response.spoken)
        if text:
            self._send(ev.content_event("response.output_text.done", self._ids.next("event"), rid, item_id, text=transcript))
        else:
            self._send(ev.content_event("response.output_audio.done", self._ids.next("event"), rid, item_id))
            self._send(ev.content_event("response.output_audio_transcript.done", self._ids.next("event"), rid, item_id, transcript=transcript))
        self._send(ev.content_part("response.content_part.done", self._ids.next("event"), rid, item_id, transcript, text=text))
        done = ev.assistant_item(item_id, "completed", transcript, text=text)
        self._items[item_id] = done
        self._send(ev.output_item("response.output_item.done", self._ids.next("event"), rid, done))
        return done

    async def _stream_audio(self, response: _Response, item_id: str, words: list[str], seconds: float) -> None:
        # Chunks paced generation_speed times faster than real time; the
        # transcript's words spread over them.
        samples_per_chunk = max(1, round(24_000 * self.audio_chunk_ms / 1000))
        chunks = pcm.tone_chunks(float(seconds), samples_per_chunk)
        pacer = Pacer(self.audio_chunk_ms / 1000, self.generation_speed, name="generation_speed")
        for index, chunk in enumerate(chunks):
            await pacer.until(index)
            self._send_message("response.output_audio.delta", ev.audio_delta_message(self._ids.next("event"), response.id, item_id, chunk))
            self._audio_produced = True
            self._audio_sent_ms[item_id] += len(chunk) / 48
            for word in words[math.floor(index * len(words) / len(chunks)) : math.floor((index + 1) * len(words) / len(chunks))]:
                response.spoken.append(word)
                self._send(ev.content_event("response.output_audio_transcript.delta", self._ids.next("event"), response.id, item_id, delta=word))

    async def _stream_text(self, response: _Response, item_id: str, words: list[str], seconds: float) -> None:
        # A word at a time, as fast as the audio version would be generated.
        pacer = Pacer(seconds / max(1, len(words)), self.generation_speed, name="generation_speed")
        for index, word in enumerate(words, start=1):
            await pacer.until(index)
            response.spoken.append(word)
            self._send(ev.content_event("response.output_text.delta", self._ids.next("event"), response.id, item_id, delta=word))
