"""Checking arguments where they are given: one typed error for every bad value.

Each check returns the value in its canonical type or raises
:class:`~agentsim.SimulationConfigError` naming the parameter, the value and
what is accepted. ``bool`` is never a number here (``True`` is not 1 second).
"""

from __future__ import annotations

import math


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not (isinstance(value, float) and math.isnan(value))


def _check_meta(parameter: object, minimum: object) -> None:
    """The check's own arguments (a double's author passing them wrong)."""
    from .errors import SimulationConfigError

    if not isinstance(parameter, str):
        raise SimulationConfigError("parameter", parameter, "the name of the checked parameter, a str")
    if not _is_number(minimum):
        raise SimulationConfigError("minimum", minimum, "the least accepted value, a number")


def number(
    parameter: str, value: object, *, minimum: float = 0.0, maximum: float | None = None, strict: bool = False, infinite: bool = False, expected: str | None = None
) -> float:
    """``value`` as a float, at least ``minimum`` (above it if ``strict``),
    at most ``maximum`` if given, finite unless ``infinite`` is allowed."""
    from .errors import SimulationConfigError

    _check_meta(parameter, minimum)
    ok = _is_number(value) and (value > minimum if strict else value >= minimum) and (infinite or math.isfinite(value))  # type: ignore[operator, arg-type]
    if ok and maximum is not None:
        ok = value <= maximum  # type: ignore[operator]
    if not ok:
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        bound += f" and <= {maximum:g}" if maximum is not None else ""
        raise SimulationConfigError(parameter, value, expected or f"a {'' if infinite else 'finite '}number {bound}")
    return float(value)  # type: ignore[arg-type]


def positive(parameter: str, value: object, *, expected: str | None = None, infinite: bool = False) -> float:
    """A finite number > 0 (e.g. a duration that must pass, a rate)."""
    return number(parameter, value, strict=True, infinite=infinite, expected=expected or "a positive finite number")


def non_negative(parameter: str, value: object, *, expected: str | None = None) -> float:
    """A finite number >= 0 (e.g. a latency)."""
    return number(parameter, value, expected=expected or "a finite number >= 0")


def whole(parameter: str, value: object, *, minimum: int = 0, expected: str | None = None) -> int:
    """An int >= ``minimum`` (a count, an index, a seed)."""
    from .errors import SimulationConfigError

    _check_meta(parameter, minimum)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise SimulationConfigError(parameter, value, expected or f"a whole number >= {minimum}")
    return value


def limit(parameter: str, value: object, *, expected: str | None = None) -> float | None:
    """A positive number of seconds, or None (and ``inf``) for no limit."""
    if value is None:
        return None
    seconds = number(parameter, value, strict=True, infinite=True, expected=expected or "a positive number of seconds, or None for no limit")
    return None if math.isinf(seconds) else seconds
