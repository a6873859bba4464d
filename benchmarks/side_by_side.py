"""One benchmark script, run against two source trees taking turns, as ratios.

Answers "did this change slow anything down?" in one run: the script runs
under the working tree's ``src`` and under another tree's (e.g. a worktree of
the previous commit), alternately, ``--rounds`` times each; every number of
every table is kept at its best (rates: highest; costs in microseconds:
lowest) and printed side by side with ``new / old`` as a speed ratio
(above 1: the working tree is faster). Nothing is asserted.

    git worktree add /tmp/previous HEAD~1
    python benchmarks/side_by_side.py --against /tmp/previous/src kernel.py --quick
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NUMBER = re.compile(r"^-?[\d,]+(\.\d+)?$")


def run(script: str, arguments: list[str], source: Path) -> str:
    environment = dict(os.environ, PYTHONPATH=str(source))
    done = subprocess.run([sys.executable, str(HERE / script), *arguments], env=environment, capture_output=True, text=True, check=True)
    return done.stdout


def tables(output: str) -> dict[tuple[str, str, int], tuple[float, bool]]:
    """Every measured number of every table: (section, row, column) ->
    (value, lower is better). A row is named by its leading words; its first
    number is its measure (a rate, or a wall time: lower is better), except
    in a cost table (``(us)``), whose numbers are all costs but its last ratio."""
    numbers: dict[tuple[str, str, int], tuple[float, bool]] = {}
    section, lower_is_better = "", False
    for line in output.splitlines():
        if line.startswith("=="):
            section = line.strip("= ").split(":")[0]
            lower_is_better = "(us)" in section
            continue
        if "wall s" in line or "wake-ups/s" in line:
            lower_is_better = "wall s" in line  # a header: what its rows measure
            continue
        cells = re.split(r"\s{2,}", line.strip())
        first = next((index for index, cell in enumerate(cells) if NUMBER.match(cell.rstrip("x"))), None)
        if first is None or first == 0 or cells[0].startswith(("tuned", "minimal", "trio Mock")):
            continue
        row = " ".join(cells[:first])
        values = cells[first:-1] if "(us)" in section else cells[first : first + 1]
        for column, cell in enumerate(values):
            if NUMBER.match(cell):
                numbers[(section, row, column)] = (float(cell.replace(",", "")), lower_is_better)
    return numbers


def best(runs: list[dict[tuple[str, str, int], tuple[float, bool]]]) -> dict[tuple[str, str, int], tuple[float, bool]]:
    kept: dict[tuple[str, str, int], tuple[float, bool]] = {}
    for numbers in runs:
        for key, (value, lower) in numbers.items():
            if key not in kept or (value < kept[key][0] if lower else value > kept[key][0]):
                kept[key] = (value, lower)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, required=True, help="the other tree's src folder")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("script", help="a script of benchmarks/, e.g. kernel.py")
    parser.add_argument("arguments", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    ours = HERE.parent / "src"
    old_runs, new_runs = [], []
    for _ in range(options.rounds):
        old_runs.append(tables(run(options.script, options.arguments, options.against)))
        new_runs.append(tables(run(options.script, options.arguments, ours)))
    old, new = best(old_runs), best(new_runs)
    print(f"{options.script} {' '.join(options.arguments)}: {options.against} (old) vs {ours} (new), best of {options.rounds} each, taking turns")
    print(f"{'section':<28} {'row':<26} {'col':>3} {'old':>12} {'new':>12}  speed new/old")
    for key in sorted(new, key=list(new).index):
        if key not in old:
            continue
        (value, lower), (before, _) = new[key], old[key]
        ratio = (before / value if lower else value / before) if value and before else float("nan")
        section, row, column = key
        print(f"{section[:28]:<28} {row[:26]:<26} {column:>3} {before:>12,.1f} {value:>12,.1f}  {ratio:.2f}x")


if __name__ == "__main__":
    main()
