"""A focused sweep: base runs, checkpoints, and branches from them.

Each base run (the stock schedule; with ``Focus.bases > 1`` also runs
whose prefix drifts) is a run of the sweep like any other. For a focus on
moments it runs whole first, here (where the moments fell is known only
then); for a window it is the holder's own run. Then the branches: each
explored run keeps the base's prefix and deviates only inside one window,
under its own member of the strategy. With ``os.fork()`` (``_forking.py``)
the prefix runs once and every branch starts from its state; without it
every branch re-simulates its prefix. Both give the same schedules in the
same order, so the same report.

Each branch's schedule is a replay schedule of the base seed (its
deviations, all inside its window, plus the base's own): it replays from
scratch, in any process, and the failure database and the shrinker take it
as any other.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from dataclasses import dataclass
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .._kernel.errors import SimulationConfigError
from .._kernel.scheduling import SchedulingPolicy
from .._kernel.scheduling.focus import FocusedPolicy, drift_policy, focus_member
from .._kernel.simulation import SimulationResult
from ._focus import Focus, seconds_to_ticks
from ._forking import Branch, BranchingUnavailable, Checkpoint, HolderProcess, cpu_seconds, fork_available
from ._parallel import RunOutcome, outcome_of
from ._report import Branching
from ._runner import Runner
from ._schedule import Schedule
from ._shrink import OriginKey, result_origin
from ._sources import Candidate


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
        if runner.backend != "asyncio":
            # Trio's I/O manager (an epoll set) would be shared with the
            # children, and a child's teardown changes it under the holder.
            self.forks = self.branching.forked = False
        bases = min(self.focus.bases, len(seeds))
        shares = _split(len(seeds) - bases, bases)
        next_run = bases
        for index in range(bases):
            base = _Base(self, runner, seeds[0], index, None if index == 0 else drift_policy(seeds[index]))
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
        ticks = _window_ticks(windows)
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
        holder = HolderProcess(self.runner, self.seed, self.drift, [branch_start for branch_start, _ in _window_ticks(windows)], branches, self._report)
        holder.start()
        done = 0
        try:
            for index in range(len(windows)):
                checkpoint = self._next_checkpoint(holder)
                if checkpoint is None:
                    break  # the base run ended before this checkpoint: the rest re-simulate below
                mine = [branch for branch in branches if branch.checkpoint == index]
                shrink_run = self._shrink_run(holder, checkpoint)
                asked = 0
                for position, branch in enumerate(mine):
                    while asked < len(mine) and asked < position + self.sweep.at_once:
                        holder.branch(mine[asked].key)
                        asked += 1
                    got = holder.result(branch.key)
                    done += 1
                    if got is None:  # its process was lost: run it here
                        yield self._resimulated(windows, branch)
                        continue
                    (outcome, _), cpu = got
                    self.sweep.spent(cpu, whole_run=checkpoint.cpu + cpu, branch=True)
                    yield self._candidate(outcome, self._replayed(outcome), branch, windows, shrink_run)
            if with_base_run and done == len(branches):
                (outcome, _), cpu = holder.finish()
                self.sweep.spent(cpu - self._prefix_cpu, base=True)
                yield self._base_candidate(outcome, self._replayed(outcome))
                return
        except BranchingUnavailable as error:
            # The holder died (or failed): what is left re-simulates, with the same schedules.
            self.sweep.branching.fallback = str(error).splitlines()[0]
        finally:
            holder.close()
        for branch in branches[done:]:  # (already in checkpoint order)
            yield self._resimulated(windows, branch)
        if with_base_run:
            yield self.whole_run()

    def _next_checkpoint(self, holder: HolderProcess) -> Checkpoint | None:
        checkpoint = holder.next_checkpoint()
        if checkpoint is not None:
            self.sweep.spent(checkpoint.cpu - self._prefix_cpu)
            self._prefix_cpu = checkpoint.cpu
        return checkpoint

    def _report(self, result: SimulationResult[Any], policy: FocusedPolicy) -> tuple[RunOutcome, OriginKey | None]:
        """What a branch's process sends back (computed there)."""
        return _outcome(self.seed, result), result_origin(result)

    def _shrink_run(self, holder: HolderProcess, checkpoint: Checkpoint) -> Callable[[Schedule], Any]:
        """The shrinker's runs of a failure found at ``checkpoint``: from the
        parked holder when the schedule keeps the prefix (every deviation
        after the checkpoint's choices, nothing else changed), else here."""
        start = seconds_to_ticks(checkpoint.seconds)
        counter = itertools.count()

        def run(schedule: Schedule) -> Any:
            deviations = schedule.deviations or {}
            same_prefix = schedule.seed == self.seed and schedule.windows and schedule.delays and schedule.jitter == 1.0 and self.drift is None
            if holder.checkpoint is not checkpoint or not same_prefix or min(deviations, default=checkpoint.choices) < checkpoint.choices:
                return self.runner.run(schedule)
            key = ("replay", next(counter))
            try:
                holder.replay(key, start, deviations)
                got = holder.result(key)
            except (BranchingUnavailable, OSError):
                got = None  # the holder is gone: from scratch, here
            if got is None:
                return self.runner.run(schedule)
            _, origin = got[0]
            return BranchedRun(BranchedFailure(origin) if origin is not None else None, origin)

        return run

    def _replayed(self, outcome: RunOutcome) -> SimulationResult[Any] | None:
        """A failure of another process, replayed from scratch here (None for a pass)."""
        return self.runner.run(outcome.ran) if outcome.failed else None

    def _candidate(
        self, outcome: RunOutcome, result: SimulationResult[Any] | None, branch: Branch, windows: list[tuple[float, float]], shrink_run: Callable[[Schedule], Any] | None = None
    ) -> Candidate:
        start, end = windows[branch.checkpoint]
        label = f"{branch.inner.name}, run {branch.key} branched at {start:g} s (window {start:g}-{end:g} s)"
        return Candidate(outcome.schedule, outcome.ran, result, outcome=outcome, label=label, shrink_run=shrink_run)


@dataclass(frozen=True)
class BranchedRun:
    """A run the shrinker asked of a parked checkpoint: what it reads of it."""

    exception: BaseException | None
    origin_key: OriginKey | None


class BranchedFailure(Exception):
    """Stands for the exception of a run made in a branch's process (its
    origin is what the shrinker compares; the result it keeps is run again,
    whole, here)."""

    def __init__(self, origin: OriginKey) -> None:
        self.origin = origin
        super().__init__(f"{origin[0]}.{origin[1]} at {origin[2]}")


def _window_ticks(windows: list[tuple[float, float]]) -> list[tuple[int, int]]:
    return [(seconds_to_ticks(start), seconds_to_ticks(end)) for start, end in windows]


def _split(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` shares as even as can be, the first ones larger."""
    return [total // parts + (1 if index < total % parts else 0) for index in range(parts)]
