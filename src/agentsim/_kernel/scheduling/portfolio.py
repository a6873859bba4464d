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
each member its share, never a streak of the others. And each run makes
its member's own choices of the same sweep: seeds 1-10 make those of pct's
seeds 1, 2, 3 and timed's 1 to 6, interleaved (so with every block of ten:
a sweep from any multiple of ten; jitter draws with the run's own seed). So whatever timed finds by its run r, the
portfolio finds by its ``TIMED_RUNS[r]`` (r up to 6), and likewise for pct:
the default is the members' own sweeps, interleaved, not a fresh draw that
may miss what a member's sweep would have hit (benchmarks/explore.py
--classes-only measures it).
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
#: The member of each seed in a block of ten (seeds 1-10, 11-20, …): timed
#: 6, pct 3, jitter 1. A sweep from seed 0 (run 0 is the stock schedule)
#: takes pct first, then timed twice, so both kinds of order search start at once.
ROTATION: Final = ("pct", "timed", "timed", "pct", "timed", "jitter", "timed", "pct", "timed", "timed")


def member_for(seed: int) -> str:
    """The strategy run ``seed`` of a portfolio sweep takes."""
    return ROTATION[(seed - 1) % len(ROTATION)]


def member_seed(seed: int) -> int:
    """The seed of the member's own run that portfolio run ``seed`` takes: in
    each block of ten, the member's k-th turn runs the block's k-th seed
    (seed 2, timed's first turn, runs timed's seed 1)."""
    position = (seed - 1) % len(ROTATION)
    return seed - position + ROTATION[:position].count(ROTATION[position])


def portfolio_policy(seed: int, *, depth: int = 3, steps: int | None = None) -> SchedulingPolicy:
    """Run ``seed``'s policy. Named ``portfolio:MEMBER`` in results, so a
    report says which one failed. Its PCT member's step bound is drawn per
    run from 8, 32 and 128 unless given (``portfolio/D/S``): measuring it
    would run the program once more in every shard and worker, which the
    default strategy must not."""
    member = member_for(seed)
    own = member_seed(seed)
    if steps is None:
        steps = random.Random(f"agentsim:portfolio:steps:{seed}").choice((8, 32, 128))
    policy: SchedulingPolicy
    if member == "timed":
        policy = TimedPolicy(own)
    elif member == "pct":
        policy = PCTPolicy(own, depth=depth, steps=steps)
    else:
        policy = JitterPolicy()
    policy.name = f"portfolio:{member}"  # type: ignore[misc]
    return policy
