"""``SimulationView``: the simulation running right now, as a test sees it.

The pytest plugin hands it to tests as the ``sim`` fixture and the command
line passes it to functions that take ``sim``; both read it through here, so
neither needs the other.
"""

from __future__ import annotations


from .core import SimulationCore, current_core
from .tracing.trace import Trace


class SimulationView:
    """The ``sim`` fixture: the simulation the test is running in right now."""

    @property
    def now(self) -> float:
        from .core import now

        return now()

    @property
    def seed(self) -> int:
        return self._core().seed

    @property
    def strategy(self) -> str:
        return self._core().policy.name

    @property
    def backend(self) -> str:
        return self._core().backend

    @property
    def trace(self) -> Trace:
        return self._core().trace

    def _core(self) -> SimulationCore:
        from .errors import NotInSimulationError

        core = current_core()
        if core is None:
            raise NotInSimulationError("sim")
        return core
