"""Recorded sessions: how fast exploring a replay finds a race the recording
came close to, how often it cries wolf, and what a replay costs.

The program is ``examples/incident/support_call.py``: the recorded call is a
near miss (the caller barged in 20 ms after the app's 300 ms echo grace
period; inside it, the app crashes). Printed, side by side in one run:

* runs to the first failure of the buggy app's replay, per strategy, over
  ``--bases`` base seeds (a sweep of at most ``--cap`` runs from
  ``base * 1000``): median and max, "-" when a sweep found nothing; and the
  same with ``Tolerance(0, 0)`` (the recorded instants exactly: nothing to
  find);
* false alarms of the fixed app's replay in ``--fixed-runs`` runs under the
  default strategy and under ``random``: must be 0;
* runs per second of the replay beside the live call it was recorded from
  (the same app against the scripted simulated server), and their ratio.

    python benchmarks/recordings.py [--bases 10] [--cap 200] [--fixed-runs 2000]

Nothing is asserted: this is a measurement.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "incident"))

import agentsim  # noqa: E402
from agentsim.recording import Tolerance  # noqa: E402

STRATEGIES = ("jitter", "random", "pct", "timed", "portfolio")


def runs_to_first_failure(function: Any, strategy: str, base: int, cap: int) -> int | None:
    report = agentsim.explore(function, runs=cap, seed=base * 1000, strategy=strategy, shrink_failures=False, database=None)
    return report.runs_executed if report.failures else None


def summary(found: list[int | None]) -> str:
    hits = [runs for runs in found if runs is not None]
    if not hits:
        return "-"
    missed = len(found) - len(hits)
    return f"median {statistics.median(hits):g}, max {max(hits)}" + (f" ({missed} of {len(found)} sweeps found nothing)" if missed else "")


def runs_per_second(function: Any, runs: int) -> float:
    agentsim.explore(function, runs=3, database=None)
    start = time.perf_counter()
    report = agentsim.explore(function, runs=runs, database=None)
    return report.runs_executed / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bases", type=int, default=10)
    parser.add_argument("--cap", type=int, default=200)
    parser.add_argument("--fixed-runs", type=int, default=2000)
    parser.add_argument("--speed-runs", type=int, default=100)
    options = parser.parse_args()
    import support_call

    buggy = support_call.replay_support_call(support_call.INCIDENT, fixed=False)
    exact = support_call.replay_support_call(support_call.INCIDENT, fixed=False, tolerance=Tolerance(0, 0))
    print(f"runs to the first failure of the near miss's replay ({options.bases} base seeds, cap {options.cap}):")
    for strategy in STRATEGIES:
        found = [runs_to_first_failure(buggy, strategy, base, options.cap) for base in range(options.bases)]
        print(f"  {strategy:<10} {summary(found)}")
    found = [runs_to_first_failure(exact, "portfolio", base, options.cap) for base in range(options.bases)]
    print(f"  {'portfolio, Tolerance(0, 0)':<10} {summary(found)}")

    fixed = support_call.replay_support_call(support_call.INCIDENT, fixed=True)
    for strategy in ("portfolio", "random"):
        report = agentsim.explore(fixed, runs=options.fixed_runs, strategy=strategy, database=None)
        print(f"false alarms of the fixed app, {strategy}: {len(report.failures)} in {report.runs_executed} runs ({report.distinct_timings} distinct timings)")

    barge_in_at = support_call.first_audio_at() - support_call.NETWORK + support_call.GRACE + 0.02

    async def live() -> None:
        server = support_call.support_server(barge_in_at)
        await support_call.voice_app(server.model(), fixed=True)

    live_rate = runs_per_second(live, options.speed_runs)
    replay_rate = runs_per_second(fixed, options.speed_runs)
    print(f"runs per second: live call {live_rate:.1f}, its replay {replay_rate:.1f} (replay/live {replay_rate / live_rate:.2f}x)")


if __name__ == "__main__":
    main()
