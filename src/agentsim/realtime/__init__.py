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
from .errors import RealtimeScriptError as RealtimeScriptError
from .errors import RealtimeTransportDisconnectedError as RealtimeTransportDisconnectedError
from .errors import RealtimeTransportNotClosedError as RealtimeTransportNotClosedError
from .errors import ScriptedRealtimeConnectionSupersededError as ScriptedRealtimeConnectionSupersededError
from .errors import UnexpectedRealtimeCallError as UnexpectedRealtimeCallError
from .streams import AudioStream as AudioStream
from .streams import ScheduledEmit as ScheduledEmit
from .transport import RealtimeScenarioContext as RealtimeScenarioContext
from .timed import TimedRealtimeModel as TimedRealtimeModel
from .transport import ScriptedRealtimeTransport as ScriptedRealtimeTransport

__all__ = [
    "turn_ended",
    "turn_started",
    "ConnectOptions",
    "RealtimeCall",
    "IncompleteRealtimeScenarioError",
    "RealtimeCallMatcherError",
    "RealtimeScenarioTimeoutError",
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

