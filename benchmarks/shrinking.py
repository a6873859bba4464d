"""How small and how trustworthy shrunk schedules are, on every race example.

For each program in ``examples/races/`` and ``examples/windows/`` and each
base seed, the first failure a ``random`` (and a ``pct``) sweep finds is
shrunk; printed side by side:

* deviations from stock order in the failing run and in its minimal
  schedule, and the ratio (how much shrinking removed);
* shrink runs spent;
* whether the minimal schedule is a **local minimum** (no single deviation
  can be dropped or moved nearer stock while the same origin fails: every
  neighbour is run) and whether it keeps the origin (exception type and
  raising line) of the failure found.

    python benchmarks/shrinking.py [--seeds 3] [--cap 300]

Nothing is asserted: this is a measurement (the suite's
tests/examples/test_minimality.py checks seed 0).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("races", "windows")
for folder in FOLDERS:
    sys.path.insert(0, str(ROOT / "examples" / folder))

import agentsim  # noqa: E402
from agentsim.explore._shrink import origin, simpler_failing_neighbours  # noqa: E402


def _replay(racy: Any, schedule: agentsim.Schedule) -> agentsim.SimulationResult[Any]:
    return agentsim.replay(racy, schedule=schedule)


def measure(racy: Any, strategy: str, base: int, cap: int) -> tuple[int, int, int, bool, bool] | None:
    report = agentsim.explore(racy, runs=cap, seed=base * 1000, strategy=strategy, database=None)
    if not report.failures or report.failures[0].minimal is None:
        return None
    failure = report.failures[0]
    minimal = failure.minimal
    assert minimal is not None
    local = not simpler_failing_neighbours(functools.partial(_replay, racy), minimal)
    same_origin = origin(minimal.exception) == origin(failure.exception)
    return len(failure.trace.deviations), len(minimal.deviations), minimal.shrink_runs, local, same_origin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3, help="base seeds per strategy")
    parser.add_argument("--cap", type=int, default=300, help="runs per sweep before giving up")
    arguments = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'example':32} {'strategy':8} {'deviations found':>16} {'minimal':>8} {'found/minimal':>13} {'shrink runs':>11} {'local minimum':>13} {'same origin':>11}")
    totals: list[tuple[int, int, int, bool, bool]] = []
    for folder in FOLDERS:
        for path in sorted((ROOT / "examples" / folder).glob("[!_]*.py")):
            racy = __import__(path.stem).racy
            for strategy in ("random", "pct"):
                rows = [row for base in range(arguments.seeds) if (row := measure(racy, strategy, base, arguments.cap)) is not None]
                if not rows:
                    print(f"{path.stem:32} {strategy:8} {'none found':>16}")
                    continue
                totals += rows
                found = statistics.median(row[0] for row in rows)
                minimal = statistics.median(row[1] for row in rows)
                ratio = f"x{found / minimal:.1f}" if minimal else "-"
                runs = statistics.median(row[2] for row in rows)
                local = sum(row[3] for row in rows)
                same = sum(row[4] for row in rows)
                print(
                    f"{path.stem:32} {strategy:8} {found:>16g} {minimal:>8g} {ratio:>13} {runs:>11g} "
                    f"{f'{local}/{len(rows)}':>13} {f'{same}/{len(rows)}':>11}"
                )
    local = sum(row[3] for row in totals)
    same = sum(row[4] for row in totals)
    print(f"\n{len(totals)} failures shrunk: {local} local minima, {same} kept their origin; "
          f"median deviations {statistics.median(row[0] for row in totals):g} found -> {statistics.median(row[1] for row in totals):g} minimal")


if __name__ == "__main__":
    main()
