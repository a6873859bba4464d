"""A simulated audio player: the second clock of a voice call, audio actually heard.

Virtual wall time runs on its own; what the caller has *heard* lags behind
what the client received (network delay to the device, a jitter buffer that
fills before playback starts) and stops short when an interruption flushes
the buffer. Truncation is only correct if it is measured on this second
clock, so the player reports what it played to the SDK's own
``RealtimePlaybackTracker``, which the real adapter reads when it interrupts.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from .._kernel.core import record_event
from .._kernel.errors import SimulationConfigError
from .._kernel.validation import non_negative
from .._kernel.lanes import register_lane
from .._kernel.ownership import OneSimulation
from ..contrib.openai_agents.sdk import RealtimePlaybackTracker
from ..toolkit.link import OrderedLink
from ..toolkit.timing import DelaySource, DelaySpec

_T = TypeVar("_T")

# Playback on the timeline: a lane, and counters of what was heard.
register_lane("playback", "playback", counters={"heard_ms": "audio heard (ms)", "position_ms": "playback position (ms)"})

#: pcm16 mono at 24 kHz, the Realtime API's default format: 48 bytes per ms.
BYTES_PER_MS = 48.0


@dataclass
class _Chunk:
    item_id: str
    content_index: int
    ms: float


class SimulatedPlayer:
    """Plays assistant audio at real rate on the virtual clock.

    Feed it the session's events (``on_event`` takes ``audio``,
    ``audio_interrupted`` and ``audio_end``, from the session or the model;
    everything else is ignored). Each chunk reaches the device
    ``network_delay`` after the client got it (a delay spec; jitter is seeded
    and never reorders chunks); playback starts once ``jitter_buffer_ms`` of
    audio is buffered or the item's audio ended, and restarts the same way
    after an underrun. Every fully played chunk is reported to
    :attr:`tracker`; ``audio_interrupted`` flushes the buffer and stops::

        player = SimulatedPlayer(network_delay=0.04, jitter_buffer_ms=80)
        session = await runner.run(model_config={"playback_tracker": player.tracker})
        async for event in session:
            player.on_event(event)
        assert truncated_at <= player.played_ms(item_id)
    """

    def __init__(self, *, network_delay: DelaySpec = 0.0, jitter_buffer_ms: float = 0.0, tracker: RealtimePlaybackTracker | None = None) -> None:
        non_negative("jitter_buffer_ms", jitter_buffer_ms, expected="a number of milliseconds >= 0")
        self._network = OrderedLink(DelaySource(network_delay, name="network_delay", stream="player:network"))
        self.jitter_buffer_ms = jitter_buffer_ms
        #: The SDK's tracker this player reports to; pass it as ``model_config["playback_tracker"]``.
        self.tracker = tracker if tracker is not None else RealtimePlaybackTracker()
        self._buffer: deque[_Chunk] = deque()
        self._ended: set[str] = set()
        self._playing: _Chunk | None = None
        self._playing_since = 0.0
        self._playing_handle: asyncio.TimerHandle | None = None
        self._played: dict[str, float] = {}
        self._generation = 0  # bumped by interruptions: late arrivals of flushed audio are dropped
        self._one_run = OneSimulation("SimulatedPlayer", "a new player per run: build it inside the simulated function")
        #: Total milliseconds of audio heard.
        self.heard_ms = 0.0
        #: Items whose playback an interruption cut short.
        self.interrupted: list[str] = []
        self._listeners: list[Callable[[str, str], object]] = []

    # -- inspection -----------------------------------------------------------

    def played_ms(self, item_id: str) -> float:
        """Milliseconds of ``item_id`` the caller has heard so far (including
        the part of the chunk playing now)."""
        if not isinstance(item_id, str):
            raise SimulationConfigError("item_id", item_id, "an assistant item's id (a str)")
        played = self._played.get(item_id, 0.0)
        chunk = self._playing
        if chunk is not None and chunk.item_id == item_id:
            played += min(chunk.ms, (asyncio.get_running_loop().time() - self._playing_since) * 1000)
        return played

    @property
    def buffered_ms(self) -> float:
        """Audio that reached the device and waits to be played."""
        return sum(chunk.ms for chunk in self._buffer)

    @property
    def playing(self) -> bool:
        return self._playing is not None

    def add_playback_listener(self, listener: Callable[[str, str], object]) -> None:
        """Call ``listener(what, item_id)`` at each change of playback:
        ``"start"``, ``"underrun"`` (the buffer ran dry), ``"finished"`` (an
        item played to its end) and ``"interrupted"``. Who listens to the
        caller's ear uses it: the simulated caller, the server's idle timeout."""
        if not callable(listener):
            raise SimulationConfigError("listener", listener, "a function (what, item_id) called at each change of playback")
        self._listeners.append(listener)

    # -- input -------------------------------------------------------------------

    def on_event(self, event: Any) -> None:
        """Take one session (or model) event; non-audio events are ignored."""
        kind = getattr(event, "type", None)
        if kind == "audio":
            data = event.audio.data if hasattr(event, "audio") else event.data
            self.receive(event.item_id, event.content_index, len(data) / BYTES_PER_MS)
        elif kind == "audio_interrupted":
            self.interrupt()
        elif kind == "audio_end":
            self._deliver_later(self._end_of_item, event.item_id)

    def receive(self, item_id: str, content_index: int, ms: float) -> None:
        """Audio of ``ms`` milliseconds for ``item_id`` left the client toward the device."""
        if not (isinstance(item_id, str) and content_index.__class__ is int and ms.__class__ in (int, float) and 0 <= ms < math.inf):
            _bad_chunk(item_id, content_index, ms)
        self._deliver_later(self._arrive, _Chunk(item_id, content_index, ms))

    def interrupt(self) -> None:
        """Stop now and flush everything buffered or still in flight."""
        self._generation += 1
        chunk = self._playing
        if chunk is not None:
            heard = min(chunk.ms, (asyncio.get_running_loop().time() - self._playing_since) * 1000)
            self._account(chunk.item_id, heard)  # heard, but a partial chunk is not reported as played
            if self._playing_handle is not None:
                self._playing_handle.cancel()
            self._playing = None
            self.interrupted.append(chunk.item_id)
            self._record("interrupted", chunk.item_id)
        self._buffer.clear()

    def close(self) -> None:
        """Stop playing and drop what is in flight (no timers left behind)."""
        self.interrupt()
        self._network.clear()

    # -- the device -----------------------------------------------------------------

    def _deliver_later(self, action: Callable[[_T, int], None], what: _T) -> None:
        """``action(what, generation)`` when it reaches the device (``generation``:
        the one in force now; an interruption meanwhile makes it stale)."""
        self._one_run.check()
        # (A partial, not a lambda: its call is C, once per chunk.)
        self._network.send(partial(action, what, self._generation))

    def _arrive(self, chunk: _Chunk, generation: int) -> None:
        if generation != self._generation:
            return  # flushed by an interruption while in flight
        self._buffer.append(chunk)
        self._maybe_start()

    def _end_of_item(self, item_id: str, generation: int) -> None:
        if generation == self._generation:
            self._ended.add(item_id)
            self._maybe_start()

    def _maybe_start(self) -> None:
        if self._playing is not None or not self._buffer:
            return
        head = self._buffer[0].item_id
        if self.buffered_ms >= self.jitter_buffer_ms or head in self._ended or any(chunk.item_id != head for chunk in self._buffer):
            self._record("start", head)
            self._play_next()

    def _play_next(self) -> None:
        if not self._buffer:
            self._playing = None
            self._record("underrun", "")
            return
        loop = asyncio.get_running_loop()
        previous = self._playing
        chunk = self._playing = self._buffer.popleft()
        if previous is not None and previous.item_id != chunk.item_id and self._listeners:
            # The next item follows with no gap: a start for whoever listens
            # (not on the trace, which records only the device's own starts).
            for listener in self._listeners:
                listener("start", chunk.item_id)
        self._playing_since = loop.time()
        self._playing_handle = loop.call_at(self._playing_since + chunk.ms / 1000, self._finish_chunk)

    def _finish_chunk(self) -> None:
        chunk = self._playing
        assert chunk is not None
        self._account(chunk.item_id, chunk.ms)
        self.tracker.on_play_ms(chunk.item_id, chunk.content_index, chunk.ms)
        if self._buffer:
            self._play_next()
        else:
            self._playing = None
            if chunk.item_id in self._ended:
                self._record("finished", chunk.item_id)
            else:
                self._record("underrun", chunk.item_id)

    def _account(self, item_id: str, ms: float) -> None:
        self._played[item_id] = self._played.get(item_id, 0.0) + ms
        self.heard_ms += ms

    def _record(self, what: str, item_id: str) -> None:
        # key=value details: the timeline draws heard_ms as a counter track.
        position = self._played.get(item_id, 0.0)
        record_event("playback", f"{what} item={item_id or '-'} position_ms={position:.1f} heard_ms={self.heard_ms:.1f}")
        for listener in self._listeners:
            listener(what, item_id)


def _bad_chunk(item_id: object, content_index: object, ms: object) -> None:
    """What ``receive`` was given wrong (checked inline, raised here)."""
    if not isinstance(item_id, str):
        raise SimulationConfigError("item_id", item_id, "an assistant item's id (a str)")
    if content_index.__class__ is not int:
        raise SimulationConfigError("content_index", content_index, "the content part's index, a whole number")
    raise SimulationConfigError("ms", ms, "milliseconds of audio, a finite number >= 0")
