"""Recorded gaps as windows: "the same call, a few ms earlier or later".

A replayed gap keeps its recorded value as the nominal instant (so the
stock schedule, run 0 of a sweep, is the recording's own timeline) and
becomes a window of ``± max(relative * gap, absolute)`` around it, which the
explorer orders against every other timer (``random``, ``pct``, the
portfolio) and times (``timed``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import random

from .._kernel.core import current_core
from .._kernel.errors import SimulationConfigError
from ..toolkit.timing import Delay, DelaySource, call_window

#: Defaults: 10 % of a gap, and never less than 30 ms.
DEFAULT_RELATIVE = 0.10
DEFAULT_ABSOLUTE = 0.030


@dataclass(frozen=True)
class Tolerance:
    """How far a replayed gap may move: ``± max(relative * gap, absolute)``
    seconds (defaults 10 % and 30 ms). ``Tolerance(0, 0)`` replays the
    recorded instants exactly, with nothing to explore."""

    relative: float = DEFAULT_RELATIVE
    absolute: float = DEFAULT_ABSOLUTE

    def __post_init__(self) -> None:
        for name in ("relative", "absolute"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise SimulationConfigError(f"tolerance.{name}", value, "a number >= 0 (relative: a fraction of the gap; absolute: seconds)")

    def half_width(self, gap: float) -> float:
        return max(self.relative * gap, self.absolute)

    def window(self, gap: float, spacing: float | None = None) -> tuple[float, float, float]:
        """``(earliest, nominal, latest)`` of a recorded gap, never below 0.
        ``spacing`` (default: the gap) is what the tolerance is a fraction
        of: a replayed server event's distance from the event before it, so
        an event 30 s into a silence may move by 3 s and an audio chunk 20 ms
        after the last by the absolute tolerance."""
        half = self.half_width(gap if spacing is None else spacing)
        return max(0.0, gap - half), gap, gap + half


def as_tolerance(value: object) -> Tolerance:
    """A ``Tolerance``, or ``(relative, absolute)``, or a relative fraction."""
    if isinstance(value, Tolerance):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        return Tolerance(*value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Tolerance(float(value), DEFAULT_ABSOLUTE)
    raise SimulationConfigError("tolerance", value, "a Tolerance(relative, absolute), a (relative, absolute) pair, or a relative fraction like 0.1")


@dataclass(frozen=True)
class _Around(Delay):
    """A window around a recorded value that need not be its middle (a gap
    partly past is cut off): what ``jitter`` samples from."""

    low: float
    around: float
    high: float

    def seconds(self, index: int, rng: random.Random) -> float:
        return rng.uniform(self.low, self.high)

    @property
    def nominal(self) -> float:  # type: ignore[override]
        return self.around

    def window(self, index: int) -> tuple[float, float, float] | None:
        return (self.low, self.around, self.high) if self.high > self.low else None


def call_at_gap(
    anchor: float, gap: float, tolerance: Tolerance, callback: Callable[[], object], *, spacing: float | None = None, not_before: float = 0.0
) -> asyncio.TimerHandle:
    """Call ``callback`` ``gap`` seconds after the virtual instant ``anchor``,
    on a window of ``tolerance`` (of ``spacing``, see :meth:`Tolerance.window`;
    what is already past of it is cut off: never before now, nor before
    ``not_before``)."""
    now = asyncio.get_running_loop().time()
    floor = max(now, not_before)
    low, nominal, high = (anchor + bound for bound in tolerance.window(gap, spacing))
    low, nominal, high = max(low, floor) - now, max(nominal, floor) - now, max(high, floor) - now
    core = current_core()
    if core is not None and not core.policy.windows and core.policy.jitter_scale and high > low:
        # A policy that samples delays (jitter) draws one point in the window.
        seconds = DelaySource(_Around(low, nominal, high), name="recorded gap", stream="recording:gaps").seconds(0)
        return asyncio.get_running_loop().call_later(seconds, callback)
    return call_window(low, nominal, high, callback)


async def sleep_gap(anchor: float, gap: float, tolerance: Tolerance) -> None:
    """Sleep until ``gap`` after ``anchor``, on a window (see :func:`call_at_gap`)."""
    woken = asyncio.get_running_loop().create_future()
    def wake() -> None:
        if not woken.done():
            woken.set_result(None)

    handle = call_at_gap(anchor, gap, tolerance, wake)
    try:
        await woken
    finally:
        handle.cancel()
