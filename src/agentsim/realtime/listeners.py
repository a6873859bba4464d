"""A realtime model's listeners, and delivery to them as the real adapter does."""

from __future__ import annotations

from ..contrib.openai_agents.sdk import RealtimeModelEvent, RealtimeModelExceptionEvent, RealtimeModelListener
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
