"""Instructions per timer wake-up, counted by callgrind: the kernel's work,
unmoved by other load on the machine.

Wall time on a shared machine moves by 5-25% between runs of the same code;
an instruction count does not. For each contender (the tuned minimal loop,
agentsim asyncio fifo, random and pct) this runs the ``2x`` shape of
``kernel.py`` — 2 tasks sleeping 20 ms in a loop — under
``valgrind --tool=callgrind`` at two lengths, and prints the difference per
wake-up, so start-up and imports are not counted; then each contender's
ratio to the floor (the floor's instructions over the contender's: the
same sense as ``kernel.py``'s speed ratios).

``PYTHONHASHSEED`` is fixed: string hashing otherwise moves the counts by
~1%. Instructions are not time (cache misses and vectorized C code are not
weighed), so this complements ``kernel.py``, it does not replace it: the
two agree on this shape within a few percent.

    python benchmarks/instructions.py [--sleeps 5000] [--tasks 2]

Needs valgrind on the PATH; each contender takes about a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

CONTENDERS = ("floor", "fifo", "random", "pct")


def program(tasks: int, sleeps: int) -> object:
    async def worker() -> None:
        for _ in range(sleeps):
            await asyncio.sleep(0.02)

    async def main() -> None:
        await asyncio.gather(*(worker() for _ in range(tasks)))

    return main


def run_one(contender: str, tasks: int, sleeps: int) -> None:
    """The program itself, in this (instrumented) process."""
    main = program(tasks, sleeps)
    if contender == "floor":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from minimal_loop import run_minimal

        run_minimal(main, tuned=True)  # type: ignore[arg-type]
    else:
        import agentsim

        agentsim.run(main, strategy=contender, seed=1, wall_timeout=None)  # type: ignore[arg-type]


def instructions(contender: str, tasks: int, sleeps: int) -> int:
    """Instructions callgrind counts for one whole run of ``contender``."""
    command = [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        sys.executable, __file__, "--run", contender, "--tasks", str(tasks), "--sleeps", str(sleeps),
    ]  # fmt: skip
    completed = subprocess.run(command, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected : (\d+)", completed.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in callgrind's output:\n{completed.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--sleeps", type=int, default=5000, help="sleeps per task in the shorter run (the longer has twice)")
    parser.add_argument("--run", choices=CONTENDERS, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.run:
        run_one(options.run, options.tasks, options.sleeps)
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: this benchmark counts instructions with callgrind (apt install valgrind)")
    wakeups = options.tasks * options.sleeps
    print(f"instructions per wake-up, {options.tasks} tasks: a run of {2 * options.sleeps:,} sleeps each less one of {options.sleeps:,}")
    per_wakeup = {}
    for contender in CONTENDERS:
        short = instructions(contender, options.tasks, options.sleeps)
        long = instructions(contender, options.tasks, 2 * options.sleeps)
        per_wakeup[contender] = (long - short) / wakeups
        name = "tuned minimal loop" if contender == "floor" else f"agentsim asyncio {contender}"
        print(f"{name:<26}{per_wakeup[contender]:>10,.0f}{per_wakeup['floor'] / per_wakeup[contender]:>9.2f}x", flush=True)


if __name__ == "__main__":
    main()
