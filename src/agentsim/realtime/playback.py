"""What the real adapter believes is playing, so an interrupt says what it cut.

``OpenAIRealtimeWebSocketModel`` answers an ``interrupt`` send by emitting
``audio_interrupted`` for the audio it thinks is playing — the last assistant
audio item it received (or, for an interrupt scoped to a response, every
audio item of that response), as the app's playback tracker reports it if
the app gave one — and then forgets that item. The scripted transport keeps
the same books so that the application sees the same events on either side.
"""

from __future__ import annotations

from typing import Any

from ..contrib.openai_agents.sdk import RealtimeModelAudioEvent, RealtimeModelAudioInterruptedEvent, RealtimePlaybackTracker

AudioItem = tuple[str, int]  # (item_id, content_index)


class PlaybackBooks:
    """The adapter's audio bookkeeping: the last item, and the items of each response."""

    def __init__(self) -> None:
        self._tracker: RealtimePlaybackTracker | None = None
        self._last: AudioItem | None = None
        self._by_response: dict[str, list[AudioItem]] = {}

    def reset(self, tracker: RealtimePlaybackTracker | None) -> None:
        """A new connection: forget everything; ``tracker`` is the app's, if any."""
        self._tracker = tracker
        self._last = None
        self._by_response.clear()

    def on_audio(self, event: RealtimeModelAudioEvent) -> None:
        item = (event.item_id, event.content_index)
        self._last = item
        response_id = getattr(event, "response_id", None)
        if response_id is not None:
            items = self._by_response.setdefault(response_id, [])
            if item not in items:
                items.append(item)

    def interrupted(self, response_id: str | None) -> list[RealtimeModelAudioInterruptedEvent]:
        """The ``audio_interrupted`` events an interrupt produces, and forget those items."""
        if response_id is not None:
            items = self._by_response.pop(response_id, [])
            if self._last in items:
                self._last = None
            return [_event(item) for item in items]
        current = self._current()
        if current is None:
            return []
        self._last = None
        if self._tracker is not None:
            self._tracker.on_interrupted()
        return [_event(current)]

    def _current(self) -> AudioItem | None:
        if self._tracker is not None:
            state: Any = self._tracker.get_state()
            item_id, elapsed = state.get("current_item_id"), state.get("elapsed_ms")
            if item_id is None or elapsed is None or elapsed < 0:
                return None
            return (item_id, state.get("current_item_content_index") or 0)
        return self._last


def _event(item: AudioItem) -> RealtimeModelAudioInterruptedEvent:
    return RealtimeModelAudioInterruptedEvent(item_id=item[0], content_index=item[1])
