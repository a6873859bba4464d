"""The client events the server handles, one handler each, with the rules they check."""

from __future__ import annotations

from typing import Any

from . import _events as ev
from ._session import apply_update
from ._turns import UserTurns
from ..moments import INTERRUPT_DURING_TOOL_CALL
from ..._kernel.coverage import sometimes


class ClientEvents(UserTurns):
    """The client's events as the server handles them, one handler per event
    type (``_on_<type with dots as underscores>``), each checking its rules."""

    # -- client events ----------------------------------------------------------------------

    def _arrive(self, event: dict[str, Any]) -> None:
        kind = event.get("type", "?")
        if self.closed:
            return  # in flight when the server closed: lost, as on a real network
        self._record("client", kind)
        if self.playback is not None:
            if kind == "input_audio_buffer.append":
                self._on_input_audio_buffer_append(event)
            self.playback.client_event(event)
            return
        handler = getattr(self, "_on_" + kind.replace(".", "_"), None)
        if handler is None:
            self._error("unknown_event", f"unsupported client event {kind!r}", event)
            return
        handler(event)

    def _on_session_update(self, event: dict[str, Any]) -> None:
        update = event.get("session", {})
        voice = update.get("audio", {}).get("output", {}).get("voice") if isinstance(update.get("audio"), dict) else None
        current = self._session.get("audio", {}).get("output", {}).get("voice")
        if self._broke("voice_fixed_after_audio", event, current=current, requested=voice, audio_produced=self._audio_produced):
            return
        audio_input = update.get("audio", {}).get("input", {}) if isinstance(update.get("audio"), dict) else {}
        if isinstance(audio_input, dict) and self._broke("transcription_settings", event, transcription=audio_input.get("transcription")):
            return
        self._session = apply_update(self._session, update)
        self._send(ev.session_event("session.updated", self._ids.next("event"), self._session))

    def _on_conversation_item_create(self, event: dict[str, Any]) -> None:
        item = dict(event.get("item", {}))
        if self._broke("known_tool_call", event, item=item, known_calls=self._known_calls):
            return
        item.setdefault("id", self._ids.next("item"))
        item.setdefault("object", "realtime.item")
        if item.get("type") == "function_call_output":
            self._open_calls.discard(item.get("call_id", ""))
        if item.get("type") == "message" and item.get("role") == "user":
            texts = [part.get("text", "") for part in item.get("content", []) if isinstance(part, dict)]
            self._last_user_text = " ".join(text for text in texts if text)
        self._add_item(item)

    def _on_conversation_item_retrieve(self, event: dict[str, Any]) -> None:
        item = self._items.get(event.get("item_id", ""))
        if item is None:
            self._error("item_not_found", f"no item {event.get('item_id')!r}", event)
            return
        self._send(ev.item_event("conversation.item.retrieved", self._ids.next("event"), item))

    def _on_conversation_item_delete(self, event: dict[str, Any]) -> None:
        item_id = event.get("item_id", "")
        if self._items.pop(item_id, None) is None:
            self._error("item_not_found", f"no item {item_id!r}", event)
            return
        self._send({"type": "conversation.item.deleted", "event_id": self._ids.next("event"), "item_id": item_id})

    def _on_input_audio_buffer_append(self, event: dict[str, Any]) -> None:
        ms = len(event.get("audio", "")) * 3 / 4 / 48  # base64 pcm16 at 24 kHz
        self.input_audio_ms += ms
        self._buffered_input_ms += ms

    def _on_input_audio_buffer_commit(self, event: dict[str, Any]) -> None:
        if self._broke("commit_needs_audio", event, buffered_ms=self._buffered_input_ms):
            return
        self._buffered_input_ms = 0.0
        self._commit_user_turn(self._ids.next("item"), self._pending_speech.pop(0) if self._pending_speech else None)

    def _on_input_audio_buffer_clear(self, event: dict[str, Any]) -> None:
        self._buffered_input_ms = 0.0
        self._send({"type": "input_audio_buffer.cleared", "event_id": self._ids.next("event")})

    def _on_output_audio_buffer_clear(self, event: dict[str, Any]) -> None:
        pass  # WebRTC/SIP only; over WebSocket the client owns playback

    def _on_response_create(self, event: dict[str, Any]) -> None:
        if self._broke("single_active_response", event, active_id=self._active.id if self._active is not None else None):
            return
        requested = event.get("response") or {}
        self._start_response(requested.get("output_modalities"))

    def _on_response_cancel(self, event: dict[str, Any]) -> None:
        active = self._active
        wanted = event.get("response_id")
        if active is None or (wanted and wanted != active.id):
            self._error("response_cancel_not_active", "Cancellation failed: no active response found", event)
            return
        sometimes(bool(self._open_calls), INTERRUPT_DURING_TOOL_CALL)
        self._request_cancel(active, "client_cancelled")

    def _on_conversation_item_truncate(self, event: dict[str, Any]) -> None:
        item_id, end_ms = event.get("item_id", ""), int(event.get("audio_end_ms", 0))
        sent = self._audio_sent_ms.get(item_id) if item_id in self._items else None
        if sent is None:
            self._error("item_not_found", f"no assistant audio item {item_id!r}", event)
            return
        if self._broke("truncate_within_sent_audio", event, item_id=item_id, end_ms=end_ms, sent_ms=sent):
            return
        active = self._active
        if active is not None and active.item_id == item_id and not active.cancel_requested and active.truncated_by is None:
            # Truncating the answer being generated does not stop it: unless a
            # cancel follows, the server keeps streaming what the user cut off.
            active.truncated_by = event
            active.truncated_sent_ms = sent
        self._send(ev.truncated(self._ids.next("event"), item_id, int(event.get("content_index", 0)), end_ms))
