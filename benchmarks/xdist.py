"""A user-style suite under ``pytest`` and ``pytest -n 2``, side by side.

A project of the kind the SDK's guide describes — pytest-asyncio in auto
mode, a ``[tool.agentsim]`` profile, parametrized ``@pytest.mark.agentsim``
tests over the race examples' fixed twins (real SDK sessions) — is written
to a temporary folder and run serially and with pytest-xdist, in one run,
each timed by wall clock (best of ``--repeat``), at several sweep sizes.
Printed per size: serial, ``-n 2`` as the plugin shards it (a test's runs
are split over workers only from ``SHARD_MIN_RUNS`` on), and ``-n 2`` with
every test split (``--agentsim-shards 2``, the former default), as ratios
to serial; and, apart, xdist's own start-up tax on the same project with no
marked test (a second interpreter importing pytest, the plugins and the
SDK), which no plugin can remove: ``-n 2`` pays once the sweeps outweigh it.

    python benchmarks/xdist.py [--runs 40,100,300] [--repeat 2]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_project(folder: Path, runs: int) -> None:
    """The project: the examples as the app's modules, one test file per
    example folder, a profile."""
    for kind in ("races", "windows"):
        (folder / kind).mkdir()
        (folder / kind / "__init__.py").write_text("")
        for example in sorted((ROOT / "examples" / kind).glob("*.py")):
            shutil.copy(example, folder / kind / example.name)
        names = sorted(path.stem for path in (ROOT / "examples" / kind).glob("*.py") if not path.stem.startswith("_"))
        (folder / f"test_{kind}.py").write_text(textwrap.dedent(f"""
            import importlib

            import pytest

            @pytest.mark.agentsim
            @pytest.mark.parametrize("name", {names!r})
            async def test_fixed_twin_holds(name):
                await importlib.import_module("{kind}." + name).fixed()
            """))
    (folder / "pyproject.toml").write_text(textwrap.dedent(f"""
        [tool.pytest.ini_options]
        asyncio_mode = "auto"
        asyncio_default_fixture_loop_scope = "function"
        addopts = "-p no:cacheprovider -p no:looptime_plugin -p no:looptime_chronometers -p no:looptime_timeproxies"
        filterwarnings = ["ignore::agentsim.explore.SingleScheduleWarning"]

        [tool.agentsim]
        runs = {runs}
        database = "none"
        """))


def wall(folder: Path, *options: str) -> float:
    started = time.perf_counter()
    finished = subprocess.run([sys.executable, "-m", "pytest", "-q", *options], cwd=folder, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    last = finished.stdout.strip().splitlines()[-1] if finished.stdout.strip() else finished.stderr[-300:]
    if finished.returncode != 0:
        raise SystemExit(f"pytest {' '.join(options)} failed:\n{finished.stdout[-3000:]}{finished.stderr[-2000:]}")
    print(f"  pytest {' '.join(options) or '(serial)':<8} {elapsed:6.2f} s   {last}")
    return elapsed


def xdist_tax(folder: Path, repeat: int) -> None:
    """The same project's imports with no marked test: what ``-n 2`` costs
    before any sweep."""
    for path in folder.glob("test_*.py"):
        path.write_text("import races.close_vs_inflight_tool  # the SDK, as the suite imports it\n\ndef test_nothing():\n    pass\n")
    serial = min(wall(folder) for _ in range(repeat))
    parallel = min(wall(folder, "-n", "2") for _ in range(repeat))
    print(f"xdist's own tax (no marked test): serial {serial:.2f} s, -n 2 {parallel:.2f} s (+{parallel - serial:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", default="40,100,300", help="runs per marked test (the profile's), comma-separated sizes")
    parser.add_argument("--repeat", type=int, default=2)
    options = parser.parse_args()
    rows = []
    for runs in (int(size) for size in options.runs.split(",")):
        with tempfile.TemporaryDirectory() as temporary:
            folder = Path(temporary)
            make_project(folder, runs)
            print(f"== a user-style suite: 12 parametrized marked tests (real SDK), {runs} runs each")
            serial = min(wall(folder) for _ in range(options.repeat))
            parallel = min(wall(folder, "-n", "2") for _ in range(options.repeat))
            split = min(wall(folder, "-n", "2", "--agentsim-shards", "2") for _ in range(options.repeat))
            rows.append((runs, serial, parallel, split))
            if runs == int(options.runs.split(",")[0]):
                xdist_tax(folder, options.repeat)
    print(f"\n{'runs/test':>9} {'serial':>8} {'-n 2':>8} {'ratio':>6} {'-n 2, all split':>16} {'ratio':>6}")
    for runs, serial, parallel, split in rows:
        print(f"{runs:>9} {serial:>7.2f}s {parallel:>7.2f}s {parallel / serial:>5.2f}x {split:>15.2f}s {split / serial:>5.2f}x")


if __name__ == "__main__":
    main()
