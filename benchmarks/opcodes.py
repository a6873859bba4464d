"""Python opcodes per wire frame of the long call, beside the timed floor's:
the server path's cost, unmoved by other load on the machine.

On the simulated-server path the wall-time ratio to the timed floor tracks
the ratio of Python opcodes, not of instructions: the floor's work is
mostly the SDK's C and Rust code, and cachegrind shows the simulation's
extra cycles in branch mispredicts (the interpreter's dispatch, one per
opcode) and cache misses, which scale with opcodes (docs/realtime-server.md).
So this counts opcodes with a tracer (``f_trace_opcodes``), for the
simulation of ``examples/long_call.py`` and for the timed floor of
``long_call.py`` replaying the same frames at their instants, each at two
lengths, and divides the difference by the difference in frames (start-up,
imports and the script's set-up cancel out). Then, per source file, what
the simulation runs above the floor.

    python benchmarks/opcodes.py [--minutes 2] [--strategy fifo]

Tracing is slow (~20 s per simulated minute); the counts repeat exactly.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"


def _long_call_benchmark() -> Any:
    """benchmarks/long_call.py (examples/long_call.py has the same module name)."""
    spec = importlib.util.spec_from_file_location("long_call_benchmark", HERE / "long_call.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _file_key(filename: str) -> str:
    for marker, prefix in (("src/agentsim/", "agentsim/"), ("site-packages/agents/", "agents/")):
        if marker in filename:
            return prefix + filename.split(marker)[-1]
    return Path(filename).name


def count_opcodes(run: Any) -> collections.Counter[str]:
    """Opcodes ``run()`` executes, by source file."""
    counts: collections.Counter[str] = collections.Counter()

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        if event == "opcode":
            counts[_file_key(frame.f_code.co_filename)] += 1
        return tracer

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return counts


def simulation(minutes: float, strategy: str, *, traced: bool = True) -> tuple[collections.Counter[str], int]:
    long_call = _long_call_benchmark().example()

    import agentsim

    summary: list[Any] = []
    run = lambda: summary.append(agentsim.run(long_call.long_call, minutes, False, seed=0, strategy=strategy, wall_timeout=None))  # noqa: E731
    if not traced:
        run()
        return collections.Counter(), summary[0].wire_events
    return count_opcodes(run), summary[0].wire_events


def timed_floor(frames_path: str) -> tuple[collections.Counter[str], int]:
    """The timed floor of long_call.py on the frames it recorded, traced."""
    from minimal_loop import run_minimal

    benchmark = _long_call_benchmark()
    recorded = json.loads(Path(frames_path).read_text())
    run = lambda: run_minimal(lambda: benchmark.sdk_floor(recorded, timed=True), tuned=True)  # noqa: E731
    return count_opcodes(run), len(recorded["frames"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=2.0, help="the shorter call (the longer is twice as long)")
    parser.add_argument("--strategy", default="fifo")
    parser.add_argument("--run", nargs=2, metavar=("WHAT", "ARG"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    sys.path.insert(0, str(HERE))
    if options.run:
        # One measurement in a fresh process, after the same run untraced (the
        # SDK builds pydantic schemas on first use of each kind of event: a
        # one-off only the longer run met would not cancel out).
        what, arg = options.run
        if what == "floor":
            timed_floor(arg)
            counts, frames = timed_floor(arg)
        else:
            minutes, strategy = arg.split(",")
            simulation(float(minutes), strategy, traced=False)
            counts, frames = simulation(float(minutes), strategy)
        print(json.dumps({"frames": frames, "counts": counts}))
        return

    def measure(what: str, arg: str) -> tuple[collections.Counter[str], int]:
        out = subprocess.run([sys.executable, __file__, "--run", what, arg], capture_output=True, text=True, check=True).stdout
        found = json.loads(out.strip().splitlines()[-1])
        return collections.Counter(found["counts"]), found["frames"]

    benchmark = HERE / "long_call.py"
    lengths = (options.minutes, 2 * options.minutes)
    per_frame: dict[str, collections.Counter[str]] = {}
    with tempfile.TemporaryDirectory() as directory:
        runs: dict[str, list[tuple[collections.Counter[str], int]]] = {"simulation": [], "timed floor": []}
        for minutes in lengths:
            frames_path = str(Path(directory) / f"frames-{minutes:g}.json")
            subprocess.run([sys.executable, str(benchmark), "--case", f"{minutes:g},0,fifo,", "--record", frames_path], capture_output=True, check=True)
            runs["simulation"].append(measure("simulation", f"{minutes:g},{options.strategy}"))
            runs["timed floor"].append(measure("floor", frames_path))
    for name, ((short, short_frames), (long, long_frames)) in runs.items():
        frames = long_frames - short_frames
        per_frame[name] = collections.Counter({key: (long[key] - short[key]) / frames for key in long.keys() | short.keys()})
    simulated, floor = (sum(per_frame[name].values()) for name in ("simulation", "timed floor"))
    print(f"Python opcodes per wire frame, {lengths[1]:g}-minute call less a {lengths[0]:g}-minute one ({options.strategy}; the floor's frames recorded under fifo)")
    print(f"{'simulation':<44}{simulated:>10,.0f}{simulated / floor:>9.2f}x")
    print(f"{'timed floor':<44}{floor:>10,.0f}{1:>9.2f}x")
    print("\nabove the floor, by file (opcodes per frame)")
    above = {key: per_frame["simulation"][key] - per_frame["timed floor"][key] for key in per_frame["simulation"].keys() | per_frame["timed floor"].keys()}
    for key, value in sorted(above.items(), key=lambda item: -item[1])[:15]:
        print(f"{key:<44}{value:>10,.0f}")


if __name__ == "__main__":
    main()
