"""``ScriptedRealtimeTransport``: the realtime model boundary, scripted, on the clock.

It implements the SDK's ``RealtimeModel`` completely, so ``RealtimeRunner`` and
``RealtimeSession`` run unmodified on top of it. The application's side
(connect, sends, close) is *recorded* as :class:`RealtimeCall`\\ s; the test's
side *expects* them and *emits* normalized model events, now or at virtual
instants. Events reach listeners through one delivery task per connection,
in order, exactly as the real adapter's websocket reader delivers them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, Literal

import anyio
import anyio.abc
import numpy.typing as npt

from ..toolkit.inbox import Inbox
from .._kernel.core import record_event, require_core
from .._kernel.coverage import sometimes
from .._kernel.errors import SimulationConfigError
from ..scenario import CallScript, ScenarioErrors, run_scenario
from ..toolkit.timing import Speed
from ..contrib.openai_agents.sdk import (
    RealtimeModel,
    RealtimeModelConfig,
    RealtimeModelEvent,
    RealtimeModelAudioDoneEvent,
    RealtimeModelAudioEvent,
    RealtimeModelListener,
    RealtimeModelSendEvent,
    RealtimeModelSendInterrupt,
    RealtimeModelSendToolOutput,
    check_sip_connect,
    interrupt_scope,
)
from .calls import _KIND_OF_CLASS, ConnectOptions, RealtimeCall, kind_of, normalize_kind, snapshot_event
from .errors import (
    IncompleteRealtimeScenarioError,
    RealtimeCallMatcherError,
    RealtimeScenarioTimeoutError,
    ScriptedRealtimeScenarioCancelledError,
    RealtimeScriptError,
    RealtimeTransportDisconnectedError,
    RealtimeTransportNotClosedError,
    ScriptedRealtimeConnectionSupersededError,
    UnexpectedRealtimeCallError,
)
from .listeners import Listeners, closing_events
from .moments import BARGE_IN_DURING_AUDIO, DISCONNECT_DURING_TOOL_CALL, INTERRUPT_DURING_TOOL_CALL
from .playback import PlaybackBooks
from .streams import AudioStream, ScheduledEmit
from .._kernel.validation import limit, non_negative

Status = Literal["disconnected", "connecting", "connected"]

_ERRORS = ScenarioErrors(
    unexpected=UnexpectedRealtimeCallError,
    matcher=RealtimeCallMatcherError,
    incomplete=IncompleteRealtimeScenarioError,
    timeout=RealtimeScenarioTimeoutError,
    cancelled=ScriptedRealtimeScenarioCancelledError,
)


class _Delivery:
    """Events waiting for the delivery task, and who waits for them."""

    __slots__ = ("events", "done", "delivered")

    def __init__(self, events: Sequence[RealtimeModelEvent], *, awaited: bool) -> None:
        self.events = tuple(events)
        # Only an awaited delivery needs a future (streams do not wait, as a
        # server does not wait for its client to process what it sent).
        self.done: asyncio.Future[None] | None = asyncio.get_running_loop().create_future() if awaited else None
        self.delivered = False

    def settle(self) -> None:
        if self.done is not None and not self.done.done():
            self.done.set_result(None)


class ScriptedRealtimeTransport(RealtimeModel):
    """A realtime transport whose far side is a test script on virtual time.

    Use it as the model of a real ``RealtimeRunner``/``RealtimeSession`` and
    drive both sides with :meth:`run_scenario`::

        transport = ScriptedRealtimeTransport()
        runner = RealtimeRunner(agent, model=transport)

        async def scenario(ctx):
            await ctx.expect_call("connect")
            await ctx.expect_call("user_input", lambda call: call.event.user_input == "Hi")
            await ctx.emit(RealtimeModelTranscriptDeltaEvent(item_id="a1", delta="Hello", response_id="r1"))
            await ctx.expect_call("close")

        async def exercise():
            async with await runner.run() as session:
                await session.send_message("Hi")

        await transport.run_scenario(scenario=scenario, exercise=exercise, timeout=5.0)
        transport.assert_complete()
        transport.assert_closed()
    """

    def __init__(self, *, connect_latency: float = 0.0, ignore_calls: Iterable[object] = (), sip: bool = False) -> None:
        """``connect_latency``: virtual seconds a connect takes (status ``"connecting"``
        meanwhile); the connect is recorded when it starts.

        ``sip=True``: the transport stands where the app uses the realtime
        guide's ``OpenAIRealtimeSIPModel()`` (attaching to a SIP call): a
        connect without ``call_id`` (or with both ``call_id`` and a model
        name) fails with the SDK's own ``UserError``, before it is recorded,
        as the SIP model's does (the payload a SIP call is accepted with is
        still ``OpenAIRealtimeSIPModel.build_initial_session_payload``).

        ``ignore_calls``: send kinds (e.g. ``("audio",)``) that are only counted in
        ``call_counts``, not recorded or matched — for long sessions that stream
        microphone audio, whose every chunk a scenario does not want to expect.
        """
        if isinstance(ignore_calls, (str, bytes)) or not isinstance(ignore_calls, Iterable):
            raise SimulationConfigError("ignore_calls", ignore_calls, "a list of send kinds to count only, e.g. ('audio',)")
        if not isinstance(sip, bool):
            raise SimulationConfigError("sip", sip, "True for a transport in place of OpenAIRealtimeSIPModel (connect needs call_id)")
        #: Whether connects are checked as ``OpenAIRealtimeSIPModel`` checks them.
        self.sip = sip
        self._ignored = frozenset(normalize_kind(kind) for kind in ignore_calls)
        # (An ignored interrupt still stops the streams it names.)
        self._counted_only = self._ignored - {"interrupt"}
        #: How many calls of each kind were made, recorded or ignored.
        self.call_counts: Counter[str] = Counter()
        self._connect_latency = non_negative("connect_latency", connect_latency, expected="a number of seconds >= 0")
        self._script: CallScript[RealtimeCall] = CallScript(_ERRORS)
        self._listeners = Listeners()
        self._status: Status = "disconnected"
        self._inbox: Inbox[_Delivery] | None = None
        self._delivery_task: asyncio.Task[None] | None = None
        self._streams: list[AudioStream] = []
        self._background: anyio.abc.TaskGroup | None = None
        self._loose_tasks: set[asyncio.Task[Any]] = set()
        self._playback = PlaybackBooks()
        #: Coverage of the moments (moments.py): assistant audio items streaming
        #: (audio delivered, not done), and tool calls asked and not answered.
        self._audio_streaming: set[str] = set()
        self._open_calls: set[str] = set()
        #: Which connection is current: every connect and every close starts a
        #: new one, so work of an older connection can tell it was superseded.
        self.generation = 0

    # -- RealtimeModel: the application's side ---------------------------------

    async def connect(self, options: RealtimeModelConfig) -> None:
        """Record the connect (credential-free) and open the connection."""
        if not isinstance(options, Mapping):
            raise SimulationConfigError("options", options, "the RealtimeModelConfig dict connect() takes")
        if self.sip:
            check_sip_connect(options)
        failure = self._script.take_failure("connect")
        if failure is None and self._status != "disconnected":
            failure = RealtimeScriptError("connect", f"the transport is {self._status}", "close it before connecting again")
        self._record("connect", options=ConnectOptions.from_options(options), error=failure)
        if failure is not None:
            raise failure
        self.generation += 1
        mine = self.generation
        if self._connect_latency:
            self._status = "connecting"
            try:
                await anyio.sleep(self._connect_latency)
            except BaseException:
                if self.generation == mine:
                    self._status = "disconnected"
                raise
            if self.generation != mine:  # closed (or disconnected) while connecting
                record_event("superseded", "connect")
                raise ScriptedRealtimeConnectionSupersededError("connect")
        self._status = "connected"
        self._playback.reset(options.get("playback_tracker"))
        self._audio_streaming.clear()
        self._open_calls.clear()
        self._inbox = Inbox()
        self._delivery_task = asyncio.get_running_loop().create_task(self._deliver_forever(self._inbox), name="realtime-transport-delivery")

    def add_listener(self, listener: RealtimeModelListener) -> None:
        self._listeners.add(listener)

    def remove_listener(self, listener: RealtimeModelListener) -> None:
        self._listeners.remove(listener)

    async def send_event(self, event: RealtimeModelSendEvent) -> None:
        """Record a send; raise an injected failure, or fail if disconnected.

        An ``interrupt`` also emits ``audio_interrupted`` for the audio the
        adapter believes is playing, from the sending task before the send
        returns, as ``OpenAIRealtimeWebSocketModel`` does (see ``playback``)."""
        kind = _KIND_OF_CLASS.get(event.__class__)
        if kind in self._counted_only and self._status == "connected" and kind not in self._script.failing_kinds:
            # A call the scenario ignores (microphone audio, usually): counted,
            # and nothing else can happen to it.
            self.call_counts[kind] += 1
            return
        self._record_send(event)
        await self._after_send(event)

    async def send_event_if(self, event: RealtimeModelSendEvent, send_if: Callable[[], bool]) -> bool:
        """Send only if ``send_if()`` holds at the commit point (checked and
        recorded with no await in between, so the check is atomic)."""
        if not callable(send_if):
            raise SimulationConfigError("send_if", send_if, "a function () -> bool checked at the commit point")
        if not send_if():
            record_event("skip", f"send_if false: {kind_of(event)}")
            return False
        self._record_send(event)
        await self._after_send(event)
        return True

    async def close(self) -> None:
        """Record the close and end the connection (no end-of-stream event: the
        application asked for it, as with the real adapter)."""
        failure = self._script.take_failure("close")
        sometimes(bool(self._open_calls), DISCONNECT_DURING_TOOL_CALL)
        self._record("close", error=failure)
        # A close that fails still ends the connection (as a websocket whose
        # close handshake failed is gone all the same): no delivery task or
        # scheduled emit outlives it.
        self._status = "disconnected"
        self.generation += 1
        await self._shut_down()
        if failure is not None:
            raise failure

    # -- recording ---------------------------------------------------------------

    def _record(self, kind: str, *, event: RealtimeModelSendEvent | None = None, options: ConnectOptions | None = None, error: BaseException | None = None) -> RealtimeCall:
        self.call_counts[kind] += 1
        call = RealtimeCall(self._script.next_index, kind, asyncio.get_running_loop().time(), event, options, error)
        self._script.add(call)
        record_event("send", kind if error is None else f"{kind} raised {type(error).__name__}")
        return call

    def _record_send(self, event: RealtimeModelSendEvent) -> None:
        kind = kind_of(event)
        failure = self._script.take_failure(kind)
        if failure is None and self._status != "connected":
            failure = RealtimeTransportDisconnectedError(kind, self._status)
        if kind in self._ignored:
            self.call_counts[kind] += 1
        else:
            self._record(kind, event=snapshot_event(event), error=failure)
        if isinstance(event, RealtimeModelSendToolOutput):
            self._open_calls.discard(event.tool_call.call_id)
        if isinstance(event, RealtimeModelSendInterrupt):
            sometimes(bool(self._audio_streaming), BARGE_IN_DURING_AUDIO)
            sometimes(bool(self._open_calls), INTERRUPT_DURING_TOOL_CALL)
            playback_only, response_id = interrupt_scope(event)
            # The "server" cancels the response: all, or the one named.
            for stream in list(self._streams):
                if not playback_only and response_id in (None, stream.response_id):
                    stream.on_interrupt_call()
        if failure is not None:
            raise failure

    async def _after_send(self, event: RealtimeModelSendEvent) -> None:
        if isinstance(event, RealtimeModelSendInterrupt) and not getattr(event, "cancel_response_only", False):
            for interrupted in self._playback.interrupted(interrupt_scope(event)[1]):
                await self._deliver(interrupted)

    # -- the scripted side ---------------------------------------------------------

    async def run_scenario(
        self,
        *,
        scenario: Callable[[RealtimeScenarioContext], Awaitable[Any]],
        exercise: Callable[[], Awaitable[Any]],
        timeout: float | None = 5.0,
        signal: Any = None,
    ) -> None:
        """Run ``scenario(ctx)`` (the transport's side) beside ``exercise()`` (the
        application's side), both as sibling tasks, within ``timeout`` virtual seconds.

        If either side raises, the other is cancelled after its clean-up runs
        and the original exception is raised. If the exercise returns while
        the scenario waits for a call nobody made:
        :class:`IncompleteRealtimeScenarioError`. On the deadline:
        :class:`RealtimeScenarioTimeoutError` listing what was pending. When
        ``signal`` (an ``anyio.Event``, ``asyncio.Event`` or ``trio.Event``) is
        set first — the JS guide's ``AbortSignal`` — both sides are cancelled
        and :class:`ScriptedRealtimeScenarioCancelledError` lists what was
        pending::

            stop = asyncio.Event()
            asyncio.get_running_loop().call_later(2.0, stop.set)
            await transport.run_scenario(scenario=scenario, exercise=exercise, signal=stop)
        """
        timeout = limit("timeout", timeout, expected="a positive number of (virtual) seconds, or None (or inf) for no deadline")
        await run_scenario(
            scenario,
            exercise,
            context=RealtimeScenarioContext(self),
            script=self._script,
            timeout=timeout,
            attach_background=self._attach_background,
            signal=signal,
        )

    def _attach_background(self, group: anyio.abc.TaskGroup | None) -> None:
        self._background = group

    async def expect_call(self, kind: object, matcher: Callable[[RealtimeCall], Any] | None = None) -> RealtimeCall:
        """Wait for the next call in order and check it is ``kind`` (and passes ``matcher``).

        ``kind``: ``"connect"``, ``"close"``, a send's short name
        (``"user_input"``, ``"audio"``, ``"tool_output"``, ``"interrupt"``,
        ``"session_update"``, ``"raw_message"``), its class or class name.
        Calls made before the expectation are buffered in order. The matcher
        gets the :class:`RealtimeCall`; it may assert, or return False to reject.
        """
        return await self._script.expect(normalize_kind(kind), matcher)

    async def next_call(self, matcher: Callable[[RealtimeCall], Any] | None = None) -> RealtimeCall:
        """The next call in order, whatever its kind — for scenarios that react to
        what the application does (``while (call := await ctx.next_call()).kind != "close"``)."""
        return await self._script.expect(None, matcher)

    def fail_next_call(self, kind: object, error: BaseException) -> None:
        """Make the next call of ``kind`` raise ``error`` (it is still recorded
        and matched). Several failures for one kind are used in order."""
        if not isinstance(error, BaseException):
            raise SimulationConfigError("error", error, "an exception instance")
        self._script.fail_next(normalize_kind(kind), error)

    async def emit(self, *events: RealtimeModelEvent) -> bool:
        """Deliver normalized model events to the listeners, in order, and wait
        until they have been handled. Returns False if the connection closed
        before they could be delivered."""
        self._require_connected("emit")
        return await self.enqueue(events)

    def emit_nowait(self, *events: RealtimeModelEvent) -> None:
        """Queue events for delivery without waiting for the listeners."""
        self._require_connected("emit_nowait")
        self.enqueue_nowait(events)

    def emit_at(self, when: float, *events: RealtimeModelEvent) -> ScheduledEmit:
        """Deliver ``events`` at virtual time ``when`` (seconds). Returns a handle
        that can be cancelled or awaited. Dropped if the connection is closed then."""
        require_core("ScriptedRealtimeTransport.emit_at")
        handle = ScheduledEmit(self, when, events)
        self._spawn(handle._run)
        return handle

    def emit_after(self, delay: float, *events: RealtimeModelEvent) -> ScheduledEmit:
        """Deliver ``events`` ``delay`` virtual seconds from now (see :meth:`emit_at`)."""
        require_core("ScriptedRealtimeTransport.emit_after")
        return self.emit_at(anyio.current_time() + non_negative("delay", delay, expected="virtual seconds from now, >= 0"), *events)

    def stream_audio(
        self,
        *,
        item_id: str = "item_1",
        response_id: str = "response_1",
        duration: float | None = None,
        samples: npt.ArrayLike | None = None,
        sample_rate: int = 24_000,
        chunk_ms: float = 20.0,
        transcript: str | None = None,
        content_index: int = 0,
        pace: Speed = 1.0,
        turn_events: bool = True,
        stop_on_interrupt: bool = True,
    ) -> AudioStream:
        """Stream an assistant audio response as pcm16 chunks paced in virtual time.

        Give ``duration`` (seconds of a deterministic tone) or ``samples``
        (int16, or floats in [-1, 1]). Chunks of ``chunk_ms`` are emitted
        ``chunk_ms / pace`` apart (``pace=1`` is real time; servers often send
        faster); ``pace=(low, high)`` makes each chunk's spacing a window
        between ``chunk_ms / high`` and ``chunk_ms / low`` (a generation speed
        that varies, explored like any windowed delay: see
        :class:`agentsim.timing.Pacer`). ``transcript`` is spread over the chunks as transcript deltas.
        With ``turn_events`` the stream starts with ``turn_started`` and ends
        with ``turn_ended``; a complete stream also sends ``audio_done``. With
        ``stop_on_interrupt`` an ``interrupt`` call from the application stops
        it (unless it names another ``response_id`` or is ``playback_only``:
        the server cancels only what it is asked to), as does
        ``stream.interrupt()``. Returns the running
        :class:`AudioStream`; ``await`` it for its final state.
        """
        stream = AudioStream(
            self,
            item_id=item_id,
            response_id=response_id,
            duration=duration,
            samples=samples,
            sample_rate=sample_rate,
            chunk_ms=chunk_ms,
            transcript=transcript,
            content_index=content_index,
            pace=pace,
            turn_events=turn_events,
            stop_on_interrupt=stop_on_interrupt,
        )
        self._streams.append(stream)
        self._spawn(stream._run)
        return stream

    async def disconnect(self, error: BaseException | None = None, *, clean: bool = True) -> None:
        """The remote end drops the connection.

        ``clean=True`` (a normal server close): after events already queued,
        listeners get an ``error`` event if ``error`` is given, then
        ``connection_status("disconnected")`` and ``end_of_stream`` — session
        iteration ends without an exception. ``clean=False``: listeners get an
        ``exception`` event (``error``, or the ``websockets``
        ``ConnectionClosedError`` of a connection lost without a close frame,
        as the real adapter reports it), which the session raises from its
        event iterator. Either way later sends raise
        :class:`RealtimeTransportDisconnectedError`.
        """
        self._require_connected("disconnect")
        sometimes(bool(self._open_calls), DISCONNECT_DURING_TOOL_CALL)
        self._status = "disconnected"
        record_event("disconnect", "clean" if clean else "unclean")
        for stream in list(self._streams):
            stream.stop()
        await self.enqueue(closing_events(clean, error), final=True)

    # -- inspection --------------------------------------------------------------

    @property
    def calls(self) -> tuple[RealtimeCall, ...]:
        """Every call so far, in order (detached, credential-free snapshots)."""
        return self._script.calls

    @property
    def status(self) -> Status:
        """``"disconnected"``, ``"connecting"`` or ``"connected"``."""
        return self._status

    @property
    def listeners(self) -> tuple[RealtimeModelListener, ...]:
        return self._listeners.snapshot()

    @property
    def pending_expectations(self) -> tuple[Any, ...]:
        return self._script.pending_expectations

    def assert_complete(self) -> None:
        """No unconsumed calls, waiting expectations or unused failures remain."""
        self._script.assert_complete()

    def assert_closed(self) -> None:
        """The connection is closed (by the application, or by ``disconnect``)."""
        if self._status != "disconnected":
            raise RealtimeTransportNotClosedError(self._status)

    # -- delivery ------------------------------------------------------------------

    def _require_connected(self, operation: str) -> None:
        if self._status != "connected" or self._inbox is None:
            raise RealtimeScriptError(
                operation,
                f"the transport is {self._status}",
                "emit only between the application's connect and its close (or a disconnect); "
                "use emit_at/emit_after for events that may race with the close",
            )

    @property
    def connected(self) -> bool:
        return self._status == "connected" and self._inbox is not None

    def enqueue_nowait(self, events: Sequence[RealtimeModelEvent], *, final: bool = False, awaited: bool = False, made_here: bool = False) -> _Delivery:
        """Queue ``events`` for delivery, in order (the package's interface:
        emits, scheduled emits and audio streams deliver through it)."""
        # (``made_here``: events the doubles built themselves, known to be events.)
        if isinstance(events, (str, bytes)) or not isinstance(events, Sequence):
            raise SimulationConfigError("events", events, "a sequence of realtime model events")
        for index, event in enumerate(() if made_here else events):
            if not isinstance(getattr(event, "type", None), str):
                raise SimulationConfigError(f"events[{index}]", event, "a realtime model event (agents.realtime.model_events, or turn_started(...))")
        if self._inbox is None:
            raise RealtimeScriptError("emit", f"the transport is {self._status}", "connect before delivering events")
        delivery = _Delivery(events, awaited=awaited)
        self._inbox.put_nowait(delivery)
        if final:
            self._inbox = None  # nothing may follow the disconnect
        return delivery

    async def enqueue(self, events: Sequence[RealtimeModelEvent], *, final: bool = False) -> bool:
        """Deliver ``events`` and wait until the listeners handled them; False
        if the connection closed first (the package's interface, as above)."""
        delivery = self.enqueue_nowait(events, final=final, awaited=True)
        assert delivery.done is not None
        await asyncio.shield(delivery.done)
        return delivery.delivered

    async def _deliver_forever(self, inbox: Inbox[_Delivery]) -> None:
        delivery: _Delivery | None = None
        try:
            while True:
                delivery = await inbox.get()
                for event in delivery.events:
                    await self._deliver(event)
                delivery.delivered = True
                delivery.settle()
                if self._inbox is not inbox and inbox.empty():
                    return  # disconnected: the final events are out
        finally:
            # Closed mid-way: whoever waits for undelivered events learns so.
            pending = [delivery] if delivery is not None else []
            while not inbox.empty():
                pending.append(inbox.get_nowait())
            for left in pending:
                left.settle()

    async def _deliver(self, event: RealtimeModelEvent) -> None:
        if isinstance(event, RealtimeModelAudioEvent):
            self._playback.on_audio(event)
            self._audio_streaming.add(event.item_id)
        elif isinstance(event, RealtimeModelAudioDoneEvent):
            self._audio_streaming.discard(event.item_id)
        elif getattr(event, "type", None) == "function_call":  # (the model asks a tool)
            self._open_calls.add(event.call_id)  # type: ignore[union-attr]
        await self._listeners.deliver(event)

    async def _shut_down(self) -> None:
        self._inbox = None
        for stream in list(self._streams):
            stream.stop()
        task, self._delivery_task = self._delivery_task, None
        if task is not None and not task.done():
            task.cancel()
            if task is not asyncio.current_task():
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        for loose in list(self._loose_tasks):
            loose.cancel()

    def _spawn(self, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        if self._background is not None:
            self._background.start_soon(run)
            return
        # Outside run_scenario: a task the transport owns and cancels on close.
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(run())
        self._loose_tasks.add(task)
        task.add_done_callback(self._loose_tasks.discard)

    def stream_finished(self, stream: AudioStream) -> None:
        """An audio stream ended: the transport stops tracking it (the package's interface)."""
        if stream in self._streams:
            self._streams.remove(stream)


class RealtimeScenarioContext:
    """The scenario's handle on the transport: expect calls, emit events, stream
    audio, inject failures, disconnect. Every method is the transport's own."""

    def __init__(self, transport: ScriptedRealtimeTransport) -> None:
        if not isinstance(transport, ScriptedRealtimeTransport):
            raise SimulationConfigError("transport", transport, "the ScriptedRealtimeTransport this context drives")
        self.transport = transport
        self.expect_call = transport.expect_call
        self.next_call = transport.next_call
        self.emit = transport.emit
        self.emit_nowait = transport.emit_nowait
        self.emit_at = transport.emit_at
        self.emit_after = transport.emit_after
        self.stream_audio = transport.stream_audio
        self.fail_next_call = transport.fail_next_call
        self.disconnect = transport.disconnect

    @property
    def now(self) -> float:
        """Current (virtual) time in seconds."""
        return anyio.current_time()

    @property
    def calls(self) -> tuple[RealtimeCall, ...]:
        return self.transport.calls
