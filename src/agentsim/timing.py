"""Durations for doubles: fixed, per call, computed, or drawn from a seeded distribution.

Every timed double (``agentsim.models``, ``agentsim.sandbox``,
``agentsim.voice``) takes its latencies as a *delay spec*:

==========================  ===============================================
spec                        meaning
==========================  ===============================================
``0.25``                    0.25 virtual seconds, every time
``[0.1, 0.5, 2.0]``         the n-th call takes the n-th value (the last
                            value repeats once the list is used up)
``lambda index: ...``       computed from the 0-based call index
``uniform(0.1, 0.3)``       drawn from a distribution with the simulation's
``exponential(0.2)``        seed, so one seed fixes the timing as well as the
``lognormal(0.3, 0.5)``     order (each double draws from its own stream)
==========================  ===============================================

A distribution's *nominal* value (uniform: the midpoint; exponential: the
mean; log-normal: the median) is its no-jitter value: when the explorer
shrinks a failure it scales every draw toward it (``jitter_scale``).
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from ._kernel.core import current_core, seeded_random
from ._kernel.errors import SimulationConfigError


class Delay(ABC):
    """A duration in virtual seconds for the ``index``-th event of a double."""

    @abstractmethod
    def seconds(self, index: int, rng: random.Random) -> float:
        """The duration for event ``index`` (0-based), using ``rng`` for any randomness."""

    #: The value without jitter; None for deterministic delays.
    nominal: float | None = None


DelaySpec: TypeAlias = "float | int | Sequence[float] | Callable[[int], float] | Delay"


def _check(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0 or math.isinf(value):
        raise SimulationConfigError(name, value, "a finite number of seconds >= 0")
    return float(value)


@dataclass(frozen=True)
class Fixed(Delay):
    value: float

    def seconds(self, index: int, rng: random.Random) -> float:
        return self.value


@dataclass(frozen=True)
class PerCall(Delay):
    values: tuple[float, ...]

    def seconds(self, index: int, rng: random.Random) -> float:
        return self.values[min(index, len(self.values) - 1)]


@dataclass(frozen=True)
class Computed(Delay):
    function: Callable[[int], float]
    name: str

    def seconds(self, index: int, rng: random.Random) -> float:
        return _check(self.name, self.function(index))


@dataclass(frozen=True)
class Uniform(Delay):
    low: float
    high: float

    def seconds(self, index: int, rng: random.Random) -> float:
        return rng.uniform(self.low, self.high)

    @property
    def nominal(self) -> float:  # type: ignore[override]
        return (self.low + self.high) / 2


@dataclass(frozen=True)
class Exponential(Delay):
    mean: float
    cap: float | None = None

    def seconds(self, index: int, rng: random.Random) -> float:
        value = rng.expovariate(1.0 / self.mean) if self.mean > 0 else 0.0
        return min(value, self.cap) if self.cap is not None else value

    @property
    def nominal(self) -> float:  # type: ignore[override]
        return self.mean


@dataclass(frozen=True)
class LogNormal(Delay):
    median: float
    sigma: float
    cap: float | None = None

    def seconds(self, index: int, rng: random.Random) -> float:
        value = rng.lognormvariate(math.log(self.median), self.sigma) if self.median > 0 else 0.0
        return min(value, self.cap) if self.cap is not None else value

    @property
    def nominal(self) -> float:  # type: ignore[override]
        return self.median


def uniform(low: float, high: float) -> Delay:
    """Uniformly between ``low`` and ``high`` seconds (seeded)."""
    low, high = _check("low", low), _check("high", high)
    if high < low:
        raise SimulationConfigError("high", high, f"a value >= low ({low})")
    return Uniform(low, high)


def exponential(mean: float, *, cap: float | None = None) -> Delay:
    """Exponentially distributed with ``mean`` seconds, optionally capped (seeded)."""
    return Exponential(_check("mean", mean), None if cap is None else _check("cap", cap))


def lognormal(median: float, sigma: float, *, cap: float | None = None) -> Delay:
    """Log-normal around ``median`` seconds with shape ``sigma`` (long tails, like networks)."""
    return LogNormal(_check("median", median), _check("sigma", sigma), None if cap is None else _check("cap", cap))


def as_delay(spec: DelaySpec, *, name: str) -> Delay:
    """Validate a delay spec and turn it into a :class:`Delay` (``name`` is used in errors)."""
    if isinstance(spec, Delay):
        return spec
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return Fixed(_check(name, spec))
    if callable(spec):
        return Computed(spec, name)
    if isinstance(spec, Sequence) and not isinstance(spec, str) and spec:
        return PerCall(tuple(_check(f"{name}[{i}]", value) for i, value in enumerate(spec)))
    raise SimulationConfigError(name, spec, "seconds, a non-empty list of seconds per call, a function of the call index, or a distribution")


class DelaySource:
    """A delay spec bound to one double: draws the n-th duration from its own seeded stream."""

    def __init__(self, spec: DelaySpec, *, name: str, stream: str) -> None:
        self.delay = as_delay(spec, name=name)
        self._stream = stream

    def seconds(self, index: int) -> float:
        value = self.delay.seconds(index, seeded_random(f"timing:{self._stream}"))
        nominal = self.delay.nominal
        if nominal is None:
            return value
        # The explorer's shrinker narrows jitter toward the nominal value.
        core = current_core()
        scale = core.policy.jitter_scale if core is not None else 1.0
        return value if scale == 1.0 else max(0.0, nominal + (value - nominal) * scale)
