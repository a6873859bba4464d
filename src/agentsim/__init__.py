"""agentsim: make timing bugs in async agent code reproducible.

Layers, each importing only those above it in this list:
  _kernel/   virtual clock, asyncio and trio loops, scheduling policy, trace
  scenario   generic scripted-actor coordination on the clock (anyio)
  doubles    realtime transport, timed models, voice, sandbox, audio
  explore    seed sweeps, PCT, shrinking, replay
  integrations: pytest plugin, CLI, timelines

This module re-exports the public API of the kernel.
"""

from ._kernel.clock import TICKS_PER_SECOND as TICKS_PER_SECOND
from ._kernel.core import choose as choose
from ._kernel.core import now as now
from ._kernel.core import record_event as record_event
from ._kernel.coverage import reached as reached
from ._kernel.coverage import sometimes as sometimes
from ._kernel.core import seeded_random as seeded_random
from ._kernel.lanes import register_lane as register_lane
from ._kernel.errors import AgentsimError as AgentsimError
from ._kernel.errors import AgentsimWarning as AgentsimWarning
from ._kernel.errors import DeadlockError as DeadlockError
from ._kernel.errors import UnawaitedCallError as UnawaitedCallError
from ._kernel.errors import LeftoverTasksWarning as LeftoverTasksWarning
from ._kernel.errors import ConcurrentSimulationError as ConcurrentSimulationError
from ._kernel.errors import NestedSimulationError as NestedSimulationError
from ._kernel.errors import SwallowedCancellationWarning as SwallowedCancellationWarning
from ._kernel.errors import NotInSimulationError as NotInSimulationError
from ._kernel.errors import SimulationConfigError as SimulationConfigError
from ._kernel.errors import SimulationError as SimulationError
from ._kernel.errors import SimulationEscapeError as SimulationEscapeError
from ._kernel.errors import TaskSnapshot as TaskSnapshot
from ._kernel.errors import UsageError as UsageError
from ._kernel.errors import VirtualTimeLimitError as VirtualTimeLimitError
from ._kernel.errors import WallTimeoutError as WallTimeoutError
from ._kernel.options import RunOptions as RunOptions
from ._kernel.scheduling import Chooser as Chooser
from ._kernel.scheduling import FifoPolicy as FifoPolicy
from ._kernel.scheduling import JitterPolicy as JitterPolicy
from ._kernel.scheduling import PCTPolicy as PCTPolicy
from ._kernel.scheduling import RandomPolicy as RandomPolicy
from ._kernel.scheduling import ReplayPolicy as ReplayPolicy
from ._kernel.scheduling import SchedulingPolicy as SchedulingPolicy
from ._kernel.simulation import SimulationResult as SimulationResult
from ._kernel.simulation import run as run
from ._kernel.simulation import simulate as simulate
from ._kernel.tracing.trace import Trace as Trace
from ._kernel.tracing.trace import TraceEvent as TraceEvent
from ._kernel.view import SimulationView as SimulationView
from .explore import ExploreOptions as ExploreOptions
from .explore import Focus as Focus
from .explore import FocusNotReachedError as FocusNotReachedError
from .explore import ExploreReport as ExploreReport
from .explore import Schedule as Schedule
from .explore import explore as explore
from .explore import replay as replay

__all__ = [
    "TICKS_PER_SECOND",
    "now",
    "choose",
    "record_event",
    "reached",
    "sometimes",
    "seeded_random",
    "register_lane",
    "AgentsimError",
    "AgentsimWarning",
    "DeadlockError",
    "UnawaitedCallError",
    "LeftoverTasksWarning",
    "NestedSimulationError",
    "ConcurrentSimulationError",
    "SwallowedCancellationWarning",
    "NotInSimulationError",
    "SimulationConfigError",
    "SimulationError",
    "SimulationEscapeError",
    "TaskSnapshot",
    "UsageError",
    "VirtualTimeLimitError",
    "WallTimeoutError",
    "RunOptions",
    "Chooser",
    "FifoPolicy",
    "JitterPolicy",
    "PCTPolicy",
    "RandomPolicy",
    "ReplayPolicy",
    "SchedulingPolicy",
    "SimulationResult",
    "run",
    "simulate",
    "Trace",
    "TraceEvent",
    "SimulationView",
    "ExploreOptions",
    "Focus",
    "FocusNotReachedError",
    "ExploreReport",
    "Schedule",
    "explore",
    "replay",
    "__version__",
]


__version__ = "0.1.0"

# The Agents SDK's adapter joins the first simulation started after the
# program imported ``agents`` (the kernel itself knows no SDK).
from ._kernel import extensions as _extensions  # noqa: E402

_extensions.adapter("agents", "agentsim.contrib.openai_agents")
