"""A focused sweep: base runs, checkpoints, and branches from them.

For each base run (the stock schedule; with ``Focus.bases > 1`` also runs
whose prefix drifts) the sweep first runs it whole, once: it is a run of the
sweep like any other, it says where the focus's moments fell, and its CPU
time is what a whole-run sweep pays per run. Then the branches: each
explored run keeps the base's prefix and deviates only inside one window,
under its own member of the strategy. With ``os.fork()`` (``_forking.py``)
the prefix runs once more and every branch starts from its state; without
it every branch re-simulates its prefix. Both give the same schedules in the
same order, so the same report.

Each branch's schedule is a replay schedule of the base seed (its
deviations, all inside its window, plus the base's own): it replays from
scratch, in any process, and the failure database and the shrinker take it
as any other.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from typing import Any

from .._kernel.errors import SimulationConfigError
from .._kernel.scheduling import PCTPolicy, SchedulingPolicy, TimedPolicy, make_policy, member_for, portfolio_policy
from .._kernel.scheduling.focus import FocusedPolicy
from .._kernel.simulation import SimulationResult
from ._focus import Focus, seconds_to_ticks
from ._forking import Branch, cpu_seconds, fork_available, forked_branches
from ._parallel import RunOutcome, outcome_of
from ._report import Branching
from ._runner import Runner
from ._schedule import Schedule
from ._sources import Candidate

#: PCT's step bound inside a window, drawn per run (as the portfolio draws it).
_PCT_STEPS = (8, 32, 128)


def focus_member(strategy: str | SchedulingPolicy, seed: int, pct_depth: int) -> SchedulingPolicy:
    """The inner strategy of branch ``seed``. The portfolio takes its members
    in its rotation, ``jitter``'s turns going to ``timed`` (a focused run
    explores windows: a drawn point could not be kept inside one)."""
    if isinstance(strategy, SchedulingPolicy):
        return strategy.for_seed(seed)
    steps = _PCT_STEPS[seed % len(_PCT_STEPS)]
    if strategy.startswith("portfolio"):
        if member_for(seed) == "jitter":
            policy: SchedulingPolicy = TimedPolicy(seed)
            policy.name = "portfolio:timed"  # type: ignore[misc]
            return policy
        return portfolio_policy(seed, depth=pct_depth) if strategy == "portfolio" else make_policy(strategy, seed)
    if strategy == "pct":
        policy = PCTPolicy(seed, depth=pct_depth, steps=steps)
        policy.name = f"pct/{pct_depth}/{steps}"  # type: ignore[misc]
        return policy
    return make_policy(strategy, seed)


def check_focus_strategy(strategy: object) -> None:
    """A focused sweep explores windows inside its focus: fifo, jitter and exhaustive cannot."""
    if strategy in ("fifo", "jitter", "exhaustive") or (isinstance(strategy, SchedulingPolicy) and (strategy.fifo or not strategy.windows)):
        raise SimulationConfigError(
            "strategy", strategy, "with focus=, a strategy that explores windows: 'portfolio' (the default), 'random', 'timed', 'pct' or a policy of your own"
        )


def branch_schedule(seed: int, result: SimulationResult[Any]) -> Schedule:
    """The replay schedule of a focused run (``"SEED:timed+..."``)."""
    return Schedule(seed, "replay", dict(result.trace.deviations), 1.0, windows=True, delays=True)


def _outcome(seed: int, result: SimulationResult[Any]) -> RunOutcome:
    schedule = branch_schedule(seed, result)
    return outcome_of(result, schedule, schedule)


class FocusedSweep:
    """The focused sweep over ``seeds`` (``seeds[0]``: the base seed).

    Per base run: with ``moments``, the base runs whole first (where the
    moments fell is known only then) and is yielded first; with a window
    alone, the base's own run is the prefix's holder, and it is yielded
    after its branches (in both ways of branching, so that the report is the
    same). Branches are taken checkpoint by checkpoint, in run order.
    """

    def __init__(self, focus: Focus, strategy: str | SchedulingPolicy, seeds: Sequence[int], *, pct_depth: int, at_once: int | None = None) -> None:
        check_focus_strategy(strategy)
        self.focus, self.strategy, self.seeds, self.pct_depth = focus, strategy, seeds, pct_depth
        self.at_once = at_once or os.cpu_count() or 1
        self.forks = focus.fork and fork_available()
        self.branching = Branching(focus.describe(), forked=self.forks)
        #: CPU seconds of whole runs (measured, or a prefix plus a branch's rest).
        self._whole_runs: list[float] = []
        self._spent = 0.0
        #: Base runs counted into the report so far.
        self.base_runs = 0

    def candidates(self, runner: Runner) -> Iterator[Candidate]:
        seeds = self.seeds
        if not seeds:
            return
        bases = min(self.focus.bases, len(seeds))
        shares = _split(len(seeds) - bases, bases)
        next_run = bases
        for index in range(bases):
            base = _Base(self, runner, seeds[0], index, None if index == 0 else TimedPolicy(seeds[index]))
            run_seeds = seeds[next_run : next_run + shares[index]]
            next_run += shares[index]
            if self.focus.moments:
                yield base.whole_run(records_moments=True)
                windows = self.focus.windows(base.moment_instants, limit=max(1, len(run_seeds)))
            else:
                assert self.focus.window is not None
                windows = [self.focus.window]
            self.branching.checkpoints += [start for start, _ in windows]
            yield from base.branches(windows, self._branches(windows, run_seeds), with_base_run=not self.focus.moments)

    def _branches(self, windows: list[tuple[float, float]], run_seeds: Sequence[int]) -> list[Branch]:
        """Run seed j of this base goes to window j mod K; taken window by window."""
        ticks = [(seconds_to_ticks(start), seconds_to_ticks(end)) for start, end in windows]
        branches = [
            Branch(run_seed, position % len(windows), ticks[position % len(windows)], focus_member(self.strategy, run_seed, self.pct_depth))
            for position, run_seed in enumerate(run_seeds)
        ]
        return sorted(branches, key=lambda branch: branch.checkpoint)

    def spent(self, cpu: float, *, whole_run: float | None = None, branch: bool = False, base: bool = False) -> None:
        """Count ``cpu`` seconds spent, a branch or a base run made, and
        (if known) what a whole run of this program costs."""
        self._spent += cpu
        if whole_run is not None:
            self._whole_runs.append(whole_run)
        self.branching.branches += branch
        self.base_runs += base
        self.branching.cpu_seconds = self._spent
        if self._whole_runs:
            runs = self.branching.branches + self.base_runs
            self.branching.whole_run_cpu_seconds = runs * sum(self._whole_runs) / len(self._whole_runs)


class _Base:
    """One base run of a focused sweep and its branches."""

    def __init__(self, sweep: FocusedSweep, runner: Runner, seed: int, index: int, drift: SchedulingPolicy | None) -> None:
        self.sweep, self.runner, self.seed, self.index, self.drift = sweep, runner, seed, index, drift
        self.moment_instants: dict[str, tuple[float, ...]] = {}
        #: The holder's prefix CPU at the last checkpoint it reported.
        self._prefix_cpu = 0.0

    def whole_run(self, *, records_moments: bool = False) -> Candidate:
        """The base schedule, run whole here."""
        policy = FocusedPolicy(None, base=self.drift)
        policy.records_moments = records_moments
        started = cpu_seconds()
        result = self.runner.run_policy(self.seed, policy)
        cpu = cpu_seconds() - started
        self.moment_instants = result.moment_instants
        self.sweep.spent(cpu, whole_run=cpu, base=True)
        return self._base_candidate(_outcome(self.seed, result), result)

    def _base_candidate(self, outcome: RunOutcome, result: SimulationResult[Any] | None) -> Candidate:
        ran = outcome.ran
        named = Schedule(self.seed, "fifo") if self.index == 0 else ran
        label = "" if self.index == 0 else f"focus base {self.index} (a timed prefix, seed {self.sweep.seeds[self.index]})"
        return Candidate(named, ran, result, outcome=dataclasses.replace(outcome, schedule=named, seed=named.seed), label=label)

    def branches(self, windows: list[tuple[float, float]], branches: list[Branch], *, with_base_run: bool) -> Iterator[Candidate]:
        """Every branch, checkpoint by checkpoint; then the base run if asked."""
        if self.sweep.forks and branches:
            yield from self._forked(windows, branches, with_base_run=with_base_run)
            return
        for branch in branches:
            yield self._resimulated(windows, branch)
        if with_base_run:
            yield self.whole_run()

    def _resimulated(self, windows: list[tuple[float, float]], branch: Branch) -> Candidate:
        started = cpu_seconds()
        result = self.runner.run_policy(self.seed, FocusedPolicy(branch.inner, branch.window, base=self.drift))
        cpu = cpu_seconds() - started
        self.sweep.spent(cpu, whole_run=cpu, branch=True)
        return self._candidate(_outcome(self.seed, result), result, branch, windows)

    def _forked(self, windows: list[tuple[float, float]], branches: list[Branch], *, with_base_run: bool) -> Iterator[Candidate]:
        checkpoints = sorted({seconds_to_ticks(start) for start, _ in windows})
        order = [branch.key for branch in branches]
        by_key = {branch.key: branch for branch in branches}
        arrived: dict[int, tuple[RunOutcome, float] | None] = {}
        position = 0
        base_outcome: RunOutcome | None = None
        messages = forked_branches(
            self.runner, self.seed, self.drift, checkpoints, branches, at_once=self.sweep.at_once, outcome=lambda result, policy: _outcome(self.seed, result)
        )
        try:
            for message in messages:
                kind = message[0]
                if kind == "branch":
                    arrived[message[1]] = (message[2], message[3])
                elif kind == "lost":
                    arrived[message[1]] = None
                elif kind == "checkpoint":
                    self.sweep.spent(message[3] - self._prefix_cpu)
                    self._prefix_cpu = message[3]
                elif kind == "done":
                    self.sweep.spent(message[1] - self._prefix_cpu)
                    base_outcome = message[3]
                elif kind == "error":
                    raise RuntimeError(f"the branching process failed:\n{message[1]}")
                while position < len(order) and order[position] in arrived:
                    key = order[position]
                    position += 1
                    got = arrived.pop(key)
                    if got is None:  # lost (its process died, or nothing was left to choose): run it here
                        yield self._resimulated(windows, by_key[key])
                        continue
                    outcome, cpu = got
                    self.sweep.spent(cpu, whole_run=self._prefix_cpu + cpu, branch=True)
                    yield self._candidate(outcome, self._replayed(outcome), by_key[key], windows)
        finally:
            messages.close()
        for key in order[position:]:  # the holder ended early (its base run stopped before a checkpoint)
            yield self._resimulated(windows, by_key[key])
        if with_base_run:
            if base_outcome is None:
                yield self.whole_run()
            else:
                self.sweep.spent(0.0, base=True)
                yield self._base_candidate(base_outcome, self._replayed(base_outcome))

    def _replayed(self, outcome: RunOutcome) -> SimulationResult[Any] | None:
        """A failure of another process, replayed from scratch here (None for a pass)."""
        return self.runner.run(outcome.ran) if outcome.failed else None

    def _candidate(self, outcome: RunOutcome, result: SimulationResult[Any] | None, branch: Branch, windows: list[tuple[float, float]]) -> Candidate:
        start, end = windows[branch.checkpoint]
        label = f"{branch.inner.name}, run {branch.key} branched at {start:g} s (window {start:g}-{end:g} s)"
        return Candidate(outcome.schedule, outcome.ran, result, outcome=outcome, label=label)


def _split(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` shares as even as can be, the first ones larger."""
    return [total // parts + (1 if index < total % parts else 0) for index in range(parts)]
