"""A double belongs to the simulation that first used it."""

from __future__ import annotations

from .core import current_core
from .errors import SimulationConfigError


class OneSimulation:
    """Binds a double to the first simulation that uses it: state such as
    seeded draws, open connections and recorded rules belongs to one run, so
    use in a second simulation is refused with a usage error naming the
    double::

        self._run = OneSimulation("SimulatedPlayer", "a new player per run: build it inside the simulated function")
        ...
        self._run.check()   # at each use
    """

    __slots__ = ("_owner", "_advice", "_core")

    def __init__(self, owner: str, advice: str = "a new one per run: build it inside the simulated function") -> None:
        self._owner = owner
        self._advice = advice
        self._core: object | None = None

    def check(self) -> None:
        """Bind on first use; raise :class:`~agentsim.SimulationConfigError` in another simulation."""
        core = current_core()
        if core is not self._core:
            if self._core is not None:
                raise SimulationConfigError(self._owner, "used in a second simulation", self._advice)
            self._core = core
