"""Every code block of README.md and docs/*.md runs as written.

- ```python blocks that define ``test_*`` functions run under pytest (the
  agentsim plugin loads from its entry point) and every test must pass;
  any other ```python block is executed as a script in a fresh namespace:
  its ``assert`` lines are its checks.
- ```bash lines that start with ``agentsim`` go through the command-line
  tool and must not be usage errors; the README's quick-start lines are the
  commands CI runs (the test command) and the demo (run here).
- ```toml blocks are ``[tool.agentsim]`` tables and must load, every profile.

Blocks run from a temporary directory (failure databases and traces land
there) with the repository root importable, as from a checkout. Blocks that
use ``agents.testing`` need openai-agents 0.21 and say so when skipped.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy  # noqa: F401 - loaded before pytester's in-process runs snapshot sys.modules (numpy loads once per process)
import pytest

try:
    # Likewise dask (docs/scale.md starts a LocalCluster): imported inside the
    # snapshot, its modules would be dropped after the block while the
    # process still holds their state (package metadata lookups then fail).
    import distributed  # noqa: F401
except ImportError:  # the cluster extra is not installed: the block says so when it runs
    pass

import agentsim
from agentsim import cli
from agentsim.config import load_options
from tests.conftest import SDK_HAS_TESTING

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)
NEEDS_SDK_TESTING = ("agents.testing", "agents.voice.testing", "agents.realtime.testing", "agentsim.voice", "agentsim.sandbox")


def _blocks(language: str) -> list[pytest.param]:
    found = []
    for document in DOCUMENTS:
        text = document.read_text()
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                line = text.count("\n", 0, match.start()) + 2
                found.append(pytest.param(document, match.group(2), id=f"{document.name}:{line}"))
    return found


def _skip_if_the_sdk_lacks_testing(code: str) -> None:
    if not SDK_HAS_TESTING and any(name in code for name in NEEDS_SDK_TESTING):
        pytest.skip("the block uses agents.testing: openai-agents >= 0.21")


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary working directory with the repository root importable."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    return tmp_path


def test_the_documents_have_code_blocks() -> None:
    assert len(_blocks("python")) >= 15 and _blocks("bash") and _blocks("toml")


@pytest.mark.parametrize(("document", "code"), _blocks("python"))
def test_python_block_runs(document: Path, code: str, checkout: Path, pytester: pytest.Pytester) -> None:
    _skip_if_the_sdk_lacks_testing(code)
    tests = re.findall(r"^(?:async )?def (test_\w+)", code, re.M)
    if tests:
        pytester.makeini("[pytest]\naddopts = -p no:looptime_plugin -p no:looptime_chronometers -p no:looptime_timeproxies\nasyncio_default_fixture_loop_scope = function\n")
        pytester.makepyfile(test_block=code)
        result = pytester.runpytest("--agentsim-db=none")
        result.assert_outcomes(passed=len(tests))
        return
    namespace = {"__name__": "__main__"}
    exec(compile(code, str(document), "exec"), namespace)  # raises if the block is wrong


@pytest.mark.parametrize(("document", "code"), _blocks("toml"))
def test_toml_block_loads_with_every_profile(document: Path, code: str, checkout: Path) -> None:
    (checkout / "pyproject.toml").write_text(code)
    profiles = tomllib.loads(code)["tool"]["agentsim"].get("profiles", {})
    base = load_options(start=checkout)
    for profile in profiles:
        options = load_options(profile, start=checkout)
        for key, value in profiles[profile].items():
            assert getattr(options, key) == value, (profile, key)
    assert isinstance(base, agentsim.ExploreOptions)


def _commands(code: str) -> list[list[str]]:
    return [shlex.split(line) for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize(("document", "code"), [p for p in _blocks("bash") if "agentsim " in p.values[1]])
def test_command_line_block_runs(document: Path, code: str, checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "examples", checkout / "examples")
    for command in _commands(code):
        assert command[0] == "agentsim", command
        status = cli.main(command[1:])
        # 0: passed; 1: a failure was found, which these lines are there to show.
        assert status in (0, 1), (command, status, capsys.readouterr().err)


def test_the_quick_start_is_what_ci_runs() -> None:
    quick_start = [command for param in _blocks("bash") if param.values[0].name == "README.md" for command in param.values[1].splitlines()]
    assert len(quick_start) == 2, quick_start
    ci = (ROOT / ".ci" / "run").read_text()
    assert quick_start[1] in ci.splitlines()  # the test command, verbatim
    assert quick_start[0].endswith(".venv/bin/python examples/explore_demo.py")


@pytest.mark.slow
def test_the_quick_start_main_job_runs() -> None:
    # The main job's script, with this interpreter (the venv step is CI's).
    done = subprocess.run([sys.executable, "examples/explore_demo.py"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "replayed the minimal schedule" in done.stdout and "0 failures" in done.stdout


@pytest.mark.slow
def test_the_wire_recipe_runs_in_a_fresh_process() -> None:
    # Regression: in a fresh process the openai client's first platform probe
    # (`uname -p`) was reported as a subprocess escape.
    text = (ROOT / "docs" / "doubles.md").read_text()
    code = re.search(r"## The wire\n.*?```python\n(.*?)```", text, re.S)
    assert code is not None, "docs/doubles.md lost its wire recipe"
    done = subprocess.run([sys.executable, "-c", code.group(1)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
