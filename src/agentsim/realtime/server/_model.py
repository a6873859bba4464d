"""The real ``OpenAIRealtimeWebSocketModel``, connected to a simulated server in memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.realtime.openai_realtime import OpenAIRealtimeWebSocketModel

if TYPE_CHECKING:
    from ._server import SimulatedRealtimeServer


class SimulatedRealtimeModel(OpenAIRealtimeWebSocketModel):
    """The SDK's WebSocket adapter, unchanged but for where its socket comes from:
    :meth:`_create_websocket_connection` returns the simulated server's
    in-memory connection instead of opening one. Everything above it — event
    conversion, response sequencing, truncation, playback tracking — is the
    SDK's own code."""

    def __init__(self, server: SimulatedRealtimeServer) -> None:
        super().__init__()
        self._server = server

    async def connect(self, options: Any) -> None:
        # The adapter insists on credentials; a simulated server needs none.
        options = dict(options or {})
        if options.get("api_key") is None and options.get("headers") is None:
            options["api_key"] = "simulated"
        await super().connect(options)

    async def _create_websocket_connection(self, url: str, headers: dict[str, str], transport_config: Any = None) -> Any:
        return self._server.connect()
