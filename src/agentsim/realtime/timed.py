"""``TimedRealtimeModel``: the SDK's own ``ScriptedRealtimeModel``, on the clock.

``agents.realtime.testing.ScriptedRealtimeModel`` (what the Python testing
guide teaches) answers every send at once. Wrapped, the same script gains
what a network and a server add: replies ``latency`` after the send that
triggered them, assistant audio paced by its duration, and a connection that
drops at a chosen instant — one line around an existing test::

    model = TimedRealtimeModel(ScriptedRealtimeModel([RealtimeStep(...)]), latency=0.3)
    model.disconnect_at(2.0)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any


from .._kernel.backends import direct_time
from .._kernel.core import current_core, record_event
from .._kernel.errors import SimulationConfigError
from .._kernel.validation import non_negative, whole
from ..audio import pcm
from ..contrib.openai_agents.sdk import (
    RealtimeModel,
    RealtimeModelAudioEvent,
    RealtimeModelConfig,
    RealtimeModelEvent,
    RealtimeModelListener,
    RealtimeModelSendEvent,
    RealtimeModelSendInterrupt,
    interrupt_scope,
)
from ..toolkit.timing import DelaySource, DelaySpec, Speed, check_speed, uniform
from ..contrib.openai_agents._wrapping import Wrapping
from .listeners import Listeners, closing_events


class _Relay(RealtimeModelListener):
    """The wrapped model's only listener: hands its events to the wrapper."""

    def __init__(self, receive: Callable[[RealtimeModelEvent], None]) -> None:
        self._receive = receive

    async def on_event(self, event: RealtimeModelEvent) -> None:
        self._receive(event)


class TimedRealtimeModel(Wrapping, RealtimeModel):
    """Wrap a ``RealtimeModel`` (the SDK's ``ScriptedRealtimeModel``) so its
    events reach the session on virtual time.

    ``latency``: a delay spec (see :mod:`agentsim.timing`) from each send (and
    the connect) to the first event it triggers, drawn once per send; events
    the test pushes with ``model.emit(...)`` take it too. ``connect_latency``:
    how long ``connect`` takes; like the SDK's scripted model, ``connect``
    returns once the wrapped model's connect events reached the listeners. ``audio_pace``: assistant audio
    (``RealtimeModelAudioEvent``, pcm16 at ``sample_rate``) leaves no faster
    than its duration ``/ audio_pace`` (``1.0``: real time; a ``(low, high)``
    range makes each chunk's spacing a window; ``None``: no pacing). Events
    keep their order. An ``interrupt`` send drops the queued audio of the
    response it cancels (all, or the one it names; not ``playback_only``),
    as a server stops generating. Attributes the wrapper does not define
    (``sent_events``, ``assert_complete``, ``emit`` …) are the wrapped
    model's.
    """

    def __init__(
        self,
        model: RealtimeModel,
        *,
        latency: DelaySpec = 0.0,
        connect_latency: DelaySpec = 0.0,
        audio_pace: Speed | None = 1.0,
        sample_rate: int = 24_000,
    ) -> None:
        if not all(callable(getattr(model, name, None)) for name in ("connect", "send_event", "add_listener", "close")):
            raise SimulationConfigError("model", model, "a RealtimeModel (connect, add_listener, send_event, close), e.g. ScriptedRealtimeModel([...])")
        self.model = model
        self._latency = DelaySource(latency, name="latency", stream="realtime-timed:latency")
        self._connect_latency = DelaySource(connect_latency, name="connect_latency", stream="realtime-timed:connect")
        # Seconds of sending per second of audio: 1 / pace, or a window of them.
        self._pace: DelaySource | None = None
        if audio_pace is not None:
            low, high = check_speed(audio_pace, name="audio_pace")
            self._pace = DelaySource(1.0 / low if low == high else uniform(1.0 / high, 1.0 / low), name="audio_pace", stream="realtime-timed:pace")
        self._chunks = 0
        self._sample_rate = whole("sample_rate", sample_rate, minimum=1, expected="samples per second of the assistant's pcm16 audio")
        self._listeners = Listeners()
        # (nominal due instant, event, the window (earliest, latest) its batch's
        # first event fires in, or None; the batch: replies to one send).
        self._queue: deque[tuple[float, RealtimeModelEvent, tuple[float, float] | None, int]] = deque()
        self._wake = asyncio.Event()
        self._delivery: asyncio.Task[None] | None = None
        self._drop: asyncio.Task[None] | None = None
        self._sends = 0
        self._pushes = 0
        # While a send is in progress: when its replies may start (and the window of it).
        self._batch_due: tuple[float, tuple[float, float] | None, int] | None = None
        self._batch_numbers = itertools.count()
        self._windowed_batch = -1  # the last batch whose first event took the window
        self._audio_free_at = 0.0
        self._drop_plan: tuple[float, bool] | None = None
        # Events received from the wrapped model, and how many of them were
        # delivered or dropped: connect waits on these for its own events.
        self._received = 0
        self._settled = 0
        self._settled_event = asyncio.Event()
        #: True once the connection dropped (``disconnect_at``).
        self.dropped = False
        model.add_listener(_Relay(self._receive))

    # -- RealtimeModel ----------------------------------------------------------------

    def add_listener(self, listener: RealtimeModelListener) -> None:
        self._listeners.add(listener)

    def remove_listener(self, listener: RealtimeModelListener) -> None:
        self._listeners.remove(listener)

    async def connect(self, options: RealtimeModelConfig) -> None:
        if not isinstance(options, Mapping):
            raise SimulationConfigError("options", options, "the RealtimeModelConfig dict connect() takes")
        await self._connect_latency.sleep(0)
        loop = asyncio.get_running_loop()
        self._delivery = loop.create_task(self._deliver_forever(), name="timed-realtime-delivery")
        self._delivery.add_done_callback(lambda _: self._settled_event.set())
        if self._drop_plan is not None:
            self._drop = loop.create_task(self._drop_at(*self._drop_plan), name="timed-realtime-drop")
        try:
            async with self._batch():
                await self.model.connect(options)
            # As the SDK's scripted model does, connect returns once the
            # model's connect events reached the listeners (after their
            # latency): a session handles them inside its __aenter__.
            await self._delivered_through(self._received)
        except BaseException:
            await self._stop()  # a failed connect leaves no delivery task behind
            raise

    async def send_event(self, event: RealtimeModelSendEvent) -> None:
        if isinstance(event, RealtimeModelSendInterrupt):
            self._cancel_queued_audio(event)
        async with self._batch():
            await self.model.send_event(event)

    async def send_event_if(self, event: RealtimeModelSendEvent, send_if: Callable[[], bool]) -> bool:
        if not callable(send_if):
            raise SimulationConfigError("send_if", send_if, "a function () -> bool checked at the commit point")
        if not send_if():
            return False
        await self.send_event(event)
        return True

    async def close(self) -> None:
        await self._stop()
        await self.model.close()

    # -- the connection dropping ------------------------------------------------------

    def disconnect_at(self, when: float, *, clean: bool = False) -> None:
        """Drop the connection at virtual time ``when``: queued events are lost;
        listeners get an ``exception`` event with the ``websockets``
        ``ConnectionClosedError`` the real adapter reports (``clean=True``: a
        normal close — ``connection_status("disconnected")`` and end of
        stream); the wrapped model is closed, so later sends fail as its own
        sends after a close do. Call it before or after connecting."""
        non_negative("when", when, expected="a virtual time in seconds >= 0")
        self._drop_plan = (when, clean)
        if self._delivery is not None and self._drop is None:
            self._drop = asyncio.get_running_loop().create_task(self._drop_at(when, clean), name="timed-realtime-drop")

    async def _drop_at(self, when: float, clean: bool) -> None:
        await direct_time.sleep_until(when)
        self.dropped = True
        self._drop_plan = None  # once: a reconnect is not dropped again
        record_event("disconnect", "clean" if clean else "unclean")
        self._settle(len(self._queue))
        self._queue.clear()
        delivery, self._delivery = self._delivery, None
        if delivery is not None:
            delivery.cancel()
        with contextlib.suppress(Exception):
            await self.model.close()
        for event in closing_events(clean):
            await self._deliver(event)

    # -- timing -----------------------------------------------------------------------

    def _due(self, index: int) -> tuple[float, tuple[float, float] | None]:
        """When replies to send ``index`` may start: the nominal instant and,
        where the policy explores windows and the latency is a range, the
        window the first of them fires in (else a seeded draw, nominal
        under fifo)."""
        now = direct_time.current_time()
        window = self._latency.window(index)
        if window is not None and self._latency.windowed():
            return now + window[1], (now + window[0], now + window[2])
        return now + self._latency.seconds(index), None

    @contextlib.asynccontextmanager
    async def _batch(self) -> Any:
        # Replies to one send share one latency, set when the send is made.
        outer = self._batch_due
        self._batch_due = (*self._due(self._sends), next(self._batch_numbers))
        self._sends += 1
        try:
            yield
        finally:
            self._batch_due = outer

    def _receive(self, event: RealtimeModelEvent) -> None:
        batch = self._batch_due
        if batch is None:  # pushed by the test (model.emit): its own latency
            batch = (*self._due(self._sends + self._pushes), next(self._batch_numbers))
            self._pushes += 1
        due, window, number = batch
        if window is not None and number == self._windowed_batch:
            window = None  # only a batch's first event has the window; the rest follow it
        elif window is not None:
            self._windowed_batch = number
        # What follows a chunk of audio waits until the chunk is sent: the
        # server generates in order (a turn ends after its last chunk).
        floor = self._audio_free_at
        if self._queue:
            floor = max(floor, self._queue[-1][0])  # order is kept
        due = max(due, floor)
        if isinstance(event, RealtimeModelAudioEvent) and self._pace is not None:
            seconds = pcm.duration_ms(len(event.data), self._sample_rate) / 1000
            self._audio_free_at = due + seconds * self._pace.seconds(self._chunks)
            self._chunks += 1
        if window is not None:
            window = (max(window[0], floor), max(window[1], floor))
            if window[1] <= window[0]:
                window = None
        self._queue.append((due, event, window, number))
        self._received += 1
        self._wake.set()

    def _cancel_queued_audio(self, event: RealtimeModelSendInterrupt) -> None:
        playback_only, response_id = interrupt_scope(event)
        if playback_only:
            return
        kept = [
            entry
            for entry in self._queue
            if not (isinstance(entry[1], RealtimeModelAudioEvent) and response_id in (None, entry[1].response_id))
        ]
        if len(kept) != len(self._queue):
            record_event("drop", f"{len(self._queue) - len(kept)} queued audio event(s): interrupted")
            self._settle(len(self._queue) - len(kept))
            self._queue = deque(kept)
            self._audio_free_at = direct_time.current_time()

    async def _deliver_forever(self) -> None:
        while True:
            while not self._queue:
                self._wake.clear()
                await self._wake.wait()
            head = self._queue[0]
            await self._sleep_until(head[0], head[2])
            if head[2] is not None and self._queue and self._queue[0] is head:
                self._follow(head)
            # Delivered unless an interrupt dropped it meanwhile (compared by
            # identity: the clock's ticks may round the due time down).
            if self._queue and self._queue[0] is head:
                await self._deliver(self._queue.popleft()[1])
                self._settle(1)

    def _follow(self, head: tuple[float, RealtimeModelEvent, tuple[float, float] | None, int]) -> None:
        """The rest of ``head``'s batch keeps its spacing from the instant the
        window fired (replies to one send share one latency)."""
        shift = direct_time.current_time() - head[0]
        if shift:
            self._queue = deque(
                (entry[0] + shift, entry[1], None, entry[3]) if entry[3] == head[3] and entry is not head else entry for entry in self._queue
            )
            self._audio_free_at += shift

    @staticmethod
    async def _sleep_until(due: float, window: tuple[float, float] | None) -> None:
        """Until ``due``, or within ``window`` where the policy picks the instant."""
        core = current_core()
        if window is None or core is None:
            await direct_time.sleep_until(due)
            return
        now = direct_time.current_time()
        low, nominal, high = (max(0.0, instant - now) for instant in (window[0], due, window[1]))
        if high > low:
            core.windowed_timers += 1
            await core.sleep_window(low, nominal, high)
        else:
            await direct_time.sleep_until(due)

    async def _deliver(self, event: RealtimeModelEvent) -> None:
        await self._listeners.deliver(event)

    def _settle(self, count: int) -> None:
        """``count`` received events were delivered or dropped."""
        self._settled += count
        self._settled_event.set()

    async def _delivered_through(self, received: int) -> None:
        """Wait until the first ``received`` events were delivered or dropped."""
        while self._settled < received:
            if self._delivery is None or self._delivery.done():
                return  # dropped or failed meanwhile: nothing more will be delivered
            self._settled_event.clear()
            await self._settled_event.wait()

    async def _stop(self) -> None:
        self._settle(len(self._queue))
        self._queue.clear()
        for task in (self._delivery, self._drop):
            if task is not None and not task.done() and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._delivery = self._drop = None

