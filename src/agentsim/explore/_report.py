"""What an exploration found: failures with their minimal schedules, nondeterminism."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._kernel.errors import AgentsimWarning
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

    def timeline(self, window: int = 24) -> str:
        """The minimal run up to where it failed, in virtual ms; '>>' marks deviations.

        Task steps and timer firings are left out and runs of alike events
        (audio chunks) are folded into one line, so the window shows what
        happened: choices, sends, emits, cancellations, exits.
        """
        events = self.trace.events
        failed_at = next((i for i, e in enumerate(events) if e.kind == "exit" and e.detail.startswith("raised")), len(events) - 1)
        lines: list[str] = []
        previous_key = None
        repeats = 0
        for event in events[: failed_at + 1]:
            if event.kind in ("step", "timer"):  # the choice lines say which timer fired when it mattered
                continue
            key = (event.kind, event.task, event.detail.split(" ", 1)[0])
            if key == previous_key and event.kind in ("emit", "send"):
                repeats += 1
                lines[-1] = f"{lines[-1].split('  (x')[0]}  (x{repeats + 1}, until {event.ticks / 1_000_000:.3f} ms)"
                continue
            previous_key, repeats = key, 0
            marker = ">>" if event.kind == "choice" and "(fifo" in event.detail else "  "
            lines.append(f"{marker} {event.format()}")
        return "\n".join(lines[-window:])


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


class SingleScheduleWarning(AgentsimWarning):
    """Every run of a sweep took the same schedule: the program left no choice
    open (no simultaneous timers, no overlapping windows) and drew no delay,
    so more runs explore nothing; one run is enough. Give doubles delay
    distributions (``agentsim.timing``) to explore timing."""

    @classmethod
    def after(cls, runs: int) -> SingleScheduleWarning:
        """The warning for a sweep of ``runs`` runs."""
        return cls(
            f"all {runs} runs took one schedule: no open choice and no delay jitter, so one run is enough "
            f"(give the doubles' delays as ranges, e.g. agentsim.timing.uniform, to explore their timing)"
        )


@dataclass
class ExploreReport:
    """The result of :func:`agentsim.explore`.

    ``runs_executed`` counts the explored runs (not shrinking or determinism
    re-runs); ``choice_points`` the open choices each run decided;
    ``distinct_schedules`` how many different orders of events they produced
    and ``distinct_timings`` how many different timed traces (an order under
    other delays counts once there for each timing); ``windowed_timers`` and
    ``jitter_draws`` the delays set as windows and drawn as points, over all
    runs; ``failures`` the failing runs; ``nondeterminism`` schedules that did
    not repeat.
    """

    runs_executed: int = 0
    distinct_schedules: int = 0
    failures: list[Failure] = field(default_factory=list)
    nondeterminism: list[Nondeterminism] = field(default_factory=list)
    replayed_from_database: int = 0
    distinct_timings: int = 0
    choice_points: list[int] = field(default_factory=list)
    windowed_timers: int = 0
    jitter_draws: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures and not self.nondeterminism

    @property
    def single_schedule(self) -> bool:
        """True if the sweep had nothing to explore: no run made a choice,
        set a windowed timer or drew a delay (see :class:`SingleScheduleWarning`)."""
        return not any(self.choice_points) and not self.windowed_timers and not self.jitter_draws

    def format(self) -> str:
        points = self.choice_points
        spread = f", {min(points)}-{max(points)} choice point(s) per run" if points else ""
        lines = [
            f"{self.runs_executed} run(s), {self.distinct_schedules} distinct order(s), "
            f"{self.distinct_timings} distinct timing(s){spread}, {len(self.failures)} failure(s)"
        ]
        if self.runs_executed > 1 and self.single_schedule:
            lines.append(f"health: {SingleScheduleWarning.after(self.runs_executed)}")
        lines += [failure.format() for failure in self.failures]
        lines += [case.format() for case in self.nondeterminism]
        return "\n\n".join(lines)
