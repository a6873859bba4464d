"""The plugin inside a suite that also uses pytest-asyncio, as the SDK's
testing guide does: auto and strict mode, with and without the asyncio mark,
async fixtures, and the guide's recipes verbatim under the agentsim marker."""

from __future__ import annotations

import pytest

from tests.conftest import SDK_HAS_TESTING, needs_sdk_testing

# Imported here, before pytester's in-process runs snapshot sys.modules: the
# inner sessions import these recipes (and numpy, which loads once per process).
if SDK_HAS_TESTING:
    from tests.contrib.test_seed002_recipes import RECIPES

pytest_plugins = ["pytester"]

ADDOPTS = "-p no:looptime_plugin -p no:looptime_chronometers -p no:looptime_timeproxies"

SUITE = '''
import asyncio
import pytest
import pytest_asyncio

SEEN = []


@pytest_asyncio.fixture
async def greeting():
    await asyncio.sleep(0)
    return "hello"


@pytest.mark.agentsim(runs=3)
async def test_marked(sim):
    await asyncio.sleep(1.0)
    SEEN.append(("marked", sim.now))


@pytest.mark.asyncio
@pytest.mark.agentsim(runs=3, allow_shared_fixtures=True)  # a str: nothing for a run to leave behind
async def test_marked_and_asyncio(sim, greeting):
    assert greeting == "hello"  # an async fixture arrives as its value
    await asyncio.sleep(2.0)
    SEEN.append(("both", sim.now))


@pytest.mark.asyncio
async def test_plain_pytest_asyncio():
    # Not marked for agentsim: pytest-asyncio runs it on a real loop, as before.
    loop = asyncio.get_running_loop()
    assert type(loop).__name__ != "VirtualEventLoop"
    SEEN.append(("plain", None))


def test_after():
    assert sorted(SEEN, key=str) == sorted([("marked", 1.0)] * 3 + [("both", 2.0)] * 3 + [("plain", None)], key=str)
'''


@pytest.mark.parametrize("mode", ["auto", "strict"])
def test_marked_tests_run_on_the_virtual_clock_beside_pytest_asyncio(pytester: pytest.Pytester, mode: str) -> None:
    pytester.makeini(f"[pytest]\naddopts = {ADDOPTS}\nasyncio_mode = {mode}\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "asyncio", "--agentsim-db=none", "-p", "no:randomly")
    result.assert_outcomes(passed=4)


ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]

GUIDE_RECIPES = """
import sys
sys.path.insert(0, {root!r})
import pytest
from tests.contrib.test_seed002_recipes import RECIPES

{tests}
"""

ONE_RECIPE = """
@pytest.mark.asyncio
@pytest.mark.agentsim(runs=3)
async def test_{name}():
    await RECIPES[{name!r}]()
"""


def _guide_suite() -> tuple[str, int]:
    tests = "\n".join(ONE_RECIPE.format(name=name) for name in RECIPES)
    return GUIDE_RECIPES.format(root=str(ROOT), tests=tests), len(RECIPES)


@needs_sdk_testing
@pytest.mark.parametrize("mode", ["auto", "strict"])
def test_the_sdk_guides_recipes_verbatim_under_the_agentsim_marker(pytester: pytest.Pytester, mode: str) -> None:
    pytester.makeini(f"[pytest]\naddopts = {ADDOPTS}\nasyncio_mode = {mode}\nasyncio_default_fixture_loop_scope = function\n")
    # Each recipe of the SDK's testing guide (tests/contrib/test_seed002_recipes.py)
    # as the guide writes it, with @pytest.mark.asyncio, plus the agentsim marker.
    source, count = _guide_suite()
    pytester.makepyfile(test_guide=source)
    result = pytester.runpytest("-p", "asyncio", "--agentsim-db=none")
    result.assert_outcomes(passed=count)
