"""``focus`` from the pytest marker, a profile and the command line."""

from __future__ import annotations

import re
from pathlib import Path

import numpy  # noqa: F401 - loaded before pytester's in-process runs snapshot sys.modules (numpy loads once per process)
import pytest

from agentsim.cli import main

pytest_plugins = ["pytester"]

from .pytester_setup import _inner_pytest_config  # noqa: F401,E402 - an autouse fixture

PROGRAMS = Path(__file__).resolve().parents[1] / "explore" / "focus_programs.py"

MARKED = '''
import pytest
from focus_programs import racy, fixed, WINDOW

@pytest.mark.agentsim(runs=80, focus=WINDOW)
async def test_racy(sim):
    await racy()

@pytest.mark.agentsim(runs=30, focus="90:93.5")
async def test_fixed(sim):
    await fixed()
'''


def test_the_marker_takes_a_focus(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(focus_programs=PROGRAMS.read_text(), test_calls=MARKED)
    result = pytester.runpytest("--agentsim-db=none", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    assert "LostAnswer" in output and "branched at 90 s" in output
    schedule = re.search(r"--agentsim-schedule=(\S+)", output)
    assert schedule is not None
    replayed = pytester.runpytest("test_calls.py::test_racy", f"--agentsim-schedule={schedule.group(1)}", "--agentsim-db=none")
    replayed.assert_outcomes(failed=1)


def test_a_profile_takes_a_focus(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(focus_programs=PROGRAMS.read_text(), test_calls=MARKED.replace("runs=80, focus=WINDOW", "runs=80"))
    pytester.makepyprojecttoml('[tool.agentsim.profiles.late]\nfocus = [90, 93.5]\n')
    result = pytester.runpytest("test_calls.py::test_racy", "--agentsim-profile=late", "--agentsim-db=none")
    result.assert_outcomes(failed=1)
    assert "branched at 90 s" in result.stdout.str()


def test_the_command_line_takes_a_focus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", f"{PROGRAMS}::racy", "--runs", "80", "--focus", "90:93.5", "--db", "none", "--no-shrink"]) == 1
    output = capsys.readouterr().out
    assert "focus window 90-93.5 s" in output and "LostAnswer" in output
    assert main(["explore", f"{PROGRAMS}::fixed", "--runs", "10", "--focus", "90:3", "--db", "none"]) == 2
    assert "focus.window" in capsys.readouterr().err
