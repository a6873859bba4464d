"""Realtime doubles: a scripted transport at the SDK's model boundary.

``ScriptedRealtimeTransport`` implements ``agents.realtime.model.RealtimeModel``
so the real ``RealtimeRunner``/``RealtimeSession`` run on it unmodified; a
scenario expects the application's calls and emits model events on the
virtual clock. ``TimedRealtimeModel`` puts the SDK's own
``ScriptedRealtimeModel`` on the clock instead. See ``docs/realtime.md``.
"""

#: This folder's layer (tests/api/test_layers.py): imports point only down.
__layer__ = "doubles"

from ..contrib.openai_agents.sdk import turn_ended as turn_ended
from ..contrib.openai_agents.sdk import turn_started as turn_started
from .calls import ConnectOptions as ConnectOptions
from .calls import RealtimeCall as RealtimeCall
from .errors import IncompleteRealtimeScenarioError as IncompleteRealtimeScenarioError
from .errors import RealtimeCallMatcherError as RealtimeCallMatcherError
from .errors import RealtimeScenarioTimeoutError as RealtimeScenarioTimeoutError
from .errors import ScriptedRealtimeScenarioCancelledError as ScriptedRealtimeScenarioCancelledError
from .errors import RealtimeScriptError as RealtimeScriptError
from .errors import RealtimeTransportDisconnectedError as RealtimeTransportDisconnectedError
from .errors import RealtimeTransportNotClosedError as RealtimeTransportNotClosedError
from .errors import ScriptedRealtimeConnectionSupersededError as ScriptedRealtimeConnectionSupersededError
from .errors import UnexpectedRealtimeCallError as UnexpectedRealtimeCallError
from .moments import BARGE_IN_DURING_AUDIO as BARGE_IN_DURING_AUDIO
from .moments import CANCEL_BEFORE_FIRST_AUDIO as CANCEL_BEFORE_FIRST_AUDIO
from .moments import DISCONNECT_DURING_TOOL_CALL as DISCONNECT_DURING_TOOL_CALL
from .moments import INTERRUPT_DURING_TOOL_CALL as INTERRUPT_DURING_TOOL_CALL
from .moments import MOMENTS as MOMENTS
from .streams import AudioStream as AudioStream
from .streams import ScheduledEmit as ScheduledEmit
from .transport import RealtimeScenarioContext as RealtimeScenarioContext
from .timed import TimedRealtimeModel as TimedRealtimeModel
from .transport import ScriptedRealtimeTransport as ScriptedRealtimeTransport

__all__ = [
    "BARGE_IN_DURING_AUDIO",
    "CANCEL_BEFORE_FIRST_AUDIO",
    "DISCONNECT_DURING_TOOL_CALL",
    "INTERRUPT_DURING_TOOL_CALL",
    "MOMENTS",
    "turn_ended",
    "turn_started",
    "ConnectOptions",
    "RealtimeCall",
    "IncompleteRealtimeScenarioError",
    "RealtimeCallMatcherError",
    "RealtimeScenarioTimeoutError",
    "ScriptedRealtimeScenarioCancelledError",
    "RealtimeScriptError",
    "RealtimeTransportDisconnectedError",
    "RealtimeTransportNotClosedError",
    "ScriptedRealtimeConnectionSupersededError",
    "UnexpectedRealtimeCallError",
    "AudioStream",
    "ScheduledEmit",
    "RealtimeScenarioContext",
    "ScriptedRealtimeTransport",
    "TimedRealtimeModel",
]

