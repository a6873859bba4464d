"""Virtual time as integer ticks.

A simulation's clock counts integer nanoseconds ("ticks"). Floats are only the
public face: ``loop.time()``, ``trio.current_time()`` and :func:`agentsim.now`
return seconds, and every deadline handed to the kernel as seconds is rounded
to the nearest tick once, at the boundary.

Why integers: two events meant for the same instant must really tie, so that
the scheduling policy (not float rounding) decides their order. With float
time, ten ``sleep(0.05)`` end at ``0.49999999999999994`` while one
``sleep(0.5)`` ends at ``0.5``, and the "tie" silently becomes an ordering.
With ticks, ``now + round(0.05 * 1e9)`` ten times is exactly ``500_000_000``.

A nanosecond resolution keeps float round-trips exact for about 100 days of
virtual time (2**53 ns), far beyond any simulated call.
"""

from __future__ import annotations

import math
from typing import Final

TICKS_PER_SECOND: Final = 1_000_000_000


def seconds_to_ticks(seconds: float) -> int:
    """Round a duration or instant in seconds to the nearest tick."""
    return round(seconds * TICKS_PER_SECOND)


def ticks_to_seconds(ticks: int) -> float:
    """The float seconds that stand for ``ticks``."""
    return ticks / TICKS_PER_SECOND


def deadline_ticks(seconds: float | None) -> int | None:
    """Ticks of an optional deadline; ``None`` and ``inf`` both mean "no limit"."""
    if seconds is None or math.isinf(seconds):
        return None
    return seconds_to_ticks(seconds)


def window_ticks(now: int, earliest: float, nominal: float, latest: float) -> tuple[int, int, int]:
    """A window given in seconds from now, as instants in ticks (each rounded once)."""
    # (seconds_to_ticks inlined: a link arms a window per message.)
    low = now + round(earliest * TICKS_PER_SECOND)
    middle = now + round(nominal * TICKS_PER_SECOND)
    high = now + round(latest * TICKS_PER_SECOND)
    if not low <= middle <= high:
        from .errors import SimulationConfigError

        raise SimulationConfigError("window", (earliest, nominal, latest), "earliest <= nominal <= latest, in seconds from now")
    return low, middle, high


class VirtualClock:
    """The one clock of a simulation: an integer tick that only moves forward.

    Backends move it when every task is blocked (:meth:`move_to`); everything
    else only reads it. Every rule of virtual time lives here: rounding to
    ticks, the limit, moving forward only.
    """

    __slots__ = ("ticks", "limit_ticks")

    def __init__(self, limit_seconds: float | None = None) -> None:
        #: Current virtual time in ticks.
        self.ticks: int = 0
        #: The instant the simulation may not pass (``max_virtual_time``), or None.
        self.limit_ticks: int | None = deadline_ticks(limit_seconds)

    @property
    def seconds(self) -> float:
        """Current virtual time in seconds."""
        return self.ticks / TICKS_PER_SECOND

    def move_to(self, ticks: int) -> bool:
        """Jump forward to ``ticks`` (never backwards) unless that passes
        ``max_virtual_time``: then stay, and return False (the backend ends
        the run with :class:`~agentsim.VirtualTimeLimitError`). The one way
        the backends move time when every task is blocked."""
        limit = self.limit_ticks
        if limit is not None and ticks > limit:
            return False
        if ticks > self.ticks:
            self.ticks = ticks
        return True

    def ticks_after(self, delay: float) -> int:
        """The tick ``delay`` seconds from now (a delay <= 0 is now): exact
        integer arithmetic from now, so ten ``sleep(0.05)`` end at 0.5 s."""
        # (seconds_to_ticks inlined: every sleep comes here.)
        return self.ticks + round(delay * TICKS_PER_SECOND) if delay > 0 else self.ticks
