"""A realtime model's listeners, and what the real adapter delivers to them
(forwarded listener failures, the events of a closing connection)."""

from __future__ import annotations

from websockets.exceptions import ConnectionClosedError

from ..contrib.openai_agents.sdk import (
    END_OF_STREAM,
    RealtimeModelConnectionStatusEvent,
    RealtimeModelErrorEvent,
    RealtimeModelEvent,
    RealtimeModelExceptionEvent,
    RealtimeModelListener,
)
from .._kernel.core import record_event
from .streams import describe_event


class Listeners:
    """Registered listeners, each once, in registration order."""

    def __init__(self) -> None:
        self._listeners: list[RealtimeModelListener] = []

    def add(self, listener: RealtimeModelListener) -> None:
        if listener not in self._listeners:
            self._listeners.append(listener)

    def remove(self, listener: RealtimeModelListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def snapshot(self) -> tuple[RealtimeModelListener, ...]:
        return tuple(self._listeners)

    async def deliver(self, event: RealtimeModelEvent) -> None:
        """Hand ``event`` to every listener; a listener's failure becomes an
        ``exception`` event, as ``OpenAIRealtimeWebSocketModel`` forwards it."""
        record_event("emit", describe_event(event))
        for listener in list(self._listeners):
            try:
                await listener.on_event(event)
            except Exception as exc:  # noqa: BLE001 - forwarded like the real adapter does
                if isinstance(event, RealtimeModelExceptionEvent):
                    raise
                await self.deliver(RealtimeModelExceptionEvent(exception=exc, context="Error handling event"))


def closing_events(clean: bool, error: BaseException | None = None) -> list[RealtimeModelEvent]:
    """What ``OpenAIRealtimeWebSocketModel`` emits when the server ends the
    connection: a normal close (``error`` first, if given, as an ``error``
    event) ends with ``connection_status("disconnected")`` and end of stream;
    an abrupt one is an ``exception`` event — ``error``, or the ``websockets``
    ``ConnectionClosedError`` of a connection lost without a close frame."""
    if clean:
        events: list[RealtimeModelEvent] = [RealtimeModelErrorEvent(error=error)] if error is not None else []
        events.append(RealtimeModelConnectionStatusEvent(status="disconnected"))
        if END_OF_STREAM is not None:
            events.append(END_OF_STREAM())
        return events
    exception = error if isinstance(error, Exception) else ConnectionClosedError(None, None)
    return [RealtimeModelExceptionEvent(exception=exception, context="WebSocket connection closed unexpectedly")]
