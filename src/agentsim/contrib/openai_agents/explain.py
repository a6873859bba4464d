"""What the SDK was doing when a run failed, said in the SDK's terms.

Registered as an explainer (``agentsim._kernel.extensions``): a socket
escape under the SDK's model classes is a *real model call*, a websocket
escape under its Realtime adapter a *real Realtime connection*, and
``RuntimeError: no running event loop`` raised in the SDK on the trio
backend is the SDK needing asyncio. Each becomes a typed error that says
which double to use.
"""

from __future__ import annotations

import importlib.util
import os

from ..._kernel.core import SimulationCore
from ..._kernel.errors import SimulationError, SimulationEscapeError, UsageError

def _package_directory(name: str) -> str:
    spec = importlib.util.find_spec(name)
    origin = spec.origin if spec is not None else None
    return os.path.dirname(origin) + os.sep if origin else f"{os.sep}{name}{os.sep}"


#: The installed SDK's folder (not any folder named "agents").
_AGENTS = _package_directory("agents")
#: Files of the SDK (and the openai client) whose network use is a model call.
_MODEL_CALLS = (os.path.join(_AGENTS, "models") + os.sep, os.path.join(_package_directory("openai"), "_base_client.py"))
_REALTIME_CONNECTIONS = (os.path.join(_AGENTS, "realtime", "openai_realtime.py"),)


class RealModelCallError(SimulationEscapeError):
    """The SDK made a real model or Realtime call inside a simulation (a model
    class that talks to the API reached the network). ``what`` says which;
    the message names the double to give the agent instead."""

    def __init__(self, escape: SimulationEscapeError, what: str, advice: str) -> None:
        super().__init__(escape.kind, escape.api, escape.site)
        self.what = what
        self.stack = escape.stack
        self.args = (
            f"a real {what} inside a simulation: the SDK reached the network ({escape.api} at {escape.site}). {advice}",
        )


class SdkBackendError(UsageError, SimulationError):
    """The OpenAI Agents SDK ran on the trio backend: it is asyncio-only (it
    calls ``asyncio`` directly), so it fails there with ``no running event
    loop``. Run the simulation with ``backend="asyncio"`` (the default)."""

    def __init__(self) -> None:
        super().__init__(
            "the OpenAI Agents SDK runs on asyncio only, and this simulation runs on trio "
            "(its RuntimeError: no running event loop). Run it with backend='asyncio' (the default; the "
            "pytest marker picks trio only for @pytest.mark.trio or anyio's trio backend)"
        )


def _under(stack: tuple[str, ...], places: tuple[str, ...]) -> bool:
    return any(place in filename for filename in stack for place in places)


def _traceback_files(error: BaseException) -> tuple[str, ...]:
    files: list[str] = []
    traceback = error.__traceback__
    while traceback is not None:
        files.append(traceback.tb_frame.f_code.co_filename)
        traceback = traceback.tb_next
    return tuple(files)


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def explain(core: SimulationCore, error: BaseException) -> BaseException | None:
    """The typed error for ``error`` if the SDK caused it, else None."""
    if isinstance(error, SimulationEscapeError) and not isinstance(error, RealModelCallError):
        if _under(error.stack, _REALTIME_CONNECTIONS):
            return RealModelCallError(
                error, "Realtime connection",
                "Give the session a double: agentsim.realtime.ScriptedRealtimeTransport, "
                "TimedRealtimeModel(ScriptedRealtimeModel([...])), or SimulatedRealtimeServer(...).model() for the real adapter.",
            )
        if _under(error.stack, _MODEL_CALLS):
            return RealModelCallError(
                error, "model call",
                "Give the agent a scripted model: agents.testing.ScriptedModel([...]), or "
                "agentsim.models.TimedModel(ScriptedModel([...]), latency=...) to give it timing.",
            )
    if core.backend == "trio":
        if isinstance(error, SimulationEscapeError) and "new_event_loop" in error.api and _under(error.stack, (_AGENTS,)):
            return SdkBackendError()  # the SDK asked asyncio for a loop, and trio runs none
        for leaf in _leaves(error):
            if isinstance(leaf, RuntimeError) and "no running event loop" in str(leaf) and _AGENTS in "".join(_traceback_files(leaf)):
                return SdkBackendError()
    return None
