"""Timer wake-ups per second: agentsim's kernel beside the alternatives, in one run.

Shapes (from the kernel issue):
  * ``2x90000``: 2 tasks, each 90,000 sleeps of 20 ms (one simulated hour of
    20 ms audio frames in both directions);
  * ``100x1000``: 100 tasks, each 1,000 sleeps of 20 ms (wide fan-out, every
    wake-up a 100-way tie).

Contenders: agentsim asyncio (fifo, random, pct), agentsim trio (fifo,
random), the minimal virtual-time loop (``minimal_loop.py``) untuned and
tuned (the honest floor: the ratios are to it), trio's
``MockClock(autojump_threshold=0)``, and looptime if installed.

Then the cost of one wake-up when 10, 100, 1,000 and 10,000 tasks wake
together, per strategy and backend: measured as the difference between two
runs of different lengths, so spawning the tasks is not counted (flat is the
goal: a choice point must not cost more with more options). Waking thousands
of tasks in a random order costs more on any loop than in creation order
(their frames are no longer visited in the order they lie in memory): the
tuned loop waking them shuffled (``minimal_loop.ShuffledTunedLoop``) is
shown as that order's floor, beside the plain one; on trio, trio's own
MockClock with its deterministic-scheduling mode, which shuffles every batch.

Each contender runs ``--repeat`` times, the contenders taking turns; the best
time counts (least disturbed by other load on a shared machine). Results are
printed as wake-ups/s and as ratios to the minimal loop and to trio's
MockClock. Nothing is asserted: speed belongs here, not in the test suite.

    python benchmarks/kernel.py [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Hashable, TypeVar

import trio
import trio.testing

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agentsim  # noqa: E402
from minimal_loop import run_minimal  # noqa: E402

SLEEP = 0.02

#: What a benchmark's runs are named by (a contender, or a contender and a length).
Key = TypeVar("Key", bound=Hashable)


def asyncio_program(tasks: int, sleeps: int) -> Callable[[], object]:
    async def worker() -> None:
        for _ in range(sleeps):
            await asyncio.sleep(SLEEP)

    async def main() -> None:
        await asyncio.gather(*(worker() for _ in range(tasks)))

    return main


def trio_program(tasks: int, sleeps: int) -> Callable[[], object]:
    async def worker() -> None:
        for _ in range(sleeps):
            await trio.sleep(SLEEP)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(tasks):
                nursery.start_soon(worker)

    return main


def contenders(tasks: int, sleeps: int) -> dict[str, Callable[[], None]]:
    aio = asyncio_program(tasks, sleeps)
    tri = trio_program(tasks, sleeps)
    found: dict[str, Callable[[], None]] = {
        "agentsim asyncio fifo": lambda: agentsim.run(aio, wall_timeout=None),
        "agentsim asyncio random": lambda: agentsim.run(aio, strategy="random", seed=1, wall_timeout=None),
        "agentsim asyncio pct": lambda: agentsim.run(aio, strategy="pct", seed=1, wall_timeout=None),
        "agentsim trio fifo": lambda: agentsim.run(tri, backend="trio", wall_timeout=None),
        "agentsim trio random": lambda: agentsim.run(tri, backend="trio", strategy="random", seed=1, wall_timeout=None),
        "minimal loop": lambda: run_minimal(aio),  # type: ignore[arg-type]
        "tuned minimal loop": lambda: run_minimal(aio, tuned=True),  # type: ignore[arg-type]
        "trio MockClock": lambda: trio.run(tri, clock=trio.testing.MockClock(autojump_threshold=0)),
    }
    try:
        import looptime

        def run_looptime() -> None:
            loop = looptime.new_event_loop()
            try:
                loop.run_until_complete(aio())  # type: ignore[arg-type]
            finally:
                loop.close()

        found["looptime"] = run_looptime
    except ImportError:
        print("(looptime not installed: pip install -e '.[bench]' to include it)")
    return found


def best_of(fn: Callable[[], None], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def interleaved_best(runs: dict[Key, Callable[[], None]], repeat: int) -> dict[Key, float]:
    """Each run's best time over ``repeat`` rounds, every round running each
    once in turn: a burst of load on the shared machine then slows one round
    of every contender, not every repetition of one."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeat):
        for name, fn in runs.items():
            gc.collect()
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def trio_shuffled(main: Callable[[], object]) -> None:
    """``main`` on trio's MockClock, each batch of runnable tasks run in a
    seeded random order: trio's own deterministic-scheduling mode (the one
    pytest-trio turns on under Hypothesis), which sorts a batch and shuffles
    it with the module's ``_r``. The floor beside trio random, as the
    shuffled tuned loop is beside asyncio random."""
    import random

    import trio._core._run as trio_run

    saved = trio_run._ALLOW_DETERMINISTIC_SCHEDULING, trio_run._r
    trio_run._ALLOW_DETERMINISTIC_SCHEDULING, trio_run._r = True, random.Random(1)
    try:
        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))  # type: ignore[arg-type]
    finally:
        trio_run._ALLOW_DETERMINISTIC_SCHEDULING, trio_run._r = saved


def _width_contender(backend: str, strategy: str, main: Callable[[], object]) -> Callable[[], None]:
    """One run of ``main`` by one contender of the width table."""
    if backend == "asyncio" and strategy == "floor":
        return lambda: run_minimal(main, tuned=True)  # type: ignore[arg-type]
    if backend == "asyncio" and strategy == "shuffled floor":
        return lambda: run_minimal(main, shuffled=True)  # type: ignore[arg-type]
    if strategy == "shuffled floor":
        return lambda: trio_shuffled(main)
    if strategy == "floor":
        return lambda: trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))  # type: ignore[arg-type]
    return lambda: agentsim.run(main, backend=backend, strategy=strategy, seed=1, wall_timeout=None)  # type: ignore[arg-type]


def wakeup_cost_by_width(repeat: int, wakeups: int) -> None:
    """Microseconds per wake-up when ``width`` tasks wake at every instant.

    At each width every contender of a backend runs in turn, each round
    (``interleaved_best``), so a burst of load on the machine slows a round
    of all of them rather than one contender's whole row: the rows' growth
    from 10 to 10,000 tasks is then compared on equal terms."""
    widths = (10, 100, 1_000, 10_000)
    strategies = ("floor", "shuffled floor", "fifo", "random", "pct")
    floors = {"asyncio": "tuned minimal loop", "trio": "trio MockClock"}
    shuffled = {"asyncio": "tuned loop, shuffled", "trio": "trio Mock, shuffled"}
    print(f"\n== cost of one wake-up (us) when N tasks wake together (~{wakeups:,} wake-ups per run, spawning excluded)")
    print(f"{'backend/strategy':<26}" + "".join(f"{f'N={width:,}':>11}" for width in widths) + f"{'10k / 10':>10}")
    for backend in ("asyncio", "trio"):
        program = asyncio_program if backend == "asyncio" else trio_program
        costs: dict[str, list[float]] = {strategy: [] for strategy in strategies}
        for width in widths:
            rounds = max(4, wakeups // width)
            # Two lengths of each: the difference is the wake-ups alone.
            runs: dict[tuple[str, int], Callable[[], None]] = {}
            for strategy in strategies:
                runs[(strategy, 1)] = _width_contender(backend, strategy, program(width, rounds))
                runs[(strategy, 2)] = _width_contender(backend, strategy, program(width, 2 * rounds))
            best = interleaved_best(runs, repeat)
            for strategy in strategies:
                costs[strategy].append((best[(strategy, 2)] - best[(strategy, 1)]) / (width * rounds) * 1e6)
        for strategy in strategies:
            row = costs[strategy]
            name = floors[backend] if strategy == "floor" else shuffled[backend] if strategy == "shuffled floor" else f"{backend} {strategy}"
            print(f"{name:<26}" + "".join(f"{cost:>11.1f}" for cost in row) + f"{row[-1] / row[0]:>9.2f}x")


def per_run_cost(runs: int) -> None:
    """The fixed cost of one simulation: a trivial program (one sleep) run
    many times, beside plain ``asyncio.run`` of the same program with nothing
    to wait for (``sleep(0)``: the floor of running it at all). The waiting
    agentsim skips is stated apart: ``asyncio.run`` with a real 1 ms sleep
    (agentsim sleeps a virtual second in no wall time)."""

    async def trivial(seconds: float) -> None:
        await asyncio.sleep(seconds)

    contenders = {
        "asyncio.run (sleep(0): no wait)": lambda: asyncio.run(trivial(0)),
        "agentsim.run fifo": lambda: agentsim.run(trivial, 1.0),
        "agentsim.run random": lambda: agentsim.run(trivial, 1.0, strategy="random"),
        "asyncio.run (1 ms real sleep)": lambda: asyncio.run(trivial(0.001)),
    }
    print(f"\n== per-run fixed cost: {runs} runs of a one-sleep program, beside asyncio.run of it with nothing to wait for")
    rates = {}
    for name, fn in contenders.items():
        fn()
        started = time.perf_counter()
        for _ in range(runs):
            fn()
        rates[name] = runs / (time.perf_counter() - started)
    floor = rates["asyncio.run (sleep(0): no wait)"]
    for name, rate in rates.items():
        if not name.endswith("real sleep)"):
            print(f"{name:<32}{rate:>10,.0f} runs/s{1e6 / rate:>8,.0f} us/run{floor / rate:>8.2f}x the floor's cost")
    real = rates["asyncio.run (1 ms real sleep)"]
    print(f"waiting skipped (apart): asyncio.run with a real 1 ms sleep costs {1e6 / real:,.0f} us/run; "
          f"agentsim's virtual second costs no wall time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one tenth of the sleeps")
    options = parser.parse_args()
    scale = 10 if options.quick else 1
    shapes = {"2x90000": (2, 90_000 // scale), "100x1000": (100, 1_000 // scale)}
    for shape, (tasks, sleeps) in shapes.items():
        wakeups = tasks * sleeps
        print(f"\n== {shape}: {tasks} tasks x {sleeps} sleeps of {SLEEP * 1000:.0f} ms = {wakeups:,} wake-ups")
        rates = {name: wakeups / seconds for name, seconds in interleaved_best(contenders(tasks, sleeps), options.repeat).items()}
        floor = rates["tuned minimal loop"]
        mock = rates["trio MockClock"]
        print(f"{'contender':<26}{'wake-ups/s':>12}{'vs tuned floor':>16}{'vs trio Mock':>14}")
        for name, rate in rates.items():
            print(f"{name:<26}{rate:>12,.0f}{rate / floor:>15.2f}x{rate / mock:>13.2f}x")
    wakeup_cost_by_width(min(options.repeat, 2), 10_000 if options.quick else 30_000)
    per_run_cost(200 if options.quick else 2000)


if __name__ == "__main__":
    main()
