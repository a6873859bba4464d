"""Soak oracles: what to assert over a long call.

``check_call(report, p95=..., max_latency=..., drift_ms=...)`` holds a
:class:`CallReport` to bounds; ``MemoryWatch`` samples the app's own memory
(``tracemalloc``, filtered to the app's files) at simulated instants and
says how much it grows per simulated hour. Each failed check is a
``SoakCheckError`` naming the check, its bound and what was measured.
"""

from __future__ import annotations

import asyncio
import fnmatch
import tracemalloc
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..._kernel.core import require_core
from ..._kernel.errors import AgentsimError, SimulationConfigError
from ..._kernel.validation import non_negative, positive

if TYPE_CHECKING:
    from ._caller import CallReport


class SoakCheckError(AgentsimError, AssertionError):
    """A long call broke a soak bound. Fields: ``check`` (which: ``"p95
    latency"``, ``"max latency"``, ``"tracker drift"``, ``"rules"``,
    ``"unanswered"``, ``"resumed"``, ``"lost answers"``, ``"double answers"``,
    ``"memory growth"``), ``limit`` and ``measured``."""

    def __init__(self, check: str, limit: float, measured: float, detail: str = "") -> None:
        self.check = check
        self.limit = limit
        self.measured = measured
        super().__init__(f"soak check {check!r} failed: measured {measured:g}, bound {limit:g}" + (f" ({detail})" if detail else ""))


def check_call(
    report: CallReport,
    *,
    p95: float | None = None,
    max_latency: float | None = None,
    drift_ms: float | None = None,
    unanswered: int | None = 0,
    rules: bool = True,
    resumed: bool = True,
    lost_answers: int | None = 0,
    double_answers: int | None = 0,
) -> None:
    """Hold a call's report to bounds (seconds for latencies, from the end
    of the caller's speech to the first audio heard; milliseconds of drift
    between the SDK's playback tracker and the player; turns left
    unanswered; no server rule broken). Across sessions: ``resumed`` fails
    a call whose line went dead before the caller was done (a session ended
    and the app never opened another); ``lost_answers`` bounds the turns
    whose answer was lost with their session, ``double_answers`` the turns
    answered twice. None (or False) skips a bound::

        check_call(caller.report(), p95=2.5, max_latency=4.0, drift_ms=50)
    """
    from ._caller import CallReport

    if not isinstance(report, CallReport):
        raise SimulationConfigError("report", report, "a CallReport (SimulatedCaller.report())")
    for name, bound in (("p95", p95), ("max_latency", max_latency), ("drift_ms", drift_ms)):
        if bound is not None:
            non_negative(name, bound, expected="a bound >= 0, or None to skip it")
    if rules and report.violations:
        raise SoakCheckError("rules", 0, len(report.violations), "; ".join(report.violations[:3]))
    if resumed and report.dropped:
        raise SoakCheckError(
            "resumed", 1, 0, f"the server ended session {report.sessions} at {report.minutes:.1f} min and the app opened no new one: the call ended before the caller hung up"
        )
    if lost_answers is not None and report.lost_answers > lost_answers:
        raise SoakCheckError("lost answers", lost_answers, report.lost_answers, "turns whose answer was lost when their session ended")
    if double_answers is not None and report.double_answers > double_answers:
        raise SoakCheckError("double answers", double_answers, report.double_answers, "turns answered more than once (a question asked again of a new session)")
    if unanswered is not None and report.unanswered > unanswered:
        raise SoakCheckError("unanswered", unanswered, report.unanswered, "turns whose answer was never heard")
    if p95 is not None and report.latency_p95 is not None and report.latency_p95 > p95:
        raise SoakCheckError("p95 latency", p95, report.latency_p95, "seconds from the end of speech to the first audio heard")
    if max_latency is not None and report.latency_max is not None and report.latency_max > max_latency:
        raise SoakCheckError("max latency", max_latency, report.latency_max, "seconds from the end of speech to the first audio heard")
    if drift_ms is not None and report.drift_ms_max > drift_ms:
        raise SoakCheckError("tracker drift", drift_ms, report.drift_ms_max, "ms between the SDK's playback tracker and the player")


class MemoryWatch:
    """The app's own memory over a long call: a ``tracemalloc`` sample of
    the bytes allocated by files matching ``files`` (glob patterns, e.g.
    ``["*/myapp/*"]``; default: every file) every ``every`` simulated
    seconds; ``per_hour()`` is the growth per simulated hour (least squares
    over the samples after the first). Tracing slows a run down: use it in a
    soak test, not in every test::

        watch = MemoryWatch(every=300, files=["*/myapp/*"])
        watch.start()
        ...  # the call
        watch.stop()
        watch.check(mb_per_hour=1.0)
    """

    def __init__(self, *, every: float = 300.0, files: Sequence[str] = ("*",)) -> None:
        positive("every", every, expected="simulated seconds between samples (> 0)")
        if isinstance(files, str) or not isinstance(files, Sequence) or not all(isinstance(pattern, str) and pattern for pattern in files):
            raise SimulationConfigError("files", files, "glob patterns of the app's source files, e.g. ['*/myapp/*']")
        self.every = float(every)
        self.files = tuple(files)
        #: ``(simulated seconds, bytes)`` samples.
        self.samples: list[tuple[float, int]] = []
        self._task: asyncio.Task[None] | None = None
        self._started_tracing = False

    def start(self) -> None:
        """Start sampling (inside the simulation); tracing starts if it was off."""
        require_core("MemoryWatch.start")
        if not tracemalloc.is_tracing():
            tracemalloc.start()
            self._started_tracing = True
        self._task = asyncio.get_running_loop().create_task(self._sample_forever(), name="MemoryWatch")

    def stop(self) -> None:
        """Take a last sample and stop (and stop tracing if ``start`` began it)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
            self._sample()
        if self._started_tracing:
            tracemalloc.stop()
            self._started_tracing = False

    async def _sample_forever(self) -> None:
        while True:
            self._sample()
            await asyncio.sleep(self.every)

    def _sample(self) -> None:
        if not tracemalloc.is_tracing():
            return
        snapshot = tracemalloc.take_snapshot()
        size = sum(stat.size for stat in snapshot.statistics("filename") if any(fnmatch.fnmatch(stat.traceback[0].filename, pattern) for pattern in self.files))
        self.samples.append((asyncio.get_running_loop().time(), size))

    def per_hour(self) -> float:
        """Bytes the matched files' allocations grow by per simulated hour
        (0 with fewer than three samples: the first is the start-up)."""
        points = self.samples[1:]
        if len(points) < 2:
            return 0.0
        mean_t = sum(t for t, _ in points) / len(points)
        mean_b = sum(b for _, b in points) / len(points)
        spread = sum((t - mean_t) ** 2 for t, _ in points)
        if spread == 0:
            return 0.0
        return sum((t - mean_t) * (b - mean_b) for t, b in points) / spread * 3600

    def check(self, *, mb_per_hour: float) -> None:
        """``SoakCheckError`` if the app's memory grows faster than ``mb_per_hour``."""
        non_negative("mb_per_hour", mb_per_hour, expected="a bound in MB per simulated hour >= 0")
        growth = self.per_hour() / 1e6
        if growth > mb_per_hour:
            raise SoakCheckError("memory growth", mb_per_hour, growth, f"MB per simulated hour, from {len(self.samples)} samples of {', '.join(self.files)}")
