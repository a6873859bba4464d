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
   late but not the latest, or early but not the earliest).

Few options keep a schedule short and a shrunk schedule readable ("the reply
landed at the latest of its window"); the bounds are where timeout races
live (a deadline inside the window is missed at its latest instant if at all)
and the quarters catch the ones that need two delays to add up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ..clock import TICKS_PER_SECOND

if TYPE_CHECKING:
    from .chooser import Chooser
    from .windows import Option

#: The options' names, in option order (option 0: the window, the stock one).
DELAY_OPTIONS: Final = ("window", "latest", "earliest", "late", "early")


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
        return len(DELAY_OPTIONS)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        name = DELAY_OPTIONS[index]
        if index == 0:
            return f"{self.creator or '-'}: its window, nominal {self._ms(self.middle)} ms"
        return f"{self.creator or '-'}: lands {name}, at {self._ms(self.instant(index))} ms of {self._ms(self.low)}-{self._ms(self.high)}"

    def instant(self, index: int) -> int:
        """The tick option ``index`` pins the timer to (option 0: none, its nominal)."""
        low, high = self.low, self.high
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
