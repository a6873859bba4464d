"""The benchmarks import together, with ``benchmarks/`` first on ``sys.path``:
none of them shadows an example it measures (``long_call`` is both)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_benchmark_imports_beside_the_others_and_long_call_finds_the_example() -> None:
    names = sorted(path.stem for path in (ROOT / "benchmarks").glob("*.py"))
    program = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n"
        f"modules = [__import__(name) for name in {names!r}]\n"
        "import long_call\n"
        "example = long_call.example()\n"
        "assert example is not long_call and callable(example.long_call), example\n"
        "assert example.__file__.endswith('examples/long_call.py'), example.__file__\n"
        "print('ok', len(modules))\n"
    )
    finished = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert finished.stdout.strip() == f"ok {len(names)}", finished.stderr
