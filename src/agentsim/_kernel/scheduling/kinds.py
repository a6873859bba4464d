"""The kinds of choice a backend asks about, and the stock option of each
(a leaf module: the policy, its chooser and the options all read it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

ChoiceKind = Literal["timer", "batch", "window", "eager", "delay"]

#: Label of option 0 at a ``"timer"`` choice: keep running the ready queue.
CONTINUE: Final = "<ready>"


def fifo_choice(kind: str, labels: Sequence[str]) -> int:
    """The option FIFO order takes: fire the first due timer; run a batch in
    order; fire the window option of nominal timing (option 0)."""
    if kind == "timer" and len(labels) > 1 and labels[0] == CONTINUE:
        return 1
    return 0
