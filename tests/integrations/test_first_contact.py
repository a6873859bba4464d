"""What a real suite meets first under the marker: parametrize, focused
failure output, expected failures, leaked tasks (issue: first contact)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy  # noqa: F401 - loaded before pytester's in-process runs snapshot sys.modules
import pytest

pytest_plugins = ["pytester"]


from .pytester_setup import _inner_pytest_config  # noqa: F401 - an autouse fixture


# The app under test: a reply against a 200 ms deadline the app arms itself.
# The reply's latency window reaches past the deadline for latency 0.3 only.
APP = '''
import asyncio
from agentsim.timing import sleep_between


async def answer_or_apologise(latency):
    said = []

    async def reply():
        await sleep_between(0.05, latency)
        said.append("answer")

    async def deadline():
        await asyncio.sleep(0.2)
        said.append("sorry, one moment")

    async with asyncio.TaskGroup() as group:
        group.create_task(reply())
        group.create_task(deadline())
    return said
'''

PARAMETRIZED = '''
import pytest

from app import answer_or_apologise


@pytest.fixture
def shared_log():
    return []


@pytest.mark.agentsim(runs=40)
@pytest.mark.parametrize("latency", [0.15, 0.3])
async def test_reply_beats_timeout(latency):
    said = await answer_or_apologise(latency)
    assert said[0] == "answer"


@pytest.mark.agentsim(runs=5)
@pytest.mark.parametrize("n", [1])
async def test_real_fixture_still_checked(n, shared_log):
    shared_log.append(n)
'''


def test_parametrized_tests_sweep_per_parameter_and_the_health_check_stays_on(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(app=APP, test_params=PARAMETRIZED)
    result = pytester.runpytest("-p", "no:cacheprovider", "--agentsim-db=none")
    output = result.stdout.str()
    # The 0.15 parameter cannot lose the race, the 0.3 one can: each swept on its own.
    assert "test_reply_beats_timeout[0.15] PASSED" in pytester.runpytest("-v", "--agentsim-db=none", "-k", "0.15").stdout.str()
    assert re.search(r"FAILED test_params.py::test_reply_beats_timeout\[0.3\]", output)
    # A real function-scoped fixture is still a health check, with the parameter beside it.
    assert "FixtureHealthCheck" in output and "(fixtures: shared_log)" in output
    assert "fixtures: n," not in output and "fixtures: latency" not in output


def test_the_replay_line_keeps_the_parameter_id_and_replays_in_a_fresh_process(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(app=APP, test_params=PARAMETRIZED)
    output = pytester.runpytest("--agentsim-db=none", "-k", "reply").stdout.str()
    command = re.search(r'replay: pytest "(test_params.py::test_reply_beats_timeout\[0.3\])" --agentsim-schedule=(\S+)', output)
    assert command is not None, output
    node, schedule = command.groups()
    # A fresh interpreter, as the user pastes the line: only that parameter runs, and fails.
    replayed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:looptime_plugin", node, f"--agentsim-schedule={schedule}"],
        cwd=pytester.path, capture_output=True, text=True, timeout=120,
    )
    assert "1 failed" in replayed.stdout and "passed" not in replayed.stdout.splitlines()[-1], replayed.stdout
    assert "AssertionError" in replayed.stdout


def test_failure_output_shows_the_users_line_first_and_no_plugin_source(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(app=APP, test_params=PARAMETRIZED)
    output = pytester.runpytest("--agentsim-db=none", "-k", "reply").stdout.str()
    assert "pytest_plugin.py" not in output and "_run_marked_test" not in output and "def run_under_agentsim" not in output
    user_line = output.index(">       assert said[0] == \"answer\"")
    report = output.index("AgentsimFailure:")
    assert user_line < report
    # The plugin's own source is not printed: the failure section is short.
    section = output[output.index("test_reply_beats_timeout[0.3] _"): output.index("short test summary")]
    assert len(section.splitlines()) < 60, section


def test_a_replayed_failure_prints_the_focused_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(app=APP, test_params=PARAMETRIZED)
    output = pytester.runpytest("--agentsim-db=none", "-k", "reply").stdout.str()
    schedule = re.search(r"--agentsim-schedule=(\S+)", output).group(1)  # type: ignore[union-attr]
    replayed = pytester.runpytest("test_params.py::test_reply_beats_timeout[0.3]", f"--agentsim-schedule={schedule}").stdout.str()
    # The deviation that decides the race is shown ('>>'), with the failure and the replay line.
    assert re.search(r">>.*choice.*deadline", replayed), replayed
    assert "!!" in replayed and f"--agentsim-schedule={schedule}" in replayed
    assert "spawn   main" in replayed


NOT_A_RACE = '''
import asyncio
import pytest

@pytest.mark.agentsim(runs=10)
async def test_always_wrong():
    await asyncio.sleep(1)
    assert 1 + 1 == 3
'''


def test_a_failure_in_stock_order_is_called_not_a_scheduling_race(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain=NOT_A_RACE)
    output = pytester.runpytest("--agentsim-db=none").stdout.str()
    assert "not a scheduling race" in output
    replayed = pytester.runpytest("--agentsim-schedule=0:fifo").stdout.str()
    assert "not a scheduling race" in replayed


RACY = '''
import pytest

from app import answer_or_apologise


@pytest.mark.agentsim(runs=40)
async def test_racy():
    assert (await answer_or_apologise(0.3))[0] == "answer"
'''


def test_a_failure_replayed_from_the_database_says_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(app=APP, test_racy=RACY)
    pytester.runpytest().assert_outcomes(failed=1)
    output = pytester.runpytest().stdout.str()
    assert "0 run(s)" in output
    assert "saved by an earlier sweep" in output and "replayed first from the failure database" in output


def test_an_xfail_test_saves_nothing_in_the_database(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(app=APP, test_racy=RACY.replace("@pytest.mark.agentsim(runs=40)", "@pytest.mark.xfail(reason='known race')\n@pytest.mark.agentsim(runs=40)"))
    pytester.runpytest().assert_outcomes(xfailed=1)
    saved = [path for path in (pytester.path / ".agentsim").rglob("*") if path.is_file()] if (pytester.path / ".agentsim").exists() else []
    assert saved == []
    # Without the mark the same failure is kept (the check above can fail).
    pytester.makepyfile(app=APP, test_racy=RACY)
    pytester.runpytest().assert_outcomes(failed=1)
    assert any(path.is_file() for path in (pytester.path / ".agentsim").rglob("*"))


LEAKY = '''
import asyncio
import pytest

@pytest.mark.agentsim(runs=3)
async def test_leaks():
    asyncio.get_running_loop().create_task(asyncio.sleep(100))
    await asyncio.sleep(1)
'''


def test_a_leaked_task_fails_under_error_leftover_warnings(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_leaky=LEAKY)
    # (The outer suite turns the warning into an error: the inner run sets it back.)
    lenient = pytester.runpytest("--agentsim-db=none", "-W", "default::agentsim.LeftoverTasksWarning", "-W", "ignore::agentsim.explore.SingleScheduleWarning")
    lenient.assert_outcomes(passed=1, warnings=1)
    assert "LeftoverTasksWarning" in lenient.stdout.str()
    strict = pytester.runpytest("--agentsim-db=none", "-W", "error::agentsim.LeftoverTasksWarning")
    strict.assert_outcomes(failed=1)
    assert "LeftoverTasksWarning" in strict.stdout.str() and "test_leaks" in strict.stdout.str()


USER_PROJECT_PYPROJECT = """
[tool.pytest.ini_options]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
addopts = "-p no:cacheprovider -p no:looptime_plugin -p no:looptime_chronometers -p no:looptime_timeproxies"

[tool.agentsim]
runs = 30

[tool.agentsim.profiles.ci]
runs = 60
"""

USER_PROJECT_TEST = '''
import pytest

from app import answer_or_apologise


@pytest.mark.agentsim
@pytest.mark.parametrize("latency", [0.15, 0.3])
async def test_the_answer_comes_first(latency):
    said = await answer_or_apologise(latency)
    assert said[0] == "answer"


async def test_plain_pytest_asyncio_tests_still_run():
    assert (await answer_or_apologise(0.1))[0] == "answer"
'''


@pytest.mark.slow
def test_a_user_style_project_finds_reports_and_replays_a_planted_race(tmp_path: Path) -> None:
    """pytest-asyncio in auto mode, a profile, parametrize, xdist: the race is
    found for the racy parameter only, reported once with the user's line
    first and no agentsim source, and its replay line (with the parameter id)
    fails again in a fresh process."""
    (tmp_path / "pyproject.toml").write_text(USER_PROJECT_PYPROJECT)
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "test_app.py").write_text(USER_PROJECT_TEST)
    environment = {**os.environ, "AGENTSIM_PROFILE": "ci"}
    swept = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=environment)
    output = swept.stdout
    assert "1 failed, 2 passed" in output, output[-3000:]
    # One report (the short summary line may repeat the exception's name, as wide as the terminal allows).
    assert len(re.findall(r"^E\s+agentsim\.pytest_plugin\.AgentsimFailure:", output, re.MULTILINE)) == 1, output[-3000:]
    assert "test_the_answer_comes_first[0.3]" in output
    assert "pytest_plugin.py" not in output and "_kernel" not in output and "site-packages/agentsim" not in output
    assert output.index('>       assert said[0] == "answer"') < output.index("AgentsimFailure:")  # the user's line first
    command = re.search(r'replay: pytest "(test_app.py::test_the_answer_comes_first\[0.3\])" --agentsim-schedule=(\S+)', output)
    assert command is not None, output[-3000:]
    replayed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", command.group(1), f"--agentsim-schedule={command.group(2)}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=environment,
    )
    assert "1 failed" in replayed.stdout and "[0.15]" not in replayed.stdout, replayed.stdout[-2000:]
