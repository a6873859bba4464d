"""A deviation from stock order in words: what fired before what, how late.

A deviation's trace event keeps the compact detail ``trace.py`` writes
(``deviation_event``: kind, option picked of how many, the stock option and
its label, windows and instants): exact, and what tests and tools parse.
Reports add this sentence under it. The two formats are read here, where
they are known beside the writer (``trace.py``; keep both in step).
"""

from __future__ import annotations

import re
from typing import Final

from ..scheduling.kinds import CONTINUE

#: ``timer 2/3 (fifo 1: worker#2)``, ``batch 1/4 (fifo 0: a#3)``, ``delay 1/5 (fifo 0: ...)``, ``eager 1/2 (...)``.
_PLAIN: Final = re.compile(r"(?P<kind>\w+) (?P<chosen>\d+)/(?P<options>\d+) \(fifo (?P<fifo>\d+): (?P<stock>.*)\)$")
#: ``window 1/2 [980.000-1010.000 ms, nominal 995.000] fired at 1000.000 ms (fifo 0: answer#2 [due])``.
_WINDOW: Final = re.compile(
    r"window (?P<chosen>\d+)/(?P<options>\d+) \[(?P<window>[^\]]*)\] fired at (?P<at>[\d.]+) ms "
    r"\(fifo (?P<fifo>\d+): (?P<stock>.*) \[(?P<stock_window>[^\]]*)\]\)$"
)
#: A window in a report: ``980.000-1010.000 ms, nominal 995.000`` (``due``: point timers).
_RANGE: Final = re.compile(r"(?P<earliest>[\d.]+)-(?P<latest>[\d.]+) ms, nominal (?P<nominal>[\d.]+)")
#: A delay option's label (``delays.py``): ``"worker#2: lands latest, at +15.0 ms of +5.0-+15.0"``.
_LANDING: Final = re.compile(r"(?P<who>.*): lands (?P<name>\w+), at \+(?P<at>[\d.]+) ms of \+(?P<low>[\d.]+)-\+(?P<high>[\d.]+)$")
_NOMINAL: Final = re.compile(r".*: its window, nominal \+(?P<nominal>[\d.]+) ms$")
#: Where each delay option lands, in words (``delays.DELAY_OPTIONS``).
_LANDINGS: Final = {
    "latest": "the latest instant",
    "earliest": "the earliest instant",
    "late": "three quarters of the way",
    "early": "a quarter of the way",
}


def describe_deviation(task: str, detail: str) -> str | None:
    """The sentence for a deviation event (``task``: the label of the option
    picked; ``detail``: the event's detail), None if ``detail`` is not one."""
    window = _WINDOW.match(detail)
    if window is not None:
        return _window_words(task, window)
    plain = _PLAIN.match(detail)
    if plain is None:
        return None
    kind, stock = plain["kind"], plain["stock"]
    if kind == "timer":
        if task == CONTINUE:
            return f"the tasks already ready ran first; {_timer_of(stock)}, due now, fired only after them"
        return f"{_timer_of(task)} fired before {_timer_of(stock)}, both due at this instant (stock order: the earlier-scheduled first)"
    if kind == "batch":
        return f"{task} ran before {stock} in their batch of runnable tasks (stock order: {stock} first)"
    if kind == "delay":
        return _landing_words(task, stock)
    if kind == "eager":
        return "a task made under the eager task factory was deferred to the next loop turn (stock: started at once)"
    return f"option {plain['chosen']} of {plain['options']} ({task}) instead of the stock option {plain['fifo']} ({stock})"


def _timer_of(label: str) -> str:
    return "a timer set outside any task" if label in ("", "-") else f"{label}'s timer"


def _delay_of(label: str) -> str:
    return "a delay set outside any task" if label in ("", "-") else f"{label}'s delay"


def _window_words(task: str, match: re.Match[str]) -> str:
    """A window choice: the option picked fired first, at ``at``."""
    at = float(match["at"])
    stock, stock_window = match["stock"], _RANGE.match(match["stock_window"])
    picked_window = _RANGE.match(match["window"])
    if picked_window is None:  # the point timers due at the deadline went first
        first = f"{_timer_of(task)}, due at {at:.3f} ms, fired first"
    else:
        first = f"{_delay_of(task)} ({_range_words(picked_window)}) ended first, at {at:.3f} ms ({_versus_nominal(at, picked_window)})"
    if stock_window is None:
        return f"{first}, before {_timer_of(stock)}, due then too (stock order: that timer first)"
    nominal = float(stock_window["nominal"])
    lands = "after its nominal instant: late" if at >= nominal else "still before its nominal instant"
    return f"{first}, before {_delay_of(stock)} ({_range_words(stock_window)}), which nominal timing ends first: it lands after {at:.3f} ms, {lands}"


def _range_words(window: re.Match[str]) -> str:
    return f"{float(window['earliest']):.3f}-{float(window['latest']):.3f} ms, nominal {float(window['nominal']):.3f}"


def _versus_nominal(at: float, window: re.Match[str]) -> str:
    gap = at - float(window["nominal"])
    if abs(gap) < 0.0005:
        return "at its nominal instant"
    return f"{abs(gap):.3f} ms {'late' if gap > 0 else 'early'}"


def _fine_words(name: str, landing: re.Match[str]) -> str:
    """A fine landing (delays.py): how far through its window, in percent."""
    low, high = float(landing["low"]), float(landing["high"])
    share = (float(landing["at"]) - low) / (high - low) if high > low else 0.0
    return f"{share:.1%} of the way through its window" if name.startswith("fine") else f"at {name} of its window"


def _landing_words(task: str, stock: str) -> str:
    """A delay choice: where a windowed timer firing alone landed."""
    landing, nominal = _LANDING.match(task), _NOMINAL.match(stock)
    if landing is None or nominal is None:
        return f"{task} (stock: {stock})"
    gap = float(landing["at"]) - float(nominal["nominal"])
    how = "late" if gap > 0 else "early"
    name = landing["name"]
    where = f"at {_LANDINGS[name]} of its window" if name in _LANDINGS else _fine_words(name, landing)
    return (
        f"{_delay_of(landing['who'])} landed {where}: "
        f"{landing['at']} ms from this instant (window {landing['low']}-{landing['high']}, nominal {nominal['nominal']}), {abs(gap):.1f} ms {how}"
    )
