"""A sweep installs the simulation's patches once for all its runs (not per
run), and removes them when it returns; between its runs, in its own
thread, code sees the real functions behind them."""

from __future__ import annotations

import _thread
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import agentsim
from agentsim.timing import sleep_between


async def one_sleep() -> float:
    await sleep_between(0.5, 1.5)  # (a window: the sweep has timings to explore)
    return time.monotonic()  # the virtual clock, inside a run


def test_a_sweep_holds_the_patches_across_its_runs_and_removes_them_after() -> None:
    original = time.monotonic
    between: list[tuple[bool, float]] = []

    def progress(done: int, total: int) -> None:
        # Between two runs: still installed (a dispatcher, not the original),
        # and it answers with the real clock, not a run's virtual one.
        between.append((time.monotonic is original, time.monotonic()))

    started = original()
    report = agentsim.explore(one_sleep, runs=6, database=None, progress=progress)
    assert report.ok and len(between) == 6
    assert not any(is_original for is_original, _ in between)
    assert all(reading >= started for _, reading in between)  # real, where a run's reads 1.0
    assert time.monotonic is original  # removed once the sweep returned
    assert agentsim.run(one_sleep) == 1.0 and time.monotonic is original


def test_between_runs_the_sweeps_thread_makes_real_locks_and_pools_work() -> None:
    # threading.Lock is patched while any simulation runs (a lock made in a
    # run raises instead of blocking the only thread); made outside a run it
    # is the real one, so a pool, its queue and its conditions work.
    kinds: list[type] = []
    answers: list[int] = []

    def progress(done: int, total: int) -> None:
        kinds.append(type(threading.Lock()))
        with ThreadPoolExecutor(max_workers=1) as pool:
            answers.append(pool.submit(pow, 2, done).result(timeout=30))

    agentsim.explore(one_sleep, runs=3, database=None, progress=progress)
    assert kinds == [_thread.LockType] * 3 and answers == [2, 4, 8]
