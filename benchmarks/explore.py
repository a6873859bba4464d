"""How fast the explorer finds the example races, and how fast it runs.

For each program in ``examples/races/``:

* runs to first failure per strategy (fifo, random, pct), over 20 base seeds
  (a sweep of at most ``--cap`` runs starting at ``base * 1000``): median and
  max; "-" when a sweep found nothing;
* false alarms on the fixed twin (``--cap`` runs per strategy): must be 0;
* runs per second on one core (a sweep of the fixed twin);

and, on one realtime example, the same sweep split over 2 pytest-xdist
workers next to a serial run: the scaling from one core to two.

Then, for each narrow-window race in ``examples/windows/`` (two timing
windows that overlap by a few milliseconds), runs to first failure over 5
base seeds side by side for jitter-only sampling (``jitter``: stock order,
delays drawn), ``random`` and ``pct`` with windows (``--window-cap`` runs per
sweep), whether the FIFO run passes, and false alarms of the fixed twin in
``--fixed-runs`` runs under random and as many under PCT.

Then, for scale (``--scale-only`` alone): the per-run fixed cost of a
trivial program under ``explore`` beside plain ``asyncio.run`` of it with
nothing to wait for (the waiting agentsim skips stated apart), and
runs per second of one sweep on 1 and 2 local worker processes and on a
2-worker dask ``LocalCluster`` (the ``cluster`` extra), for the trivial
program and for two real-SDK scenarios.

Then, class by class (``--classes-only`` alone): lateness races
(``examples/lateness/``: a delay must land late), the narrow-window races and
the race examples, runs to first failure over ``--class-bases`` base seeds
for jitter, random, pct, timed and the default portfolio, the default's
ratio to the best single strategy, and false alarms of the fixed twins
under timed and the portfolio; and the long-call races of
``examples/long_calls/`` (``--long-calls-only`` alone), each swept focused
on its window under random, pct, timed and the portfolio.

Then (``--exhaustive-only`` alone): ``strategy="exhaustive"`` on every race
example and its fixed twin, schedules and time to exhaust depth 1 and 2
(to the first failure for the racy program), beside the default's runs to
first failure.

    python benchmarks/explore.py [--cap 200] [--seeds 20] [--quick] [--windows-only] [--classes-only] [--exhaustive-only] [--scale-only]

Targets (issue 5): median <= 50 runs to find; >= 300 runs/s/core on a
real-SDK realtime scenario. Nothing is asserted: this is a measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RACES = ROOT / "examples" / "races"
WINDOW_RACES = ROOT / "examples" / "windows"
LATENESS_RACES = ROOT / "examples" / "lateness"
#: The strategies the class tables compare, the default last.
CLASS_STRATEGIES = ("jitter", "random", "pct", "timed", "portfolio")
LONG_CALL_RACES = ROOT / "examples" / "long_calls"
#: A focused sweep refuses jitter (a drawn point cannot be kept inside a window).
FOCUSED_STRATEGIES = ("random", "pct", "timed", "portfolio")
sys.path.insert(0, str(RACES))
sys.path.insert(0, str(WINDOW_RACES))
sys.path.insert(0, str(LATENESS_RACES))

import agentsim  # noqa: E402
from agentsim.explore import SingleScheduleWarning  # noqa: E402

REALTIME_EXAMPLES = ("stale_audio_after_barge_in", "close_vs_inflight_tool", "duplicate_guardrail_trips")
KINDS = {"timeout_vs_late_result": "real SDK, Runner", "vad_response_vs_app_message": "real adapter, simulated server"}


def runs_to_first_failure(function: Any, strategy: str, base: int, cap: int) -> int | None:
    report = agentsim.explore(function, runs=cap, seed=base * 1000, strategy=strategy, shrink_failures=False, database=None)
    return report.runs_executed if report.failures else None


def runs_per_second(function: Any, runs: int) -> float:
    agentsim.explore(function, runs=3, database=None)  # warm caches
    start = time.perf_counter()
    report = agentsim.explore(function, runs=runs, database=None)
    elapsed = time.perf_counter() - start
    return report.runs_executed / elapsed


def xdist_scaling(name: str, runs: int) -> tuple[float, float]:
    """Wall seconds of one agentsim-marked test swept serially and over 2 workers."""
    with tempfile.TemporaryDirectory() as directory:
        test_file = Path(directory) / "test_sweep.py"
        test_file.write_text(
            textwrap.dedent(
                f"""
                import sys
                sys.path.insert(0, {str(RACES)!r})
                import pytest
                import {name} as example

                @pytest.mark.agentsim(runs={runs})
                async def test_sweep():
                    await example.fixed()
                """
            )
        )
        (Path(directory) / "pytest.ini").write_text("[pytest]\naddopts = -p no:looptime_plugin -p no:looptime_chronometers -p no:looptime_timeproxies\n")
        timings = []
        for extra in (["-p", "no:xdist"], ["-n", "2"]):
            start = time.perf_counter()
            completed = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "--agentsim-db=none", str(test_file), *extra],
                cwd=directory, capture_output=True, text=True, check=False,
            )
            timings.append(time.perf_counter() - start)
            if completed.returncode != 0:
                raise RuntimeError(completed.stdout + completed.stderr)
        return timings[0], timings[1]


def window_races(cap: int, fixed_runs: int) -> None:
    """Narrow windows: jitter-only sampling beside windowed random and PCT."""
    import warnings

    warnings.simplefilter("ignore")
    print(f"\nnarrow-window races: runs to first failure over 5 base seeds (cap {cap}; '-' none found), median [each]")
    print(f"{'example':<30}{'fifo':>6}{'jitter':>22}{'random':>22}{'pct':>22}{'fixed (random + pct)':>26}")
    for name in sorted(path.stem for path in WINDOW_RACES.glob("*.py")):
        example = importlib.import_module(name)
        fifo_passes = agentsim.simulate(example.racy).ok
        cells = []
        for strategy in ("jitter", "random", "pct"):
            found = [runs_to_first_failure(example.racy, strategy, base, cap) for base in range(5)]
            # A sweep that found nothing counts as needing more than the cap.
            median = statistics.median(runs if runs is not None else cap + 1 for runs in found)
            shown = f">{cap}" if median > cap else f"{median:.0f}"
            cells.append(f"{shown} [{','.join('-' if runs is None else str(runs) for runs in found)}]")
        false_alarms = [
            len(agentsim.explore(example.fixed, runs=fixed_runs, strategy=strategy, database=None, stop_on_first=False).failures)
            for strategy in ("random", "pct")
        ]
        alarms = f"{false_alarms[0]} + {false_alarms[1]} / {fixed_runs} each"
        print(f"{name:<30}{'pass' if fifo_passes else 'FAIL':>6}{cells[0]:>22}{cells[1]:>22}{cells[2]:>22}{alarms:>26}")


def class_table(title: str, folder: Path, cap: int, bases: int, fixed_runs: int) -> None:
    """One class of race: runs to first failure per strategy (median over
    ``bases`` base seeds; a sweep that found nothing counts as cap + 1), the
    default's ratio to the best single strategy, and false alarms of the
    fixed twins under timed and the portfolio."""
    import warnings

    warnings.simplefilter("ignore")
    print(f"\n{title}: runs to first failure over {bases} base seeds (cap {cap}; '-' none found), median [each]")
    header = "".join(f"{strategy:>24}" for strategy in CLASS_STRATEGIES)
    print(f"{'example':<30}{header}{'default/best':>14}{'fixed (timed + portfolio)':>28}")
    for name in sorted(path.stem for path in folder.glob("*.py") if not path.stem.startswith("_")):
        example = importlib.import_module(name)
        cells, medians = [], {}
        for strategy in CLASS_STRATEGIES:
            found = [runs_to_first_failure(example.racy, strategy, base, cap) for base in range(bases)]
            median = statistics.median(runs if runs is not None else cap + 1 for runs in found)
            medians[strategy] = median
            shown = f">{cap}" if median > cap else f"{median:.0f}"
            cells.append(f"{shown} [{','.join('-' if runs is None else str(runs) for runs in found)}]")
        best = min(value for strategy, value in medians.items() if strategy != "portfolio")
        ratio = medians["portfolio"] / best
        false_alarms = [
            len(agentsim.explore(example.fixed, runs=fixed_runs, strategy=strategy, database=None, stop_on_first=False).failures)
            for strategy in ("timed", "portfolio")
        ]
        alarms = f"{false_alarms[0]} + {false_alarms[1]} / {fixed_runs} each"
        print(f"{name:<30}{''.join(f'{cell:>24}' for cell in cells)}{ratio:>13.2f}x{alarms:>28}")


def long_call_class_table(cap: int, bases: int) -> None:
    """The long-call races (30-minute calls, the coincidence in minute 27-29),
    each swept focused on its window under every strategy a focused sweep
    takes: runs to first failure (median over ``bases``), and the default's
    ratio to the best single one."""
    import importlib.util
    import warnings

    warnings.simplefilter("ignore")
    print(f"\nlong-call races, focused on their windows: runs to first failure over {bases} base seeds (cap {cap}), median [each]")
    print(f"{'example':<32}{''.join(f'{strategy:>24}' for strategy in FOCUSED_STRATEGIES)}{'default/best':>14}")
    for path in sorted(LONG_CALL_RACES.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"agentsim_class_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        example = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = example
        spec.loader.exec_module(example)
        window = (example.WINDOW_START, example.WINDOW_END)
        cells, medians = [], {}
        for strategy in FOCUSED_STRATEGIES:
            found = []
            for base in range(bases):
                report = agentsim.explore(example.racy, runs=cap, seed=base * 1000, strategy=strategy, focus=window, shrink_failures=False, database=None, stop_on_first=True, wall_timeout=600)
                found.append(report.runs_executed if report.failures else None)
            medians[strategy] = statistics.median(runs if runs is not None else cap + 1 for runs in found)
            shown = f">{cap}" if medians[strategy] > cap else f"{medians[strategy]:.0f}"
            cells.append(f"{shown} [{','.join('-' if runs is None else str(runs) for runs in found)}]")
        best = min(value for strategy, value in medians.items() if strategy != "portfolio")
        print(f"{path.stem:<32}{''.join(f'{cell:>24}' for cell in cells)}{medians['portfolio'] / best:>13.2f}x")


def exhaustive_table(folders: list[Path], cap: int) -> None:
    """Bounded-exhaustive exploration of every race example and its fixed
    twin: schedules (and wall time) to exhaust depth 1 and 2 — or, for the
    racy program, to its first failure — beside the default strategy's runs
    to first failure from seed 0."""
    import time
    import warnings

    warnings.simplefilter("ignore")
    print(f"\nexhaustive: schedules to exhaust depth 1 and 2 (racy: to the first failure), budget {cap} each; the default from seed 0")

    def exhaust(function: Any, depth: int) -> str:
        started = time.perf_counter()
        report = agentsim.explore(function, strategy="exhaustive", max_deviations=depth, runs=cap, database=None, shrink_failures=False)
        spent = time.perf_counter() - started
        how = "fails" if report.failures else "exhausted" if report.exhausted else "budget"
        return f"{report.runs_executed} {how} {spent:.2f}s"

    print(f"{'example':<30}{'racy d1':>24}{'racy d2':>24}{'fixed d1':>24}{'fixed d2':>24}{'default':>9}")
    for folder in folders:
        for name in sorted(path.stem for path in folder.glob("*.py") if not path.stem.startswith("_")):
            example = importlib.import_module(name)
            cells = [exhaust(example.racy, 1), exhaust(example.racy, 2), exhaust(example.fixed, 1), exhaust(example.fixed, 2)]
            default = runs_to_first_failure(example.racy, "portfolio", 0, cap)
            print(f"{name:<30}{''.join(f'{cell:>24}' for cell in cells)}{'-' if default is None else default:>9}")


async def trivial() -> None:
    """The smallest program worth sweeping: one sleep."""
    await asyncio.sleep(1.0)


def scale(runs: int) -> None:
    """Per-run fixed cost, and one sweep on 1 and 2 workers and a dask cluster."""
    import warnings

    warnings.simplefilter("ignore")

    async def nothing_to_wait_for() -> None:
        await asyncio.sleep(0)

    async def real_wait() -> None:
        await asyncio.sleep(0.001)

    def plain_rate(program: Any) -> float:
        started = time.perf_counter()
        for _ in range(runs):
            asyncio.run(program())
        return runs / (time.perf_counter() - started)

    plain = plain_rate(nothing_to_wait_for)
    waiting = plain_rate(real_wait)
    started = time.perf_counter()
    agentsim.explore(trivial, runs=runs, database=None, stop_on_first=False)
    swept = runs / (time.perf_counter() - started)
    print(f"\nper-run fixed cost: explore of a one-sleep program {1e6 / swept:,.0f} us/run ({swept:,.0f} runs/s);"
          f" plain asyncio.run of it with nothing to wait for (sleep(0)) {1e6 / plain:,.0f} us/run: x{plain / swept:.2f} its cost."
          f" Waiting skipped, apart: asyncio.run with a real 1 ms sleep {1e6 / waiting:,.0f} us/run (agentsim's virtual second: no wall time)")

    programs = {"trivial (one sleep)": trivial}
    for name in ("close_vs_inflight_tool", "timeout_vs_late_result"):
        programs[f"{name}.fixed ({KINDS.get(name, 'real SDK, realtime')})"] = importlib.import_module(name).fixed
    engines: dict[str, dict[str, Any]] = {"1 worker": {}, "2 workers": {"workers": 2}}
    cluster = client = None
    try:
        import distributed

        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        engines["dask LocalCluster, 2 workers"] = {"executor": client.get_executor()}
    except ImportError:
        print("(dask.distributed not installed: pip install -e '.[cluster]' to include it)")
    print(f"\nruns/s of one sweep ({runs} runs, no failure; process start-up included, workers warm from the 2nd sweep on)")
    print(f"{'program':<58}" + "".join(f"{engine:>32}" for engine in engines))
    try:
        for name, function in programs.items():
            cells = []
            base = None
            for engine, kwargs in engines.items():
                agentsim.explore(function, runs=8, database=None, stop_on_first=False, **kwargs)  # warm up
                started = time.perf_counter()
                report = agentsim.explore(function, runs=runs, database=None, stop_on_first=False, **kwargs)
                rate = report.runs_executed / (time.perf_counter() - started)
                base = base or rate
                cells.append(f"{rate:,.0f} (x{rate / base:.2f})")
            print(f"{name:<58}" + "".join(f"{cell:>32}" for cell in cells))
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def main() -> None:
    import warnings

    # Fixed twins with nothing left to explore say so; the table says it too.
    warnings.simplefilter("ignore", SingleScheduleWarning)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cap", type=int, default=200, help="runs per sweep before giving up")
    parser.add_argument("--seeds", type=int, default=20, help="base seeds per strategy")
    parser.add_argument("--quick", action="store_true", help="5 base seeds, 100-run sweeps")
    parser.add_argument("--window-cap", type=int, default=1000, help="runs per sweep for the narrow-window races")
    parser.add_argument("--fixed-runs", type=int, default=1000, help="runs of each fixed twin per strategy (random, pct)")
    parser.add_argument("--windows-only", action="store_true", help="only the narrow-window races")
    parser.add_argument("--classes-only", action="store_true", help="only the per-class tables (lateness, narrow windows, races, long calls focused) of every strategy")
    parser.add_argument("--long-calls-only", action="store_true", help="only the long-call class (focused sweeps of examples/long_calls)")
    parser.add_argument("--class-bases", type=int, default=5, help="base seeds per strategy in the per-class tables")
    parser.add_argument("--scale-only", action="store_true", help="only the per-run cost and the workers/cluster sweeps")
    parser.add_argument("--exhaustive-only", action="store_true", help="only the exhaustive table (depth 1 and 2 of every race example and twin)")
    parser.add_argument("--scale-runs", type=int, default=1000, help="runs of each workers/cluster sweep")
    options = parser.parse_args()
    if options.quick:
        options.cap, options.seeds = 100, 5
    if options.windows_only:
        window_races(options.window_cap, options.fixed_runs)
        return
    if options.classes_only:
        classes(options)
        return
    if options.long_calls_only:
        long_call_class_table(options.cap, options.class_bases)
        return
    if options.scale_only:
        scale(options.scale_runs)
        return
    if options.exhaustive_only:
        exhaustive_table([RACES, WINDOW_RACES, LATENESS_RACES], 5_000)
        return
    names = sorted(path.stem for path in RACES.glob("*.py") if not path.stem.startswith("_"))

    print(f"runs to first failure over {options.seeds} base seeds (cap {options.cap}); false alarms on the fixed twin")
    print(f"{'example':<30}{'strategy':<9}{'median':>8}{'max':>6}{'found':>8}{'false alarms':>14}")
    speeds = {}
    for name in names:
        example = importlib.import_module(name)
        for strategy in ("fifo", "jitter", "random", "pct"):
            found = [runs_to_first_failure(example.racy, strategy, base, options.cap) for base in range(options.seeds)]
            hits = [runs for runs in found if runs is not None]
            median = f"{statistics.median(hits):.0f}" if hits else "-"
            worst = f"{max(hits)}" if hits else "-"
            false_alarms = len(agentsim.explore(example.fixed, runs=options.cap, strategy=strategy, database=None).failures)
            print(f"{name:<30}{strategy:<9}{median:>8}{worst:>6}{len(hits):>5}/{options.seeds:<2}{false_alarms:>14}")
        speeds[name] = runs_per_second(example.fixed, options.cap * 2)

    print("\nruns per second on one core (fixed twin, random strategy)")
    for name, speed in speeds.items():
        kind = KINDS.get(name, "real SDK, realtime" if name in REALTIME_EXAMPLES else "asyncio")
        print(f"{name:<30}{speed:>8.0f} runs/s   ({kind})")

    runs = 800 if options.quick else 4000
    serial, parallel = xdist_scaling("close_vs_inflight_tool", runs)
    print(f"\npytest-xdist, {runs} runs of close_vs_inflight_tool.fixed in one test (process start-up included):")
    print(f"  serial {serial:.2f} s, 2 workers {parallel:.2f} s: x{serial / parallel:.2f}")
    window_races(options.window_cap, options.fixed_runs)
    classes(options)
    exhaustive_table([RACES, WINDOW_RACES, LATENESS_RACES], 5_000)
    scale(options.scale_runs)


def classes(options: argparse.Namespace) -> None:
    """The default strategy beside every single one, class by class."""
    fixed_runs = min(options.fixed_runs, 200)
    class_table("lateness races", LATENESS_RACES, options.cap, options.class_bases, fixed_runs)
    class_table("narrow-window races", WINDOW_RACES, options.cap, options.class_bases, fixed_runs)
    class_table("race examples", RACES, options.cap, options.class_bases, fixed_runs)
    long_call_class_table(options.cap, options.class_bases)


if __name__ == "__main__":
    main()
