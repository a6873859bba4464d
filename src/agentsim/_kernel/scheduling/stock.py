"""The stock order: FIFO (nominal timing) and jitter (sampled timing).

Neither is ever asked: a policy whose ``fifo`` is True lets the backends run
their own stock order, so these need no chooser of their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from .policy import ChoiceKind, SchedulingPolicy


class FifoPolicy(SchedulingPolicy):
    """Stock order and nominal timing: the ready queue in FIFO order,
    same-instant timers in the order they were scheduled, trio batches in
    task-creation order, every delay at its nominal value (no jitter, windows
    fire at their nominal instant). The seed is unused."""

    name = "fifo"
    fifo = True
    jitter_scale = 0.0

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        return 0


class JitterPolicy(SchedulingPolicy):
    """Stock order with seeded delay jitter: each delay known as a range is a
    point drawn from its distribution with the seed. This is sampling timing
    instead of exploring it (a narrow overlap of two windows is hit about as
    often as the draws land in it); it is the baseline the windowed
    strategies are measured against, and what ``"fifo"`` did before windows."""

    name = "jitter"
    fifo = True
    windows = False

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        return 0


