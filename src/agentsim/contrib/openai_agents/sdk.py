"""Every name of the openai-agents SDK that agentsim's doubles use.

One module, so that the SDK surface agentsim depends on is visible at a
glance and release differences are handled in one place (``_compat.py``).
Names of ``agents.testing`` and the sandbox exist only in newer releases;
they are looked up when a double needs them.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from agents import voice as voice
from agents.models.interface import Model as Model
from agents.usage import Usage as Usage
from agents.realtime import model_events as model_events
from agents.realtime.model import RealtimeModel as RealtimeModel
from agents.realtime.model import RealtimeModelConfig as RealtimeModelConfig
from agents.realtime.model import RealtimeModelListener as RealtimeModelListener
from agents.realtime.model import RealtimePlaybackTracker as RealtimePlaybackTracker
from agents.realtime.model_events import RealtimeModelAudioDoneEvent as RealtimeModelAudioDoneEvent
from agents.realtime.model_events import RealtimeModelAudioInterruptedEvent as RealtimeModelAudioInterruptedEvent
from agents.realtime.model_events import RealtimeModelAudioEvent as RealtimeModelAudioEvent
from agents.realtime.model_events import RealtimeModelConnectionStatusEvent as RealtimeModelConnectionStatusEvent
from agents.realtime.model_events import RealtimeModelErrorEvent as RealtimeModelErrorEvent
from agents.realtime.model_events import RealtimeModelEvent as RealtimeModelEvent
from agents.realtime.model_events import RealtimeModelExceptionEvent as RealtimeModelExceptionEvent
from agents.realtime.model_events import RealtimeModelTranscriptDeltaEvent as RealtimeModelTranscriptDeltaEvent
from agents.realtime.model_inputs import RealtimeModelSendAudio as RealtimeModelSendAudio
from agents.realtime.model_inputs import RealtimeModelSendEvent as RealtimeModelSendEvent
from agents.realtime.model_inputs import RealtimeModelSendInterrupt as RealtimeModelSendInterrupt
from agents.realtime.model_inputs import RealtimeModelSendRawMessage as RealtimeModelSendRawMessage
from agents.realtime.model_inputs import RealtimeModelSendSessionUpdate as RealtimeModelSendSessionUpdate
from agents.realtime.model_inputs import RealtimeModelSendToolOutput as RealtimeModelSendToolOutput
from agents.realtime.model_inputs import RealtimeModelSendUserInput as RealtimeModelSendUserInput
from agents.realtime.openai_realtime import OpenAIRealtimeWebSocketModel as OpenAIRealtimeWebSocketModel
from agents.voice import StreamedAudioInput as StreamedAudioInput
from agents.voice.model import STTModel as STTModel
from agents.voice.model import TTSModel as TTSModel
from agents.voice.model import TTSModelSettings as TTSModelSettings

from ..._kernel.errors import UsageError
from ._compat import END_OF_STREAM as END_OF_STREAM
from ._compat import interrupt_scope as interrupt_scope
from ._compat import turn_ended as turn_ended
from ._compat import turn_started as turn_started


class SdkVersionError(UsageError, ImportError):
    """A double needs a part of the openai-agents SDK that the installed
    release does not have. ``feature`` names it, ``minimum`` the first release
    that has it, ``installed`` the installed one: upgrade, or use the doubles
    that work with it (the kernel works with every release from 0.2 on)."""

    def __init__(self, feature: str, minimum: str) -> None:
        self.feature = feature
        self.minimum = minimum
        self.installed = installed_version()
        super().__init__(
            f"{feature} needs openai-agents >= {minimum}; {self.installed} is installed. "
            f"Upgrade it (pip install 'openai-agents>={minimum}') to use this double."
        )


def installed_version() -> str:
    """The installed openai-agents release."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("openai-agents")
    except PackageNotFoundError:  # pragma: no cover - imported, so installed
        return "unknown"


def _module(name: str, feature: str, minimum: str) -> ModuleType:
    import importlib

    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and name.startswith(error.name):
            raise SdkVersionError(feature, minimum) from None
        raise


def testing(feature: str = "agents.testing (the SDK's scripted doubles)") -> ModuleType:
    """``agents.testing``, the SDK's own doubles (``ScriptedModel``, ``ModelStep``,
    ``scripted_sandbox_session``...): openai-agents 0.21 and later. ``feature``
    names the double that needs it, in the error on older releases."""
    return _module("agents.testing", feature, "0.21")


def voice_testing() -> ModuleType:
    """``agents.voice.testing`` (``ScriptedTranscriptionSession``...): 0.21 and later."""
    return _module("agents.voice.testing", "agentsim.voice (built on agents.voice.testing)", "0.21")


def require_websocket_hook(model_class: type) -> None:
    """The simulated server plugs its in-memory connection into the adapter
    through ``_create_websocket_connection``; releases without that hook
    would open a real socket instead."""
    if not hasattr(model_class, "_create_websocket_connection"):
        raise SdkVersionError(
            "SimulatedRealtimeServer (it connects the SDK's OpenAIRealtimeWebSocketModel through its "
            "_create_websocket_connection hook, which this release lacks)",
            "0.13.6",
        )


def check_sip_connect(options: Any) -> None:
    """What ``OpenAIRealtimeSIPModel.connect`` (and the WebSocket model under
    it) refuse before connecting: no ``call_id``, or ``call_id`` with a model
    name. Raises the SDK's ``UserError`` with its words."""
    from agents.exceptions import UserError as SdkUserError

    call_id = options.get("call_id")
    if not call_id:
        raise SdkUserError("OpenAIRealtimeSIPModel requires `call_id` in the model configuration.")
    if (options.get("initial_model_settings") or {}).get("model_name"):
        raise SdkUserError("Cannot specify both `call_id` and `model_name` when attaching to an existing realtime call.")


def realtime_sip_model() -> type:
    """``OpenAIRealtimeSIPModel`` (attach to a SIP call by ``call_id``): 0.13 and later."""
    from agents.realtime import openai_realtime

    found = getattr(openai_realtime, "OpenAIRealtimeSIPModel", None)
    if found is None:
        raise SdkVersionError("SimulatedRealtimeServer.sip_model (built on OpenAIRealtimeSIPModel)", "0.13")
    return found  # type: ignore[no-any-return]


def sdk_root() -> ModuleType:
    """``agents`` itself (``ModelRetryAdvice``...)."""
    import agents

    return agents


def sandbox_pty() -> ModuleType:
    """``agents.sandbox.session.pty_types`` (``PtyExecUpdate``, the yield-time rules): 0.21 and later."""
    return _module("agents.sandbox.session.pty_types", "agentsim.sandbox's PTY path (built on agents.sandbox)", "0.21")


def sandbox_errors() -> ModuleType:
    """``agents.sandbox.errors`` (``ExecTimeoutError``): 0.21 and later."""
    return _module("agents.sandbox.errors", "agentsim.sandbox (built on agents.sandbox)", "0.21")
