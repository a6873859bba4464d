"""Replay: the stock order except at the numbered choices of a schedule."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..errors import SimulationConfigError
from ..validation import number, whole
from .chooser import TrustedChooser
from .policy import ChoiceKind, SchedulingPolicy, fifo_choice

if TYPE_CHECKING:
    from ..core import SimulationCore
    from .chooser import Chooser


def check_deviations(deviations: object) -> dict[int, int]:
    """A replay's deviations, checked: choice numbers (>= 0) to options (>= 0)."""
    if deviations is None:
        return {}
    if not isinstance(deviations, Mapping):
        raise SimulationConfigError("deviations", deviations, "a dict of choice number -> option, both whole numbers >= 0 (e.g. {3: 1})")
    for index, option in deviations.items():
        whole("deviations", index, expected="choice numbers that are whole numbers >= 0")
        whole("deviations", option, expected="options that are whole numbers >= 0")
    return dict(deviations)



class ReplayPolicy(SchedulingPolicy):
    """FIFO order except at the numbered choices in ``deviations``.

    ``deviations`` maps a choice number (0-based, in the order the simulation
    asks) to the option to take there; an option that does not exist at that
    point falls back to FIFO. ``ReplayPolicy({})`` is FIFO taken through the
    policy path. ``jitter_scale`` scales seeded delays toward their nominal
    value, ``windows=False`` draws delays instead of windowing them and
    ``times_delays=True`` asks where each windowed timer lands (see
    :class:`SchedulingPolicy`; a schedule of the ``timed`` strategy).
    """

    name = "replay"

    def __init__(self, deviations: dict[int, int] | None = None, *, jitter_scale: float = 1.0, windows: bool = True, times_delays: bool = False) -> None:
        self.deviations = check_deviations(deviations)
        self.jitter_scale = number("jitter_scale", jitter_scale, expected="a delay jitter scale >= 0 (1: as drawn, 0: nominal)")
        if not isinstance(windows, bool):
            raise SimulationConfigError("windows", windows, "True (delays as windowed timers) or False (drawn points)")
        self.windows = windows
        if not isinstance(times_delays, bool):
            raise SimulationConfigError("times_delays", times_delays, "True (each windowed timer is also a delay choice) or False")
        self.times_delays = times_delays
        self._index = 0

    def chooser(self, core: SimulationCore) -> Chooser:
        if type(self).choose is not ReplayPolicy.choose:
            return super().chooser(core)
        return TrustedChooser(core)

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        index = self._index
        self._index += 1
        chosen = self.deviations.get(index)
        if chosen is not None and 0 <= chosen < len(labels):
            return chosen
        return fifo_choice(kind, labels)
