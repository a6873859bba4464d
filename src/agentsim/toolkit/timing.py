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

A distribution is also a *window*: the range of instants a real delay of
that kind may take (uniform: ``[low, high]``; exponential: ``[0, 99th
percentile]``; log-normal: ``[1st, 99th percentile]``; each capped by
``cap``), around a *nominal* value (uniform: the midpoint; exponential: the
mean; log-normal: the median). A double that *sleeps* a delay
(:meth:`DelaySource.sleep`, :func:`sleep`, :func:`sleep_between`) sleeps on a
windowed timer: which of several overlapping timers fires first is a
scheduling choice the explorer makes (``random``, ``pct``), ``fifo`` fires
each at its nominal instant, and ``jitter`` draws one point per delay from
the distribution with the seed (sampling, the old behaviour). A delay that is
only *computed* (:meth:`DelaySource.seconds`) is drawn, scaled toward the
nominal value by the policy's ``jitter_scale`` (0 under ``fifo``).
"""

from __future__ import annotations

import asyncio
import inspect
import math
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias


from .._kernel.backends import direct_time
from .._kernel.core import SimulationCore, current_core, seeded_random
from .._kernel.errors import NotInSimulationError, SimulationConfigError
from .._kernel.validation import non_negative, positive

__all__ = [
    "Delay",
    "DelaySource",
    "DelaySpec",
    "Pacer",
    "Speed",
    "as_delay",
    "call_window",
    "check_speed",
    "exponential",
    "lognormal",
    "sleep",
    "sleep_between",
    "uniform",
]


class Delay(ABC):
    """A duration in virtual seconds for the ``index``-th event of a double."""

    @abstractmethod
    def seconds(self, index: int, rng: random.Random) -> float:
        """The duration for event ``index`` (0-based), using ``rng`` for any randomness."""

    #: The value without jitter; None for deterministic delays.
    nominal: float | None = None

    def window(self, index: int) -> tuple[float, float, float] | None:
        """``(earliest, nominal, latest)`` seconds of event ``index``, or None for
        a deterministic delay (a point)."""
        return None


DelaySpec: TypeAlias = "float | int | Sequence[float] | Callable[[int], float] | Delay"


def _check(name: str, value: float) -> float:
    return non_negative(name, value, expected="a finite number of seconds >= 0")


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
    #: ``window()``, computed once (asked for every message of a link).
    _window: tuple[float, float, float] | None = field(init=False, repr=False, compare=False)

    def seconds(self, index: int, rng: random.Random) -> float:
        return rng.uniform(self.low, self.high)

    @property
    def nominal(self) -> float:  # type: ignore[override]
        return (self.low + self.high) / 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "_window", (self.low, self.nominal, self.high) if self.high > self.low else None)

    def window(self, index: int) -> tuple[float, float, float] | None:
        return self._window


@dataclass(frozen=True)
class Exponential(Delay):
    mean: float
    cap: float | None = None
    _window: tuple[float, float, float] | None = field(init=False, repr=False, compare=False)

    def seconds(self, index: int, rng: random.Random) -> float:
        value = rng.expovariate(1.0 / self.mean) if self.mean > 0 else 0.0
        return min(value, self.cap) if self.cap is not None else value

    @property
    def nominal(self) -> float:  # type: ignore[override]
        return self.mean if self.cap is None else min(self.mean, self.cap)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_window", _capped(0.0, self.mean, self.mean * _EXPONENTIAL_P99, self.cap))

    def window(self, index: int) -> tuple[float, float, float] | None:
        return self._window


@dataclass(frozen=True)
class LogNormal(Delay):
    median: float
    sigma: float
    cap: float | None = None
    _window: tuple[float, float, float] | None = field(init=False, repr=False, compare=False)

    def seconds(self, index: int, rng: random.Random) -> float:
        value = rng.lognormvariate(math.log(self.median), self.sigma) if self.median > 0 else 0.0
        return min(value, self.cap) if self.cap is not None else value

    @property
    def nominal(self) -> float:  # type: ignore[override]
        return self.median if self.cap is None else min(self.median, self.cap)

    def __post_init__(self) -> None:
        if _NORMAL_P99 * self.sigma > _LARGEST_EXPONENT:
            raise SimulationConfigError("sigma", self.sigma, f"a shape whose 99th percentile is a finite number (sigma <= {_LARGEST_EXPONENT / _NORMAL_P99:.0f})")
        spread = math.exp(_NORMAL_P99 * self.sigma)
        object.__setattr__(self, "_window", _capped(self.median / spread, self.median, self.median * spread, self.cap))

    def window(self, index: int) -> tuple[float, float, float] | None:
        return self._window


#: The 99th percentile of an exponential distribution, in means (ln 100).
_EXPONENTIAL_P99: Final = math.log(100)
#: The 99th percentile of the standard normal distribution.
_NORMAL_P99: Final = 2.3263478740408408
#: ``math.exp`` of more overflows a float.
_LARGEST_EXPONENT: Final = 709.0


def _capped(low: float, nominal: float, high: float, cap: float | None) -> tuple[float, float, float] | None:
    if cap is not None:
        low, nominal, high = min(low, cap), min(nominal, cap), min(high, cap)
    return (low, nominal, high) if high > low else None


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
        try:
            inspect.signature(spec).bind(0)
        except TypeError:
            raise SimulationConfigError(name, spec, "a function of one argument, the call index, returning seconds") from None
        except ValueError:  # no signature to read (a builtin): trust it
            pass
        return Computed(spec, name)
    if isinstance(spec, Sequence) and not isinstance(spec, str) and spec:
        return PerCall(tuple(_check(f"{name}[{i}]", value) for i, value in enumerate(spec)))
    raise SimulationConfigError(name, spec, "seconds, a non-empty list of seconds per call, a function of the call index, or a distribution")


class DelaySource:
    """A delay spec bound to one double: the n-th duration, from its own seeded stream.

    Doubles *sleep* their delays with :meth:`sleep` (a windowed timer when the
    spec is a distribution, so the explorer can order it against other
    timers) and *compute* them with :meth:`seconds` where a number is needed::

        latency = DelaySource(uniform(0.2, 0.4), name="latency", stream="my-double:latency")
        await latency.sleep(call_index)
    """

    def __init__(self, spec: DelaySpec, *, name: str, stream: str) -> None:
        self.delay = as_delay(spec, name=name)
        self.name = name
        self._purpose = f"timing:{stream}"

    def seconds(self, index: int) -> float:
        """The duration of event ``index``, drawn (distributions) or given."""
        try:
            value = self.delay.seconds(index, seeded_random(self._purpose))
        except TypeError:
            if index.__class__ is not int:  # (checked only when it failed: this runs per message)
                raise SimulationConfigError("index", index, "the event's index, a whole number >= 0") from None
            raise
        nominal = self.delay.nominal
        if nominal is None:
            return value
        core = current_core()
        if core is None:
            return value
        # Nominal under fifo; the explorer's shrinker narrows jitter toward it.
        scale = core.policy.jitter_scale
        if not scale:
            return nominal
        core.jitter_draws += 1
        drawn = value if scale == 1.0 else max(0.0, nominal + (value - nominal) * scale)
        # On the timeline: a failure report shows the draws near its decisive moments.
        core.trace.record(core.clock.ticks, "delay", core.task_label(), f"{self.name}[{index}] drew {drawn * 1000:.3f} ms, nominal {nominal * 1000:.3f} ms")
        return drawn

    def window(self, index: int) -> tuple[float, float, float] | None:
        """``(earliest, nominal, latest)`` of event ``index``; None for a point."""
        return self.delay.window(index)

    async def sleep(self, index: int) -> None:
        """Sleep the duration of event ``index``: a windowed timer for a
        distribution (a drawn point under the ``jitter`` strategy and outside
        a simulation), a plain sleep otherwise."""
        window = self.delay.window(index)
        core = current_core()
        if window is None or core is None or not core.policy.windows:
            await direct_time.sleep(self.seconds(index))
            return
        core.windowed_timers += 1
        await core.sleep_window(*window)


    async def sleep_from(self, instant: float, index: int) -> None:
        """Sleep until ``instant`` (virtual seconds, now or past) plus the
        duration of event ``index``: a deadline counted from an earlier event
        (a transcript due 0.2-0.4 s after speech ended). Returns at once when
        that is already past; a window is what is left of it."""
        non_negative("instant", instant, expected="a virtual time in seconds >= 0")
        now = direct_time.current_time()
        window = self.delay.window(index)
        core = current_core()
        if window is None or core is None or not core.policy.windows:
            await direct_time.sleep(max(0.0, instant + self.seconds(index) - now))
            return
        elapsed = now - instant
        low, nominal, high = (max(0.0, bound - elapsed) for bound in window)
        if high > low:
            core.windowed_timers += 1
            await core.sleep_window(low, nominal, high)
        else:
            await direct_time.sleep(high)

    def call_later(self, index: int, callback: Callable[..., object], *args: Any) -> asyncio.TimerHandle:
        """``loop.call_later`` with the duration of event ``index`` (asyncio
        only): a windowed timer for a distribution, as :meth:`sleep`."""
        loop = _timer_loop("DelaySource.call_later", callback)
        window = self.delay.window(index)
        core = current_core()
        if window is None or core is None or not core.policy.windows or not hasattr(loop, "call_window"):
            return loop.call_later(self.seconds(index), callback, *args)
        return call_window(*window, callback, *args)

    def windowed(self) -> bool:
        """Whether this source's delays are windows in the running simulation
        (a distribution, under a policy that explores windows)."""
        return self.delay.window(0) is not None and _windows_explored()


#: A delay surely at least one tick of the virtual clock (1 ns) once rounded:
#: a window's nominal instant must be that far ahead for FIFO to fire it as
#: a plain timer (nearer, it is nominally due now, which a window waits out).
_ONE_TICK: Final = 1e-9


def _windows_explored() -> bool:
    """Whether a simulation is running whose policy explores windows (else
    delays known as a range are drawn as points)."""
    core = current_core()
    return core is not None and core.policy.windows


def _timer_loop(api: str, callback: object) -> asyncio.AbstractEventLoop:
    """The running loop a timer of ``api`` goes on, and its callback, checked."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise NotInSimulationError(api) from None
    if not callable(callback):
        raise SimulationConfigError("callback", callback, "a function to call when the timer fires")
    return loop


def call_window(earliest: float, nominal: float, latest: float, callback: Callable[..., object], *args: Any) -> asyncio.TimerHandle:
    """Call ``callback(*args)`` between ``earliest`` and ``latest`` seconds from
    now, on a windowed timer of the running simulation's asyncio loop (see
    :func:`sleep_between`); outside a simulation, at ``nominal`` on the running
    loop. With no loop running: :class:`~agentsim.NotInSimulationError`."""
    loop = _timer_loop("agentsim.timing.call_window", callback)
    for name, value in (("earliest", earliest), ("nominal", nominal), ("latest", latest)):
        non_negative(name, value, expected="seconds from now >= 0")
    return _call_window_on(loop, current_core(), earliest, nominal, latest, callback, *args)


def _call_window_on(
    loop: asyncio.AbstractEventLoop, core: SimulationCore | None, earliest: float, nominal: float, latest: float, callback: Callable[..., object], *args: Any
) -> asyncio.TimerHandle:
    """:func:`call_window` on ``loop``, the running loop the caller already
    has, of the simulation ``core`` (None: outside one)."""
    if core is None or not hasattr(loop, "call_window"):
        return loop.call_later(nominal, callback, *args)
    core.windowed_timers += 1
    if core.policy.fifo and earliest <= nominal <= latest and nominal > _ONE_TICK:
        # FIFO fires a window still ahead at its nominal instant: the plain
        # timer the loop's call_window makes of it (the same tick), without
        # its arithmetic; a link arms one per message. (Windows that are not
        # plainly in order, or nominally due now, go to call_window.)
        return loop.call_later(nominal, callback, *args)
    handle: asyncio.TimerHandle = loop.call_window(earliest, nominal, latest, callback, *args)
    return handle


async def sleep(spec: DelaySpec, index: int = 0) -> None:
    """Sleep a delay spec's duration for event ``index`` (see :class:`DelaySource`)::

        await agentsim.timing.sleep(uniform(0.28, 0.32))    # a windowed timer
        await agentsim.timing.sleep(0.3)                    # a plain sleep
    """
    await DelaySource(spec, name="spec", stream="sleep").sleep(index)


async def sleep_between(low: float, high: float) -> None:
    """Sleep somewhere between ``low`` and ``high`` seconds: a timer with that
    window. Nominal timing (``fifo``) wakes at the midpoint; ``random`` and
    ``pct`` choose its order against every other timer whose window overlaps;
    ``jitter`` draws a point uniformly with the seed::

        async def reply():
            await agentsim.timing.sleep_between(0.28, 0.32)   # "about 300 ms"
    """
    await sleep(uniform(low, high))


Speed: TypeAlias = "float | tuple[float, float]"


class Pacer:
    """Paces a stream of chunks, each ``chunk_seconds`` of media, ``speed``
    times faster than real time (asyncio doubles: streamed audio, generated
    speech).

    A fixed ``speed`` keeps an exact grid (no drift). A ``(low, high)`` range
    makes each chunk's spacing a window between ``chunk_seconds / high`` and
    ``chunk_seconds / low`` (nominally the midpoint): the stream's progress
    against other timers is then explored like any windowed delay::

        pacer = Pacer(0.04, (1.5, 3.0), name="generation_speed")
        for index, chunk in enumerate(chunks):
            await pacer.until(index)
            send(chunk)
    """

    def __init__(self, chunk_seconds: float, speed: Speed, *, name: str) -> None:
        if not isinstance(name, str):
            raise SimulationConfigError("name", name, "the paced quantity's name, a str (used in errors and the seeded stream)")
        chunk_seconds = positive("chunk_seconds", chunk_seconds, expected="the seconds of content in one chunk, > 0")
        low, high = check_speed(speed, name=name)
        self.chunk_seconds = chunk_seconds
        self.speed = speed
        self._spacing = DelaySource(
            chunk_seconds / low if low == high else uniform(chunk_seconds / high, chunk_seconds / low),
            name=name,
            stream=f"pace:{name}",
        )
        self._start: float | None = None
        self._reached = 0
        #: The spacing when it is fixed (an exact grid), else None.
        self._fixed = self._spacing.delay.value if isinstance(self._spacing.delay, Fixed) else None

    def until(self, index: int) -> Coroutine[Any, Any, None]:
        """Wait until chunk ``index`` (0-based, called in order) is due:
        ``await pacer.until(index)``."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise NotInSimulationError("Pacer.until") from None
        if self._start is None:
            self._start = loop.time()
        if index.__class__ is not int or index < 0:
            raise SimulationConfigError("index", index, "the chunk's index, a whole number >= 0")
        if self._fixed is not None:
            # The sleep itself, not a coroutine around it: a stream awaits
            # one per chunk, and each level is resumed at every wake-up.
            return asyncio.sleep(self._start + index * self._fixed - loop.time())
        return self._windowed_until(index)

    async def _windowed_until(self, index: int) -> None:
        while self._reached < index:
            await self._spacing.sleep(self._reached)
            self._reached += 1


def check_speed(speed: object, *, name: str) -> tuple[float, float]:
    """``(low, high)`` of a speed given as a positive number or a range of them."""
    if isinstance(speed, tuple) and len(speed) == 2:
        low, high = speed
    else:
        low = high = speed
    try:
        low, high = positive(name, low), positive(name, high)
    except SimulationConfigError:
        raise SimulationConfigError(name, speed, "a positive number, or a (low, high) range of them") from None
    if high < low:
        raise SimulationConfigError(name, speed, "a (low, high) range with low <= high")
    return low, high


# What tracebacks, reprs and pickles show: the public module name (see public_names.py).
from .._kernel.public_names import present_as  # noqa: E402

present_as("agentsim.timing", globals())
