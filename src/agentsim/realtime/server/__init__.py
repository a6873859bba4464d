"""A simulated Realtime API server for the real ``OpenAIRealtimeWebSocketModel``.

Where ``ScriptedRealtimeTransport`` replaces the model boundary, this keeps
the SDK's own WebSocket adapter and replaces only the network and the server:
GA JSON events over an in-memory connection, paced on the virtual clock, with
server rules checked as test oracles. See docs/realtime-server.md.
"""

from ._caller import CallReport as CallReport
from ._caller import SimulatedCaller as SimulatedCaller
from ._endpoint import ConnectRequest as ConnectRequest
from ._model import SimulatedRealtimeModel as SimulatedRealtimeModel
from ._model import SimulatedRealtimeSIPModel as SimulatedRealtimeSIPModel
from ._model import raw_server_event as raw_server_event
from ._rules import RealtimeServerRuleError as RealtimeServerRuleError
from ._rules import RULES as RULES
from ._rules import Rule as Rule
from ._rules import RuleViolation as RuleViolation
from ._script import CallTool as CallTool
from ._script import Reply as Reply
from ._script import Step as Step
from ._soak import MemoryWatch as MemoryWatch
from ._soak import SoakCheckError as SoakCheckError
from ._soak import check_call as check_call
from ._server import SimulatedRealtimeServer as SimulatedRealtimeServer
from ._wire import SimulatedWebSocket as SimulatedWebSocket
from ._wire_log import WireLog as WireLog

__all__ = [
    "CallReport",
    "SimulatedCaller",
    "ConnectRequest",
    "SimulatedRealtimeModel",
    "SimulatedRealtimeSIPModel",
    "raw_server_event",
    "RealtimeServerRuleError",
    "RULES",
    "Rule",
    "RuleViolation",
    "CallTool",
    "Reply",
    "Step",
    "MemoryWatch",
    "SoakCheckError",
    "check_call",
    "SimulatedRealtimeServer",
    "SimulatedWebSocket",
    "WireLog",
]

