"""What the scripted transport records: one :class:`RealtimeCall` per call.

Kinds are ``"connect"``, ``"close"`` and one per send type of the SDK's
model boundary. ``expect_call`` and ``fail_next_call`` accept the short name,
the send class, or the class's name.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from ..contrib.openai_agents.sdk import (
    RealtimeModelSendAudio,
    RealtimeModelSendEvent,
    RealtimeModelSendInterrupt,
    RealtimeModelSendRawMessage,
    RealtimeModelSendSessionUpdate,
    RealtimeModelSendToolOutput,
    RealtimeModelSendUserInput,
)

from .._kernel.errors import SimulationConfigError
from ..scenario.errors import InvalidCallKindError

#: Send classes of the SDK's model boundary, by the short kind name.
SEND_KINDS: Final[dict[str, type]] = {
    "user_input": RealtimeModelSendUserInput,
    "audio": RealtimeModelSendAudio,
    "tool_output": RealtimeModelSendToolOutput,
    "interrupt": RealtimeModelSendInterrupt,
    "session_update": RealtimeModelSendSessionUpdate,
    "raw_message": RealtimeModelSendRawMessage,
}
LIFECYCLE_KINDS: Final = ("connect", "close")
#: The call kind of each SDK send-event class.
_KIND_OF_CLASS: Final = {cls: kind for kind, cls in SEND_KINDS.items()}
_ACCEPTED: Final = (*LIFECYCLE_KINDS, *SEND_KINDS, *(cls.__name__ for cls in SEND_KINDS.values()))


def normalize_kind(kind: object) -> str:
    """The short kind name for a kind given as name, send class or class name."""
    if isinstance(kind, type) and kind in _KIND_OF_CLASS:
        return _KIND_OF_CLASS[kind]
    if isinstance(kind, str):
        if kind in LIFECYCLE_KINDS or kind in SEND_KINDS:
            return kind
        for cls, name in _KIND_OF_CLASS.items():
            if kind == cls.__name__:
                return name
    raise InvalidCallKindError(kind, _ACCEPTED)


def kind_of(event: RealtimeModelSendEvent) -> str:
    kind = _KIND_OF_CLASS.get(type(event))
    if kind is not None:
        return kind
    for cls, name in _KIND_OF_CLASS.items():
        if isinstance(event, cls):
            return name
    raise SimulationConfigError("event", event, f"a realtime send event ({', '.join(cls.__name__ for cls in _KIND_OF_CLASS)})")


@dataclass(frozen=True)
class ConnectOptions:
    """A credential-free snapshot of ``connect(options)``.

    Whether an API key or headers were given is recorded, never their values;
    the URL keeps scheme, host and path only (no user info, query or fragment).
    Live SDK objects (playback tracker, tools inside the settings) keep their
    identity; mutable containers are copied.
    """

    api_key_provided: bool
    headers_provided: bool
    url: str | None
    call_id: str | None
    initial_model_settings: dict[str, Any] | None
    playback_tracker: Any | None

    @classmethod
    def from_options(cls, options: Any) -> ConnectOptions:
        if options is not None and not isinstance(options, Mapping):
            raise SimulationConfigError("options", options, "the RealtimeModelConfig dict connect() takes, or None")
        options = dict(options or {})
        url = options.get("url")
        if isinstance(url, str):
            parts = urlsplit(url)
            url = urlunsplit((parts.scheme, parts.hostname or "", parts.path, "", ""))
        return cls(
            api_key_provided=options.get("api_key") is not None,
            headers_provided=bool(options.get("headers")),
            url=url,
            call_id=options.get("call_id"),
            initial_model_settings=_copy_settings(options.get("initial_model_settings")),
            playback_tracker=options.get("playback_tracker"),
        )


def _copy_settings(settings: Any) -> Any:
    # Settings hold tools and handoffs (live objects with functions inside):
    # copy the containers, keep the objects.
    if isinstance(settings, dict):
        return {key: _copy_settings(value) for key, value in settings.items()}
    if isinstance(settings, list):
        return [_copy_settings(value) for value in settings]
    return settings


#: Values nothing can mutate: an event holding only these needs no deep copy.
_IMMUTABLE = (str, bytes, int, float, bool, type(None))


def snapshot_event(event: RealtimeModelSendEvent) -> RealtimeModelSendEvent:
    """A copy of a send event that later mutation by the application cannot change."""
    if isinstance(event, RealtimeModelSendSessionUpdate):
        return RealtimeModelSendSessionUpdate(session_settings=_copy_settings(event.session_settings))
    fields = getattr(event, "__dict__", None)
    if fields is not None and all(isinstance(value, _IMMUTABLE) for value in fields.values()):
        return copy.copy(event)  # audio, tool output, interrupts: only the attributes can change
    return copy.deepcopy(event)


@dataclass(frozen=True)
class RealtimeCall:
    """One call the application made on the transport, as it was made.

    ``index`` is 0-based in ``transport.calls``; ``kind`` a short kind name;
    ``time`` the virtual second it happened; ``event`` the send event (a
    detached copy) for sends; ``options`` the connect snapshot for connects;
    ``error`` the failure the call raised (injected, or a disconnected
    transport), if any.
    """

    index: int
    kind: str
    time: float
    event: RealtimeModelSendEvent | None = None
    options: ConnectOptions | None = None
    error: BaseException | None = field(default=None, compare=False)

    def describe(self) -> str:
        failed = f" (raised {type(self.error).__name__})" if self.error is not None else ""
        return f"#{self.index + 1} {self.kind!r} at {self.time:.3f}s{failed}"
