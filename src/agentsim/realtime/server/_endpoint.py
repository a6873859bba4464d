"""Where a client connects: OpenAI or Azure endpoints, SIP attach, credentials.

The real adapter builds a URL and headers (``wss://api.openai.com/v1/realtime
?model=...`` with ``Authorization: Bearer``; ``?call_id=...`` to attach to a
SIP call; an Azure resource's ``/openai/v1/realtime?model=<deployment>`` with
``api-key`` or a bearer token). The simulated server checks them as the real
endpoints would and rejects the handshake as they would (HTTP 401/404, the
``websockets`` ``InvalidStatus`` the adapter's ``connect`` raises) — no
socket, no DNS lookup.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs, urlsplit

from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus
from websockets.http11 import Response

Flavor = Literal["openai", "azure"]


@dataclass(frozen=True)
class ConnectRequest:
    """One connection attempt, credential-free: which ``flavor`` of endpoint,
    the ``host`` and ``path``, the ``model`` (an Azure deployment) or the SIP
    ``call_id`` it names, and how it authenticated (``"bearer"``,
    ``"api-key"`` or None). ``rejected`` is the HTTP status if the handshake
    was refused."""

    url: str
    flavor: Flavor
    host: str
    path: str
    model: str | None
    call_id: str | None
    auth: str | None
    rejected: int | None = None


def inspect_request(url: str, headers: dict[str, str]) -> tuple[ConnectRequest, int, str | None]:
    """The request, and the HTTP status and reason a real endpoint would
    refuse it with (reason None: accepted)."""
    parts = urlsplit(url)
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    lowered = {key.lower(): value for key, value in headers.items()}
    auth = "bearer" if lowered.get("authorization", "").lower().startswith("bearer ") else "api-key" if lowered.get("api-key") else None
    host = parts.hostname or ""
    flavor: Flavor = "azure" if host.endswith(".openai.azure.com") else "openai"
    request = ConnectRequest(
        url=f"{parts.scheme}://{host}{parts.path}",
        flavor=flavor,
        host=host,
        path=parts.path,
        model=query.get("model") or query.get("deployment"),
        call_id=query.get("call_id"),
        auth=auth,
    )
    refused = _refusal(parts.scheme, parts.path, query, flavor, auth, request)
    if refused is None:
        return request, 101, None
    return request, refused[0], refused[1]


def _refusal(scheme: str, path: str, query: dict[str, str], flavor: Flavor, auth: str | None, request: ConnectRequest) -> tuple[int, str] | None:
    if scheme not in ("wss", "ws"):
        return 400, f"not a WebSocket URL: {request.url!r}"
    if flavor == "azure":
        if path == "/openai/realtime" or "api-version" in query:
            return 404, "the legacy beta path /openai/realtime?api-version=... speaks the beta protocol; use the GA endpoint /openai/v1/realtime?model=<deployment>"
        if path != "/openai/v1/realtime":
            return 404, f"no Realtime endpoint at {path!r}; Azure's is /openai/v1/realtime?model=<deployment>"
        if auth is None:
            return 401, "Azure needs an `api-key` header or `authorization: Bearer <token>` (the SDK adds none when headers are given)"
    else:
        if path != "/v1/realtime":
            return 404, f"no Realtime endpoint at {path!r}; OpenAI's is /v1/realtime"
        if auth != "bearer":
            return 401, "OpenAI needs `Authorization: Bearer <key>` (when you pass headers, the SDK adds none)"
    if request.call_id is None and request.model is None:
        return 400, "the URL names neither a model (?model=...) nor a SIP call (?call_id=...)"
    return None


def rejection(status: int, reason: str) -> InvalidStatus:
    """What ``websockets`` raises when the server refuses the handshake."""
    phrase = {401: "Unauthorized", 404: "Not Found", 400: "Bad Request"}.get(status, "Error")
    body = json.dumps({"error": {"message": reason}}).encode()
    return InvalidStatus(Response(status, phrase, Headers(), body))
