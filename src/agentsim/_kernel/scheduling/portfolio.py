"""The default strategy: a portfolio of the others, one per run.

No single strategy wins on every class of race (docs/explore.md measures
them): the window search (``random``) finds narrow overlaps in a few runs
where sampling needs hundreds; sampling (``jitter``) finds wide overlaps
faster; PCT finds bugs that need a few ordering constraints among many
tasks; only timed delays (``timed``: random's order search, plus where a
lone delay lands) find a reply that must land late. So each run of a sweep
takes one of them, by its seed, in a fixed rotation (as Coyote's portfolio
mode takes its strategies in turn): a sweep explores every class without the
user knowing which to pick, and a run replays from its seed alone.

A rotation rather than a draw per seed: every ten consecutive seeds give
each member its share, so a race that one member finds in two or three runs
is found by the portfolio in about twice that, never after a streak of the
other members (drawn shares made those streaks the median's tail:
benchmarks/explore.py --classes-only).
"""

from __future__ import annotations

import random
from typing import Final

from .pct import PCTPolicy
from .policy import SchedulingPolicy
from .random_policy import TimedPolicy
from .stock import JitterPolicy

#: The members. (``timed`` searches orders as ``random`` does, and lone
#: delays' landings besides, so ``random`` needs no turn of its own.)
MEMBERS: Final = ("timed", "pct", "jitter")
#: The member of each seed, by ``seed % 10``: timed 5, pct 4, jitter 1 in ten.
#: A sweep from seed 0 (run 0 is the stock schedule) takes pct first, then
#: timed, so both kinds of order search start at once.
ROTATION: Final = ("timed", "pct", "timed", "pct", "timed", "jitter", "pct", "timed", "timed", "pct")


def member_for(seed: int) -> str:
    """The strategy run ``seed`` of a portfolio sweep takes."""
    return ROTATION[seed % len(ROTATION)]


def portfolio_policy(seed: int, *, depth: int = 3, steps: int | None = None) -> SchedulingPolicy:
    """Run ``seed``'s policy. Named ``portfolio:MEMBER`` in results, so a
    report says which one failed. Its PCT member's step bound is drawn per
    run from 8, 32 and 128 unless given (``portfolio/D/S``): measuring it
    would run the program once more in every shard and worker, which the
    default strategy must not."""
    member = member_for(seed)
    if steps is None:
        steps = random.Random(f"agentsim:portfolio:steps:{seed}").choice((8, 32, 128))
    policy: SchedulingPolicy
    if member == "timed":
        policy = TimedPolicy(seed)
    elif member == "pct":
        policy = PCTPolicy(seed, depth=depth, steps=steps)
    else:
        policy = JitterPolicy()
    policy.name = f"portfolio:{member}"  # type: ignore[misc]
    return policy
