"""The real ``OpenAIRealtimeWebSocketModel``, connected to a simulated server in memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from functools import cache

from ...contrib.openai_agents.sdk import OpenAIRealtimeWebSocketModel, realtime_sip_model, require_websocket_hook

if TYPE_CHECKING:
    from ._server import SimulatedRealtimeServer


class SimulatedRealtimeModel(OpenAIRealtimeWebSocketModel):
    """The SDK's WebSocket adapter, unchanged but for where its socket comes from:
    :meth:`_create_websocket_connection` returns the simulated server's
    in-memory connection instead of opening one. Everything above it — event
    conversion, response sequencing, truncation, playback tracking — is the
    SDK's own code."""

    def __init__(self, server: SimulatedRealtimeServer) -> None:
        require_websocket_hook(OpenAIRealtimeWebSocketModel)
        super().__init__()
        self._server = server

    async def connect(self, options: Any) -> None:
        # The adapter insists on credentials; a simulated server needs none.
        options = dict(options or {})
        if options.get("api_key") is None and options.get("headers") is None:
            options["api_key"] = "simulated"
        await super().connect(options)

    async def _create_websocket_connection(self, url: str, headers: dict[str, str], transport_config: Any = None) -> Any:
        return self._server.connect(url, headers)


class SimulatedRealtimeSIPModel(SimulatedRealtimeModel):
    """The SDK's ``OpenAIRealtimeSIPModel`` (attach to a SIP call by
    ``call_id``), connected to the simulated server in memory: the SIP
    model's own checks, then the simulated endpoint's.

    Built by ``server.sip_model()`` as a subclass of the installed SDK's SIP
    model (which releases before 0.13 lack: ``SdkVersionError``)."""

    def __new__(cls, server: SimulatedRealtimeServer) -> SimulatedRealtimeSIPModel:
        return super().__new__(_with_sip_model())


@cache
def _with_sip_model() -> type[SimulatedRealtimeSIPModel]:
    return type("SimulatedRealtimeSIPModel", (SimulatedRealtimeSIPModel, realtime_sip_model()), {"__module__": __name__})


def raw_server_event(event: Any) -> dict[str, Any] | None:
    """The server's JSON event carried by a session's ``raw_model_event``, else None.

    The session forwards every server event it parsed as a ``raw_model_event``
    wrapping a ``raw_server_event``; this unwraps it::

        async for event in session:
            if (raw := raw_server_event(event)) and raw["type"] == "conversation.item.truncated":
                ...
    """
    if getattr(event, "type", None) != "raw_model_event":
        return None
    data = getattr(event, "data", None)
    if getattr(data, "type", None) != "raw_server_event":
        return None
    payload = getattr(data, "data", None)
    return payload if isinstance(payload, dict) else None
