"""What an exploration found: failures with their minimal schedules, nondeterminism."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._kernel.trace import Trace, TraceEvent
from ._schedule import Schedule


def leaf_exception(error: BaseException) -> BaseException:
    """The first leaf of nested exception groups (what actually went wrong)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


@dataclass(frozen=True)
class MinimalSchedule:
    """The shrunk form of a failure: as few deviations from FIFO order, and as
    little delay jitter, as still fail the same way."""

    schedule: Schedule
    exception: BaseException
    trace: Trace
    shrink_runs: int

    @property
    def deviations(self) -> dict[int, int]:
        return dict(self.schedule.deviations or {})

    def timeline(self, last: int = 30) -> str:
        """The end of the minimal run in virtual milliseconds, deviations marked."""
        lines = []
        for event in self.trace.events[-last:]:
            marker = ">>" if event.kind == "choice" and "(fifo" in event.detail else "  "
            lines.append(f"{marker} {event.format()}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Failure:
    """A failing run: its ``seed`` and ``strategy``, the ``exception``, the
    ``trace``, the ``repro`` line that replays it, and the ``minimal``
    schedule the shrinker found (None if shrinking was off)."""

    seed: int
    strategy: str
    exception: BaseException
    trace: Trace
    repro: str
    schedule: Schedule
    minimal: MinimalSchedule | None = None
    from_database: bool = False

    @property
    def error(self) -> BaseException:
        """The leaf exception (inside any exception groups)."""
        return leaf_exception(self.exception)

    def format(self) -> str:
        error = self.error
        lines = [f"seed {self.seed} (strategy {self.strategy!r}) failed: {type(error).__name__}: {error}"]
        if self.minimal is not None:
            minimal = self.minimal
            jitter = "no delay jitter" if minimal.schedule.jitter == 0 else f"delay jitter x{minimal.schedule.jitter:g}"
            lines.append(
                f"minimal schedule: {len(minimal.deviations)} deviation(s) from FIFO order, {jitter} "
                f"(found in {minimal.shrink_runs} shrink runs); '>>' marks the deviations:"
            )
            lines.append(minimal.timeline())
        lines.append(f"replay: {self.repro}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Nondeterminism:
    """Two runs of one schedule that differed: the first differing event."""

    seed: int
    strategy: str
    index: int
    first: TraceEvent | None
    second: TraceEvent | None

    def format(self) -> str:
        def show(event: TraceEvent | None) -> str:
            return event.format() if event is not None else "(end of trace)"

        return (
            f"seed {self.seed} ({self.strategy}) is not deterministic: event #{self.index} differs\n"
            f"  first run:  {show(self.first)}\n  second run: {show(self.second)}"
        )


@dataclass
class ExploreReport:
    """The result of :func:`agentsim.explore`.

    ``runs_executed`` counts the explored runs (not shrinking or determinism
    re-runs); ``distinct_schedules`` how many different trace digests they
    produced; ``failures`` the failing runs; ``nondeterminism`` schedules that
    did not repeat.
    """

    runs_executed: int = 0
    distinct_schedules: int = 0
    failures: list[Failure] = field(default_factory=list)
    nondeterminism: list[Nondeterminism] = field(default_factory=list)
    replayed_from_database: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures and not self.nondeterminism

    def format(self) -> str:
        lines = [f"{self.runs_executed} run(s), {self.distinct_schedules} distinct schedule(s), {len(self.failures)} failure(s)"]
        lines += [failure.format() for failure in self.failures]
        lines += [case.format() for case in self.nondeterminism]
        return "\n\n".join(lines)
