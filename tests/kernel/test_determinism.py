"""Determinism: one seed, one schedule - in this process and in others."""

from __future__ import annotations

import pytest

import json
import os
import subprocess
import sys
import textwrap

import agentsim

# A program whose order depends on things a real process leaves to chance:
# anyio delivers a cancel scope's cancellation by iterating a *set* of tasks
# (ordered by hash, i.e. by memory address), tasks tie at the same instants,
# windowed timers overlap (their order is a seeded choice), and everyone
# reads clocks and random ids.
PROGRAM = textwrap.dedent(
    """
    import json, sys, time, uuid, random
    import anyio
    import agentsim
    import agentsim.timing

    async def main():
        log = []

        async def worker(name, period):
            try:
                while True:
                    if name.endswith(("1", "4", "7")):
                        await agentsim.timing.sleep_between(period * 0.8, period * 1.3)
                    else:
                        await anyio.sleep(period)
                    log.append((name, agentsim.now()))
            finally:
                log.append((name, "cancelled", time.monotonic()))

        with anyio.move_on_after(1.0):
            async with anyio.create_task_group() as group:
                for i in range(8):
                    group.start_soon(worker, f"w{i}", 0.1 * (1 + i % 3))
        log.append(("ids", str(uuid.uuid4()), random.random(), time.time()))
        return log

    out = {}
    for backend in ("asyncio", "trio"):
        for strategy, seeds in (("fifo", [0]), ("jitter", [0, 1]), ("random", [0, 1, 2, 3]), ("pct", [0, 1])):
            for seed in seeds:
                result = agentsim.simulate(main, seed=seed, strategy=strategy, backend=backend)
                assert result.ok, result.exception
                out[f"{backend}/{strategy}/{seed}"] = [result.trace.digest(), repr(result.value)]
    json.dump(out, sys.stdout)
    """
)


def _run_in_fresh_process(hash_seed: str) -> dict[str, list[str]]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    completed = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


@pytest.mark.slow
def test_same_seed_same_digest_across_processes_and_hash_seeds() -> None:
    runs = [_run_in_fresh_process(hash_seed) for hash_seed in ("0", "1", "4242")]
    assert runs[0] == runs[1] == runs[2]
    # ...and the seeds really produced different schedules.
    random_digests = {digest for key, (digest, _) in runs[0].items() if "/random/" in key}
    assert len(random_digests) > 1


def test_seeded_ids_and_randomness_repeat_per_seed_and_differ_between_seeds() -> None:
    import random
    import uuid

    async def main() -> tuple[str, float]:
        return str(uuid.uuid4()), random.random()

    assert agentsim.run(main, seed=5) == agentsim.run(main, seed=5)
    assert agentsim.run(main, seed=5) != agentsim.run(main, seed=6)


def test_global_random_state_is_restored_after_a_simulation() -> None:
    import random

    random.seed(99)
    expected = random.Random(99).random()

    async def main() -> float:
        return random.random()

    agentsim.run(main)
    assert random.random() == expected


def test_trace_digest_is_stable_for_a_long_run_beyond_the_kept_window() -> None:
    async def main() -> None:
        for _ in range(30_000):
            await agentsim_sleep()

    async def agentsim_sleep() -> None:
        import asyncio

        await asyncio.sleep(0.001)

    first = agentsim.simulate(main)
    second = agentsim.simulate(main)
    assert first.trace.digest() == second.trace.digest()
    assert len(first.trace) > 30_000
    assert len(first.trace.events) <= 50_000
    assert first.trace.dropped == len(first.trace) - len(first.trace.events)


def _patch_targets() -> dict[str, object]:
    """Everything a simulation patches, as currently bound."""
    import socket
    import subprocess
    import threading
    import time
    import uuid

    import anyio.to_thread
    import trio.to_thread
    from anyio._backends import _asyncio as anyio_asyncio

    return {
        "time.time": time.time,
        "time.monotonic": time.monotonic,
        "time.perf_counter": time.perf_counter,
        "time.sleep": time.sleep,
        "uuid.uuid4": uuid.uuid4,
        "socket.socket.__init__": socket.socket.__init__,
        "socket.getaddrinfo": socket.getaddrinfo,
        "threading.Thread.start": threading.Thread.start,
        "subprocess.Popen.__init__": subprocess.Popen.__init__,
        "anyio.to_thread.run_sync": anyio.to_thread.run_sync,
        "trio.to_thread.run_sync": trio.to_thread.run_sync,
        "anyio CancelScope.__init__": anyio_asyncio.CancelScope.__init__,
    }


def test_every_patch_is_undone_after_the_simulation(backend: str) -> None:
    originals = _patch_targets()
    inside: dict[str, object] = {}

    async def main() -> None:
        inside.update(_patch_targets())

    agentsim.run(main, backend=backend)
    changed = {name for name in originals if inside[name] is not originals[name]}
    assert changed == set(originals)  # every one of them was patched inside...
    assert _patch_targets() == originals  # ...and restored after


@pytest.mark.slow
def test_importing_agentsim_or_running_asyncio_does_not_import_trio() -> None:
    # trio costs ~0.6 s to import: every pytest session with agentsim's
    # plugin installed, and every asyncio simulation, would pay it.
    program = textwrap.dedent(
        """
        import asyncio, sys
        import agentsim
        assert "trio" not in sys.modules, "import agentsim imported trio"
        async def main():
            await asyncio.sleep(1)
        agentsim.run(main)
        assert "trio" not in sys.modules, "an asyncio simulation imported trio"
        """
    )
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
