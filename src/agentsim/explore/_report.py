"""What an exploration found: failures with their minimal schedules, nondeterminism."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._kernel.errors import AgentsimWarning, TaskSnapshot
from .._kernel.frames import format_site, is_agentsim, is_program_code
from .._kernel.tracing.deviation_words import describe_deviation
from .._kernel.tracing.trace import Trace, TraceEvent
from ._schedule import Schedule


def leaf_exception(error: BaseException) -> BaseException:
    """The first leaf of nested exception groups (what actually went wrong)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


@dataclass(frozen=True)
class MinimalSchedule:
    """The shrunk form of a failure: as few deviations from FIFO order, and as
    little delay jitter, as still fail the same way.

    ``checked_below``: every schedule with fewer deviations than this, each
    drawn from the failing run's ``failing_deviations`` choices at any of
    their options, was run (``smaller_runs`` of them) and none failed the
    same way; :attr:`smallest` when that covers every smaller count."""

    schedule: Schedule
    exception: BaseException
    trace: Trace
    shrink_runs: int
    checked_below: int = 0
    smaller_runs: int = 0
    failing_deviations: int = 0

    @property
    def deviations(self) -> dict[int, int]:
        return dict(self.schedule.deviations or {})

    @property
    def smallest(self) -> bool:
        """True when no schedule with fewer deviations (from the failing
        run's, see above) fails the same way: every one was run."""
        return self.checked_below >= len(self.deviations)

    def size_claim(self) -> str:
        """What is known of smaller schedules, in words (for reports)."""
        count = len(self.deviations)
        if not count:
            return "no deviation at all"
        if self.shrink_runs == 0:
            return "shrunk in an earlier sweep"
        if self.smallest and count == 1:
            return "the smallest: the stock schedule passes (or fails another way)"
        below = self.checked_below - 1
        checked = f"all {self.smaller_runs} checked: up to {below} of the failing run's {self.failing_deviations} deviating choices, each at any option"
        if self.smallest:
            return f"the smallest: no schedule with fewer deviations fails the same way ({checked})"
        if self.checked_below:
            return (
                f"no schedule with at most {below} deviation(s) fails the same way ({checked}); "
                f"schedules with {self.checked_below} to {count - 1} were not all tried"
            )
        return "ddmin's result: schedules with fewer deviations were not all tried (shrink budget)"

    def timeline(self, window: int = 40, context: int = 4) -> str:
        """The decisive moments of the minimal run, in virtual ms (see :func:`focused_timeline`)."""
        return focused_timeline(self.trace, window, context)

    @property
    def nominal(self) -> bool:
        """True when the failure needs no deviation from stock order and no
        delay jitter: it fails under nominal timing, so it is no scheduling race."""
        return not self.schedule.deviations and self.schedule.jitter == 0


#: What a report says of a failure that needs no exploring.
NOT_A_RACE = "fails under nominal timing (stock order, no deviation): not a scheduling race"


def focused_timeline(trace: Trace, window: int = 40, context: int = 4) -> str:
    """The decisive moments of a failing run, in virtual ms.

    Task steps and timer firings are left out and runs of alike events
    (audio chunks) are folded into one line. Shown: ``context`` lines
    around each deviation from stock order (marked ``>>``, with when the
    pick fired against its window), each delay drawn under ``jitter``
    (which shrinking did not take back to nominal), each rule violation
    and milestone a double or the test recorded
    (``agentsim.record_event``), and the failure itself (marked ``!!``);
    ``...`` stands for what is left out. At most ``window`` lines.
    """
    lines, decisive = _folded_lines(trace.events)
    if not lines:
        return ""
    keep: set[int] = set()
    for index in decisive:
        keep.update(range(max(0, index - context), min(len(lines), index + context + 1)))
    chosen = sorted(keep) or list(range(max(0, len(lines) - window), len(lines)))
    # Over budget: the failure and the moments nearest it matter most.
    chosen = chosen[-window:]
    out: list[str] = []
    previous = -1
    for index in chosen:
        if previous >= 0 and index != previous + 1:
            out.append("   ...")
        out.append(lines[index])
        previous = index
    return "\n".join(out)


def _error_lines(exception: BaseException) -> str:
    """The leaf exception and where the program raised it."""
    error = leaf_exception(exception)
    site = exception_site(error)
    return f"{type(error).__name__}: {error}" + (f"\n  raised at {site}" if site else "")


def format_replay(schedule: Schedule, exception: BaseException, trace: Trace, repro: str, *, verbose: bool = False) -> str:
    """The report of one replayed failing schedule, focused as a sweep's is:
    the exception and its site, the decisive moments, the replay line."""
    deviations = len(schedule.deviations or {})
    if schedule.is_replay:
        jitter = "no delay jitter" if schedule.jitter == 0 else f"delay jitter x{schedule.jitter:g}"
        described = f"{deviations} deviation(s) from FIFO order, {jitter}"
    else:
        described = f"strategy {schedule.strategy!r}"
    lines = [_error_lines(exception), f"schedule {schedule.encode()} ({described}) failed when replayed; '>>' marks the deviations, '!!' the failure:"]
    if (schedule.is_replay and not deviations and schedule.jitter == 0) or schedule.strategy == "fifo":
        lines.append(NOT_A_RACE)
    lines.append(focused_timeline(trace))
    if verbose:
        lines += ["the failing run, every event:", trace.format(None)]
    lines.append(f"replay: {repro}")
    return "\n".join(lines)


#: Event kinds that are the schedule's bookkeeping rather than what happened.
_QUIET_KINDS = frozenset({"step", "timer", "jump"})
#: Event kinds a report always shows, with their neighbours.
_DECISIVE_KINDS = frozenset({"violation", "milestone", "abort", "escape", "delay"})


def _folded_lines(events: list[TraceEvent]) -> tuple[list[str], list[int]]:
    """Report lines up to the failure, and which of them are decisive."""
    failed_at = next((i for i, e in enumerate(events) if e.kind == "exit" and e.detail.startswith("raised")), len(events) - 1)
    lines: list[str] = []
    decisive: list[int] = []
    previous_key = None
    repeats = 0
    for position, event in enumerate(events[: failed_at + 1]):
        failure = position == failed_at
        if event.kind in _QUIET_KINDS and not failure:  # the choice lines say which timer fired when it mattered
            continue
        key = (event.kind, event.task, event.detail.split(" ", 1)[0])
        if key == previous_key and event.kind in ("emit", "send", "server", "client", "playback", "delay") and not failure:
            repeats += 1
            lines[-1] = f"{lines[-1].split('  (x')[0]}  (x{repeats + 1}, until {event.ticks / 1_000_000:.3f} ms)"
            continue
        previous_key, repeats = key, 0
        deviation = event.kind == "choice" and "(fifo" in event.detail
        marker = "!!" if failure else ">>" if deviation else "  "
        if failure or deviation or event.kind in _DECISIVE_KINDS:
            decisive.append(len(lines))
        line = f"{marker} {event.format()}"
        if deviation and (words := describe_deviation(event.task, event.detail)) is not None:
            line += f"\n{'':19}= {words}"  # (under the event's kind)
        lines.append(line)
    return lines, decisive


def exception_site(error: BaseException) -> str | None:
    """Where ``error`` was raised in the program's own code (its deepest frame
    outside the standard library, the event loops and agentsim), if known."""
    site = None
    traceback = error.__traceback__
    while traceback is not None:
        code = traceback.tb_frame.f_code
        if is_program_code(code.co_filename) and not is_agentsim(code.co_filename):
            site = format_site(code.co_filename, traceback.tb_lineno, code.co_name)
        traceback = traceback.tb_next
    return site


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

    def format(self, *, verbose: bool = False) -> str:
        """The report: the exception and where it was raised, the minimal
        schedule's decisive moments, and the line that replays it
        (``verbose``: the whole timeline of the failing run too)."""
        lines = [_error_lines(self.exception)]
        if self.from_database:
            lines.append(
                f"seed {self.seed} (strategy {self.strategy!r}) failed in an earlier sweep: replayed first from the "
                "failure database, and it still fails"
            )
        else:
            lines.append(f"seed {self.seed} (strategy {self.strategy!r}) failed")
        if self.minimal is not None and self.minimal.nominal:
            lines.append(NOT_A_RACE)
        if self.minimal is not None:
            minimal = self.minimal
            jitter = "no delay jitter" if minimal.schedule.jitter == 0 else f"delay jitter x{minimal.schedule.jitter:g}"
            found = "shrunk in that earlier sweep" if self.from_database and minimal.shrink_runs == 0 else f"found in {minimal.shrink_runs} shrink runs"
            lines.append(f"minimal schedule: {len(minimal.deviations)} deviation(s) from FIFO order, {jitter} ({found})")
            if minimal.deviations and minimal.shrink_runs:
                lines.append(f"  {minimal.size_claim()}")
            lines.append("'>>' marks the deviations (each explained below it), '!!' the failure:")
            lines.append(minimal.timeline())
        if verbose:
            lines.append("the failing run, every event:")
            lines.append(self.trace.format(None))
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

    @classmethod
    def with_windows(cls, runs: int, windows: int) -> SingleScheduleWarning:
        """The warning for a sweep whose runs set windowed timers and still
        all took one order and one timing (their windows never overlapped
        and the strategy does not time delays)."""
        return cls(
            f"all {runs} runs took one order and one timing although they set {windows} windowed timer(s): no window "
            f"overlapped another when time moved, and this strategy does not try where a delay lands (the default "
            f"strategy, 'portfolio', and 'timed' do)"
        )


@dataclass
class Branching:
    """What branching did in a focused sweep (``ExploreReport.branching``)."""

    #: The focus in words.
    focus: str
    #: Virtual seconds of each checkpoint the branches started from.
    checkpoints: list[float] = field(default_factory=list)
    #: Explored runs that branched from a checkpoint.
    branches: int = 0
    #: True: by ``os.fork()`` (each prefix ran once); False: each branch re-simulated its prefix.
    forked: bool = False
    #: CPU seconds the focused sweep spent (base runs, prefixes, branches).
    cpu_seconds: float = 0.0
    #: CPU seconds a whole-run sweep of as many runs would have spent (each
    #: run as long as the base runs, which were measured).
    whole_run_cpu_seconds: float = 0.0
    #: Why forking stopped part-way ("" if it did not): the holder process
    #: ended, and the runs left re-simulated their prefix (same schedules).
    fallback: str = ""

    def sentence(self) -> str:
        """One line for the summary."""
        where = ", ".join(f"{instant:g} s" for instant in self.checkpoints[:6])
        if len(self.checkpoints) > 6:
            where += f", ... ({len(self.checkpoints)} in all)"
        how = "forked" if self.forked else "re-simulating each prefix"
        if self.fallback:
            how += f" until the holder process ended ({self.fallback}), then re-simulating"
        saving = ""
        if self.cpu_seconds > 0 and self.whole_run_cpu_seconds > 0:
            saving = f" ({self.whole_run_cpu_seconds / self.cpu_seconds:.1f}x less)"
        return (
            f"focus {self.focus}: {self.branches} branch(es) from {len(self.checkpoints)} checkpoint(s) at {where or 'none reached'}, {how}; "
            f"{self.cpu_seconds:.2f} CPU s, where whole runs would have taken about {self.whole_run_cpu_seconds:.2f}{saving}"
        )



@dataclass
class ExploreReport:
    """The result of :func:`agentsim.explore`.

    ``runs_executed`` counts the explored runs (not shrinking or determinism
    re-runs); ``choice_points`` the open choices each run decided (run 0's
    also apart, ``stock_choice_points``, from ``explored_choice_points``);
    ``distinct_schedules`` how many different orders of events they produced
    and ``distinct_timings`` how many different timed traces (an order under
    other delays counts once there for each timing); ``windowed_timers`` and
    ``jitter_draws`` the delays set as windows and drawn as points, over all
    runs; ``leftover_tasks`` the tasks the first passing run that leaked
    tasks left running; ``failures`` the failing runs; ``nondeterminism`` schedules that did
    not repeat.
    """

    runs_executed: int = 0
    distinct_schedules: int = 0
    failures: list[Failure] = field(default_factory=list)
    nondeterminism: list[Nondeterminism] = field(default_factory=list)
    replayed_from_database: int = 0
    distinct_timings: int = 0
    choice_points: list[int] = field(default_factory=list)
    #: Run 0's choice points (the stock schedule, counted through the policy path), None if it did not run.
    stock_choice_points: int | None = None
    #: The choice points of every other run (what the strategy decided).
    explored_choice_points: list[int] = field(default_factory=list)
    windowed_timers: int = 0
    jitter_draws: int = 0
    #: The tasks the first passing run that leaked left running (the sweep warns once with them).
    leftover_tasks: tuple[TaskSnapshot, ...] = ()
    #: Every label of ``agentsim.sometimes``/``reached`` the runs evaluated:
    #: in how many runs it held (0: evaluated, never true).
    coverage: dict[str, int] = field(default_factory=dict)
    #: The labels the sweep was required to reach (``require=``).
    required: tuple[str, ...] = ()
    #: ``strategy="exhaustive"``: True when every schedule within ``max_deviations`` ran (None: another strategy).
    exhausted: bool | None = None
    #: ``strategy="exhaustive"``: every schedule with at most this many deviations ran.
    exhaustive_depth: int | None = None
    #: ``strategy="exhaustive"``: what the sweep covered, in words ("exhaustive to depth 2: 40 schedule(s), all pass").
    completeness: str = ""
    #: A focused sweep (``focus=``): checkpoints, branches and CPU seconds
    #: (``_branched.Branching``); None for a whole-run sweep.
    branching: Branching | None = None

    @property
    def ok(self) -> bool:
        """No failure, no nondeterminism, and every required moment reached."""
        return not self.failures and not self.nondeterminism and not self.unreached_requirements

    @property
    def fewest_deviations(self) -> int | None:
        """The fewest deviations from stock order among the failures' shrunk
        schedules (None: no failure was shrunk)."""
        counts = [len(failure.minimal.deviations) for failure in self.failures if failure.minimal is not None]
        return min(counts) if counts else None

    @property
    def unreached_requirements(self) -> tuple[str, ...]:
        """The required labels no run reached (never evaluated, or never true)."""
        return tuple(label for label in self.required if not self.coverage.get(label))

    def _coverage_lines(self) -> list[str]:
        """What the runs reached: every label's count, the ones never reached, and unmet requirements."""
        lines = []
        if self.coverage:
            counts = ", ".join(f"{label!r} {runs}/{self.runs_executed}" for label, runs in sorted(self.coverage.items()))
            lines.append(f"coverage (runs where each moment happened): {counts}")
            never = [label for label, runs in sorted(self.coverage.items()) if not runs]
            if never:
                lines.append(f"never reached: {', '.join(map(repr, never))}")
        unmet = self.unreached_requirements
        if unmet:
            lines.append(
                f"required moment(s) never reached in {self.runs_executed} run(s): {', '.join(map(repr, unmet))} — the sweep fails: "
                "the test did not exercise what it is about (more runs, another strategy, or a program that gets there)"
            )
        return lines

    @property
    def single_schedule(self) -> bool:
        """True if the sweep had nothing to explore: no run made a choice,
        set a windowed timer or drew a delay (see :class:`SingleScheduleWarning`)."""
        return not any(self.choice_points) and not self.windowed_timers and not self.jitter_draws

    @property
    def single_timing(self) -> bool:
        """True if every run took one order and one timing although windowed
        timers were set (see :meth:`SingleScheduleWarning.with_windows`)."""
        return self.runs_executed > 1 and self.windowed_timers > 0 and self.distinct_schedules == 1 and self.distinct_timings == 1

    def _choice_spread(self) -> str:
        """Choice points: run 0 (the stock schedule, counted through the
        policy path) apart from the explored runs, which a strategy that
        decides nothing itself (``jitter``) leaves at 0; drawn delays per run."""
        text = "" if self.stock_choice_points is None else f", run 0 (stock): {self.stock_choice_points} choice point(s)"
        explored = sorted(self.explored_choice_points)
        if explored:
            median = explored[len(explored) // 2]
            text += f", explored runs: {explored[0]}-{explored[-1]} choice point(s) each (median {median})"
        if self.jitter_draws:
            text += f", {self.jitter_draws / self.runs_executed:.1f} delay draw(s) per run"
        return text

    def format(self, *, verbose: bool = False) -> str:
        """The summary line, health notes, then each failure (``verbose``: with
        the failing run's whole timeline) and each nondeterminism."""
        spread = self._choice_spread()
        replayed = f", {self.replayed_from_database} saved failure(s) replayed first" if self.replayed_from_database else ""
        fewest = self.fewest_deviations
        depth = f" (the smallest needs {fewest} deviation(s) from stock order)" if fewest is not None else ""
        lines = [
            f"{self.runs_executed} run(s), {self.distinct_schedules} distinct order(s), "
            f"{self.distinct_timings} distinct timing(s){spread}, {len(self.failures)} failure(s){depth}{replayed}"
        ]
        if self.runs_executed == 0 and any(failure.from_database for failure in self.failures):
            lines[0] += (
                "\n(a failure saved by an earlier sweep still fails, so no new run was needed; "
                "delete the database entry, or pass database=None / --agentsim-db=none, to sweep afresh)"
            )
        if self.completeness:
            lines[0] += f"\n{self.completeness}"
        if self.branching is not None:
            lines[0] += f"\n{self.branching.sentence()}"
        coverage = self._coverage_lines()
        if coverage:
            lines.append("\n".join(coverage))
        if self.runs_executed > 1 and self.single_schedule:
            lines.append(f"health: {SingleScheduleWarning.after(self.runs_executed)}")
        elif self.single_timing:
            lines.append(f"health: {SingleScheduleWarning.with_windows(self.runs_executed, self.windowed_timers)}")
        lines += [failure.format(verbose=verbose) for failure in self.failures]
        lines += [case.format() for case in self.nondeterminism]
        return "\n\n".join(lines)
