"""Where in its window a timer lands: the options of a ``"delay"`` choice.

A timer with a window (``agentsim.timing``: a delay known as a range) fires,
under the window search alone, at its nominal instant unless an order choice
moves it before or after another timer's. When time must move and it is the
only candidate (no other window overlaps it, no plain timer is due within
it), there is no order to choose, and it fires at its nominal instant. A
delay that must land *late* to fail the program — a reply slower than a
deadline the app armed after the request started — is then never tried. So
a policy that times delays (``times_delays``) is asked, exactly there, where
it lands. The options are few, fixed and replayable:

0. its nominal instant (as without the choice);
1. its latest instant (how a deadline is missed);
2. its earliest instant (how one is beaten);
3. three quarters of the way, 4. one quarter of the way (a race that needs
   late but not the latest, or early but not the earliest);
5 onward: *fine landings*, ``FINE_LANDINGS`` points evenly spread over the
   window (option ``5 + k`` lands at ``(k + 0.5) / FINE_LANDINGS`` of it).

The five named options keep a shrunk schedule readable ("the reply landed
at the latest of its window"): the bounds are where timeout races live (a
deadline inside the window is missed at its latest instant if at all). They
alone are *enumerated* — a choice is recorded with ``NAMED_LANDINGS``
options, so exhaustive search and the shrinker's neighbourhood try those
five. The fine landings are there to be *drawn* (``timed`` draws them,
random_policy.py): on five fixed points every landing, and every sum of
landings, falls on a grid, and a race whose band lies between two points
(a verdict that must land in a 45 ms band of a 1 s window; a turn late in a
call whose 150 pauses must add up to within a second of a limit) is never
reached. A replayed schedule addresses them by index like any option.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ..clock import TICKS_PER_SECOND

if TYPE_CHECKING:
    from .chooser import Chooser
    from .windows import Option

#: The named options, in option order (option 0: the window, the stock one).
DELAY_OPTIONS: Final = ("window", "latest", "earliest", "late", "early")
#: How many options a delay choice is recorded with: the named ones, which
#: enumeration (exhaustive search, the shrinker's neighbourhood) tries.
NAMED_LANDINGS: Final = len(DELAY_OPTIONS)
#: Fine landings after the named ones: evenly spread, drawn, not enumerated.
FINE_LANDINGS: Final = 200


def fine_landing(fraction: float) -> int:
    """The fine landing option nearest ``fraction`` (0 to 1) of the window."""
    return NAMED_LANDINGS + min(FINE_LANDINGS - 1, max(0, int(fraction * FINE_LANDINGS)))


class DelayOptions(Sequence[str]):
    """The options of a ``"delay"`` choice for a window ``[low, high]``
    (ticks, nominal ``middle``) set by ``creator``: labels in words, and the
    instant each option pins (:meth:`instant`)."""

    __slots__ = ("creator", "low", "middle", "high", "now")

    def __init__(self, creator: str, now: int, low: int, middle: int, high: int) -> None:
        self.creator = creator
        self.now = now
        self.low, self.middle, self.high = low, middle, high

    def __len__(self) -> int:
        return NAMED_LANDINGS + FINE_LANDINGS

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if not 0 <= index < NAMED_LANDINGS + FINE_LANDINGS:
            raise IndexError(index)
        if index == 0:
            return f"{self.creator or '-'}: its window, nominal {self._ms(self.middle)} ms"
        name = DELAY_OPTIONS[index] if index < NAMED_LANDINGS else f"fine{index - NAMED_LANDINGS}"
        return f"{self.creator or '-'}: lands {name}, at {self._ms(self.instant(index))} ms of {self._ms(self.low)}-{self._ms(self.high)}"

    def instant(self, index: int) -> int:
        """The tick option ``index`` pins the timer to (option 0: none, its nominal)."""
        low, high = self.low, self.high
        if index >= NAMED_LANDINGS:
            return low + (high - low) * (2 * (index - NAMED_LANDINGS) + 1) // (2 * FINE_LANDINGS)
        if index == 1:
            return high
        if index == 2:
            return low
        if index == 3:
            return low + (high - low) * 3 // 4
        if index == 4:
            return low + (high - low) // 4
        return self.middle

    def _ms(self, ticks: int) -> str:
        return f"+{(ticks - self.now) * 1000 / TICKS_PER_SECOND:.1f}"


def landed(chooser: Chooser, option: Option, now: int) -> Option:
    """A lone windowed timer's option, at the instant the ``"delay"`` choice
    picks (option 0: unchanged). Its window starts no earlier than now."""
    timer = option.timer
    assert timer is not None
    low = max(now, timer.earliest)
    options = DelayOptions(timer.label, now, low, option.at, max(low, timer.latest))
    chosen = chooser.delay(options)
    return option._replace(at=options.instant(chosen)) if chosen else option
