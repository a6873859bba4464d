"""``Focus``: where in a long run a sweep spends its deviations.

``explore(fn, focus=(start, end))`` keeps every deviation (order, timing)
inside that window of virtual time; ``focus="label"`` (or a list of
labels: ``agentsim.sometimes`` labels, ``agentsim.realtime.MOMENTS``)
windows each instant where a base run evaluated one of those moments,
``margin`` seconds either side. This module turns the user's words into
the checkpoints a sweep branches from (``_branched.py`` runs them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._kernel.clock import TICKS_PER_SECOND
from .._kernel.errors import SimulationConfigError
from .._kernel.validation import non_negative, positive, whole

_EXPECTED = (
    "a window of virtual seconds (start, end) with 0 <= start < end, a moment's label (str), a list of labels, "
    "'START:END' as the command line takes it, or agentsim.Focus(window=..., moments=[...], margin=...)"
)


@dataclass(frozen=True)
class Focus:
    """Where a sweep's deviations go.

    ``window``: ``(start, end)`` in virtual seconds; every deviation falls
    inside it and each explored run branches from the base run's state at
    ``start``. ``moments``: labels of ``agentsim.sometimes``/``reached``;
    each instant a base run evaluated one becomes a window of ``margin``
    seconds either side (inside ``window`` if both are given). ``bases``:
    how many base runs seed the checkpoints: the stock schedule, then
    ``bases - 1`` runs whose prefix drifts (``timed`` deviations before the
    window, each from its own seed), so that a drift accumulated before the
    window is explored too. ``fork``: branch by ``os.fork()`` where the
    platform has it (else every run re-simulates its prefix, with the same
    schedules and report)::

        agentsim.explore(call, focus=(1200, 1260))
        agentsim.explore(call, focus=agentsim.Focus(moments=[MOMENTS[1]], margin=2.0, bases=3))
    """

    window: tuple[float, float] | None = None
    moments: tuple[str, ...] = ()
    margin: float = 1.0
    bases: int = 1
    fork: bool = True

    def __post_init__(self) -> None:
        if self.window is not None:
            object.__setattr__(self, "window", _window(self.window))
        moments = self.moments
        if isinstance(moments, str):
            moments = (moments,)
        if not isinstance(moments, (list, tuple)) or not all(isinstance(label, str) and label for label in moments):
            raise SimulationConfigError("focus.moments", self.moments, "a list of moment labels (non-empty str), as agentsim.sometimes names them")
        object.__setattr__(self, "moments", tuple(moments))
        if self.window is None and not self.moments:
            raise SimulationConfigError("focus", self, "a window (start, end), moments=[...], or both")
        object.__setattr__(self, "margin", positive("focus.margin", self.margin, expected="seconds either side of a moment's instant, > 0"))
        object.__setattr__(self, "bases", whole("focus.bases", self.bases, minimum=1, expected="how many base runs seed the checkpoints, >= 1"))
        if not isinstance(self.fork, bool):
            raise SimulationConfigError("focus.fork", self.fork, "True (branch by os.fork where available) or False (re-simulate each prefix)")

    @classmethod
    def of(cls, focus: object) -> Focus | None:
        """``focus`` as ``explore``, the marker, profiles and the command line give it."""
        if focus is None or isinstance(focus, Focus):
            return focus
        if isinstance(focus, str):
            start, colon, end = focus.partition(":")
            if colon and _is_number(start) and _is_number(end):
                return cls(window=(float(start), float(end)))
            return cls(moments=(focus,))
        if isinstance(focus, Mapping):
            try:
                fields: dict[str, Any] = {key: tuple(value) if isinstance(value, list) else value for key, value in focus.items()}
                return cls(**fields)
            except TypeError:
                raise SimulationConfigError("focus", focus, f"a table with window, moments, margin, bases or fork ({_EXPECTED})") from None
        if isinstance(focus, (list, tuple)):
            if len(focus) == 2 and all(_is_number(part) and not isinstance(part, str) for part in focus):
                return cls(window=(focus[0], focus[1]))
            if focus and all(isinstance(label, str) for label in focus):
                return cls(moments=tuple(focus))
        raise SimulationConfigError("focus", focus, _EXPECTED)

    def windows(self, instants: Mapping[str, Sequence[float]], *, limit: int) -> list[tuple[float, float]]:
        """The windows to branch from, in time order: ``window``, or each
        instant of ``moments`` (``instants``: what a base run evaluated)
        widened by ``margin``, overlapping ones merged, at most ``limit``
        (spread evenly over the run when there are more)."""
        if not self.moments:
            assert self.window is not None
            return [self.window]
        low, high = self.window if self.window is not None else (0.0, math.inf)
        missing = [label for label in self.moments if not instants.get(label)]
        if len(missing) == len(self.moments):
            raise FocusNotReachedError(self.moments, tuple(sorted(instants)))
        spans: list[tuple[float, float]] = []
        for instant in sorted(t for label in self.moments for t in instants.get(label, ())):
            start, end = max(low, instant - self.margin), min(high, instant + self.margin)
            if start >= end:
                continue
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            else:
                spans.append((start, end))
        if not spans:
            raise FocusNotReachedError(self.moments, tuple(sorted(instants)), window=self.window)
        if len(spans) > limit:
            step = len(spans) / limit
            spans = [spans[int(index * step)] for index in range(limit)]
        return spans

    def describe(self) -> str:
        """The focus in words, for the report."""
        if not self.moments:
            assert self.window is not None
            return f"window {self.window[0]:g}-{self.window[1]:g} s"
        where = f" inside {self.window[0]:g}-{self.window[1]:g} s" if self.window else ""
        return f"{', '.join(repr(label) for label in self.moments)} +/- {self.margin:g} s{where}"


class FocusNotReachedError(SimulationConfigError):
    """A focus on moments that no base run evaluated: nothing to branch from."""

    def __init__(self, moments: tuple[str, ...], evaluated: tuple[str, ...], *, window: tuple[float, float] | None = None) -> None:
        self.moments, self.evaluated, self.window = moments, evaluated, window
        inside = f" inside {window[0]:g}-{window[1]:g} s" if window else ""
        known = ", ".join(repr(label) for label in evaluated) or "none"
        super().__init__(
            "focus",
            list(moments),
            f"moments the base run evaluates{inside} (agentsim.sometimes/reached with these labels); it evaluated: {known}",
        )


def seconds_to_ticks(seconds: float) -> int:
    return round(seconds * TICKS_PER_SECOND)


def _is_number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False


def _window(window: object) -> tuple[float, float]:
    if not isinstance(window, (list, tuple)) or len(window) != 2:
        raise SimulationConfigError("focus.window", window, "(start, end) in virtual seconds, 0 <= start < end")
    start = non_negative("focus.window", window[0], expected="a start >= 0 in virtual seconds")
    end = positive("focus.window", window[1], expected="an end > start in virtual seconds", infinite=True)
    if end <= start:
        raise SimulationConfigError("focus.window", window, "(start, end) with start < end (virtual seconds)")
    return (start, end)
