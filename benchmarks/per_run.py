"""What one run costs: a trivial program under ``explore`` and ``simulate``
beside plain ``asyncio.run`` of it, and the default strategy per run beside
each of its members, on a trivial program and a real-SDK realtime race.

CPU microseconds per run (``time.process_time``), best of ``--rounds``
sweeps of ``--runs`` runs each, so a loaded machine moves them less than
wall time would. Every row prints its cost and its ratio to its reference
(``asyncio.run`` for the first table; the mean of the members for the
second). ``benchmarks/side_by_side.py --against OTHER/src per_run.py`` sets
two trees beside each other.

    python benchmarks/per_run.py [--runs 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import agentsim

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "races"))
MEMBERS = ("timed", "pct", "jitter")


async def one_sleep() -> None:
    await asyncio.sleep(1.0)


async def nothing_to_wait_for() -> None:
    await asyncio.sleep(0)


def best_cost(sweep: Callable[[], None], runs: int, rounds: int) -> float:
    """The lowest CPU microseconds per run over ``rounds`` sweeps."""
    costs = []
    for _ in range(rounds):
        started = time.process_time()
        sweep()
        costs.append((time.process_time() - started) / runs * 1e6)
    return min(costs)


def fixed_costs(runs: int, rounds: int) -> None:
    plain = best_cost(lambda: [asyncio.run(nothing_to_wait_for()) for _ in range(runs)], runs, rounds)
    simulated = best_cost(lambda: [agentsim.simulate(one_sleep, seed=seed, strategy="random") for seed in range(runs)], runs, rounds)
    explored = best_cost(lambda: agentsim.explore(one_sleep, runs=runs, database=None, stop_on_first=False), runs, rounds)
    print("\n== per-run fixed cost (us): a one-sleep program ==")
    print(f"{'case':<40}{'cost':>10}{'vs asyncio.run':>16}")
    for name, cost in (("asyncio.run, sleep(0)", plain), ("simulate, random", simulated), ("explore, default", explored)):
        print(f"{name:<40}{cost:>10.1f}{cost / plain:>15.2f}x")


def default_beside_members(name: str, program: Any, runs: int, rounds: int) -> None:
    costs = {strategy: best_cost(lambda strategy=strategy: agentsim.explore(program, runs=runs, strategy=strategy, database=None, stop_on_first=False), runs, rounds) for strategy in (*MEMBERS, "portfolio")}
    mean = statistics.mean(costs[member] for member in MEMBERS)
    print(f"\n== per-run cost by strategy (us), {name} ==")
    print(f"{'strategy':<40}{'cost':>10}{'vs members mean':>16}")
    for strategy, cost in costs.items():
        print(f"{strategy:<40}{cost:>10.1f}{cost / mean:>15.2f}x")


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="500 runs, 2 rounds")
    options = parser.parse_args()
    if options.quick:
        options.runs, options.rounds = 500, 2
    agentsim.explore(one_sleep, runs=20, database=None)  # imports and caches
    fixed_costs(options.runs, options.rounds)
    default_beside_members("a one-sleep program", one_sleep, options.runs, options.rounds)
    realtime = importlib.import_module("close_vs_inflight_tool").fixed
    default_beside_members("close_vs_inflight_tool.fixed (real SDK, realtime)", realtime, max(100, options.runs // 5), options.rounds)


if __name__ == "__main__":
    main()
