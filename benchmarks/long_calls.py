"""Races late in long calls: a whole-run sweep beside a focused, branched one.

For each long-call race (with its fixed twin) and each base seed, in one
run, side by side:

* **whole**: ``agentsim.explore(racy)``, the default strategy over whole
  runs (every run re-simulates the call, its deviations spread over all of it);
* **focused**: ``agentsim.explore(racy, focus=WINDOW)``, every deviation in
  the race's window and every run branched from the stock run's state at its
  start (``os.fork()``);

runs and CPU seconds to the first failure (``stop_on_first``, no
shrinking: finding is what is measured). CPU seconds are this process's and
its children's, as the system counts them (``os.times``), so the holder and
the branches forked for the focused sweep are in, and so are the replays of
failures. Then the fixed twin's focused sweep: failures in 200 runs (0
expected), and the ratios.

    python benchmarks/long_calls.py [--seeds 0 1000 2000] [--cap 300] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import agentsim

# The newest SDK swallows a cancellation in its background response.create
# (reported by agentsim as designed); a measurement need not repeat it per run.
warnings.filterwarnings("ignore", category=agentsim.SwallowedCancellationWarning)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "long_calls"


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"agentsim_long_calls_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Race:
    name: str
    racy: Callable[..., Any]
    fixed: Callable[..., Any]
    window: tuple[float, float]
    minute: float


def races() -> list[Race]:
    transfer = _load("transfer_at_session_limit")
    sdk = _load("transfer_across_sdk_sessions")
    server = _load("transfer_on_simulated_server")
    return [
        Race("app: transfer at the session limit", transfer.racy, transfer.fixed, (transfer.WINDOW_START, transfer.WINDOW_END), transfer.TRANSFER_AT / 60),
        Race("SDK RealtimeSession, scripted transport: transfer across sessions", sdk.racy, sdk.fixed, (sdk.WINDOW_START, sdk.WINDOW_END), sdk.TRANSFER_AT / 60),
        Race("simulated server, SimulatedCaller: transfer confirmed across the limit", server.racy, server.fixed, (server.WINDOW_START, server.WINDOW_END), server.TRANSFER_AT / 60),
    ]


def cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def sweep(fn: Callable[..., Any], *, seed: int, runs: int, focus: tuple[float, float] | None) -> tuple[int, bool, float, float]:
    """Runs made, whether it failed, CPU seconds and wall seconds."""
    started, wall = cpu(), time.perf_counter()
    report = agentsim.explore(fn, runs=runs, seed=seed, focus=focus, database=None, shrink_failures=False, wall_timeout=600)
    return report.runs_executed, bool(report.failures), cpu() - started, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1000, 2000])
    parser.add_argument("--cap", type=int, default=300, help="runs a sweep may take to find the race")
    parser.add_argument("--twin-runs", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="one seed, cap 100, twin 50 (a smoke run)")
    parser.add_argument("--only", default=None, help="run only the races whose name contains this")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.seeds, arguments.cap, arguments.twin_runs = arguments.seeds[:1], 100, 50
    print(f"{os.cpu_count()} cores; cap {arguments.cap} runs per sweep; CPU s = this process and its children")
    for race in races():
        if arguments.only and arguments.only not in race.name:
            continue
        print(f"\n{race.name} (the coincidence at minute {race.minute:.1f}; focus {race.window[0]:g}-{race.window[1]:g} s)")
        print(f"{'seed':>6} | {'whole: runs':>11} {'CPU s':>8} | {'focused: runs':>13} {'CPU s':>8} {'wall s':>7} | {'CPU ratio':>9}")
        for seed in arguments.seeds:
            whole = sweep(race.racy, seed=seed, runs=arguments.cap, focus=None)
            focused = sweep(race.racy, seed=seed, runs=arguments.cap, focus=race.window)
            found = lambda result: f"{result[0]}" if result[1] else f">{result[0]}"  # noqa: E731
            ratio = whole[2] / focused[2] if focused[2] else float("inf")
            print(f"{seed:>6} | {found(whole):>11} {whole[2]:>8.1f} | {found(focused):>13} {focused[2]:>8.2f} {focused[3]:>7.2f} | {ratio:>8.1f}x")
        twin = agentsim.explore(race.fixed, runs=arguments.twin_runs, focus=race.window, database=None, wall_timeout=600)
        print(f"fixed twin, focused: {len(twin.failures)} failure(s) in {twin.runs_executed} runs ({twin.distinct_timings} distinct timings)")
        assert twin.branching is not None
        print(twin.branching.sentence())


if __name__ == "__main__":
    main()
