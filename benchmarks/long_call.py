"""Wall time of a long call through the simulated Realtime server.

Runs ``examples/long_call.py`` (the real ``OpenAIRealtimeWebSocketModel``,
the simulated server with jittered latencies, a simulated player) in a fresh
process per case, so each peak RSS is its own, and prints side by side:
wall seconds, speed-up over real time, events through the wire per wall
second, peak RSS, and each case's ratio to the 30-minute FIFO baseline.

    python benchmarks/long_call.py [--minutes 30]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def one_case(minutes: float, seed: int, strategy: str, microphone: bool) -> dict[str, float]:
    sys.path.insert(0, str(EXAMPLES))
    import long_call

    import agentsim

    started = time.perf_counter()
    summary = agentsim.run(long_call.long_call, minutes, microphone, seed=seed, strategy=strategy, wall_timeout=None)
    wall = time.perf_counter() - started
    return {
        "minutes": minutes,
        "wall": wall,
        "events": summary.wire_events,
        "violations": len(summary.violations),
        "turns": summary.turns,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        minutes, seed, strategy, microphone = args.case.split(",")
        print(json.dumps(one_case(float(minutes), int(seed), strategy, microphone == "mic")))
        return
    cases = [
        (args.minutes, 0, "fifo", ""),
        (args.minutes, 3, "random", ""),
        (args.minutes, 3, "pct", ""),
        (args.minutes * 2, 0, "fifo", ""),
        (args.minutes, 0, "fifo", "mic"),
    ]
    rows = []
    for minutes, seed, strategy, microphone in cases:
        out = subprocess.run([sys.executable, __file__, "--case", f"{minutes},{seed},{strategy},{microphone}"], capture_output=True, text=True, check=True)
        name = f"{minutes:g} min {strategy} seed {seed}" + (" + microphone" if microphone else "")
        rows.append((name, json.loads(out.stdout.strip().splitlines()[-1])))
    base = rows[0][1]["wall"]
    print(f"{'case':41} {'wall s':>7} {'x real time':>11} {'events/s':>9} {'RSS MB':>7} {'vs base':>8} violations")
    for name, row in rows:
        print(
            f"{name:41} {row['wall']:7.2f} {row['minutes'] * 60 / row['wall']:11.0f} {row['events'] / row['wall']:9.0f}"
            f" {row['rss_mb']:7.0f} {row['wall'] / base:7.2f}x {row['violations']:>10}"
        )


if __name__ == "__main__":
    main()
