"""openai-agents inside a simulation: tracing without threads or wall time.

The SDK's default trace provider timestamps spans with ``datetime.now``,
names them with ``uuid4`` and exports them from a background thread. While a
simulation runs, the global provider is swapped for
:class:`SimulatedTraceProvider`: virtual ISO timestamps, counter ids, and no
processors except those the simulated code registers itself (they vanish with
the simulation). The previous provider, or its absence, is restored after.

The SDK is only touched if the simulated program imported it (this adapter
is activated then).
"""

from __future__ import annotations

import contextlib
import itertools
import sys
from datetime import datetime, timezone
from typing import Any

from ..._kernel.core import VIRTUAL_EPOCH, SimulationCore


def _provider_class() -> type:
    from agents.tracing.provider import DefaultTraceProvider

    class SimulatedTraceProvider(DefaultTraceProvider):
        """Trace provider of a simulation: virtual time, counter ids, no export thread."""

        def __init__(self, core: SimulationCore) -> None:
            super().__init__()
            self._core = core
            self._ids = itertools.count(1)

        def time_iso(self) -> str:
            return datetime.fromtimestamp(VIRTUAL_EPOCH + self._core.now, timezone.utc).isoformat()

        def gen_trace_id(self) -> str:
            return f"trace_{next(self._ids):032x}"

        def gen_span_id(self) -> str:
            return f"span_{next(self._ids):024x}"

        def gen_group_id(self) -> str:
            return f"group_{next(self._ids):024x}"

    return SimulatedTraceProvider


_cached_class: type | None = None


class SdkTracing:
    """Context manager: the simulated trace provider for one simulation."""

    def __init__(self, core: SimulationCore) -> None:
        self._core = core
        self._setup: Any = None
        self._saved: Any = None

    def __enter__(self) -> None:
        global _cached_class
        if "agents" not in sys.modules:
            return
        from agents.tracing import setup

        if _cached_class is None:
            _cached_class = _provider_class()
        self._setup = setup
        # The global provider is a module attribute in every release; newer
        # ones guard it with a lock (older ones have none: a null lock then).
        with getattr(setup, "_GLOBAL_TRACE_PROVIDER_LOCK", contextlib.nullcontext()):
            self._saved = getattr(setup, "GLOBAL_TRACE_PROVIDER", None)
            setup.GLOBAL_TRACE_PROVIDER = _cached_class(self._core)

    def __exit__(self, *exc: object) -> None:
        if self._setup is not None:
            with getattr(self._setup, "_GLOBAL_TRACE_PROVIDER_LOCK", contextlib.nullcontext()):
                self._setup.GLOBAL_TRACE_PROVIDER = self._saved
