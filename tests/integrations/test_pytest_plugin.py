"""The pytest plugin, driven through pytest itself (pytester)."""

from __future__ import annotations

import re

import numpy  # noqa: F401 - loaded before pytester's in-process runs snapshot sys.modules (numpy loads once per process)
import pytest

pytest_plugins = ["pytester"]


from .pytester_setup import _inner_pytest_config  # noqa: F401 - an autouse fixture

RACE = '''
import asyncio
import pytest


class DoubleBooking(Exception):
    pass


async def book_last_seat(fixed):
    seats = {"left": 1}
    lock = asyncio.Lock()

    async def book(check_after):
        await asyncio.sleep(1.0)
        if check_after:
            await asyncio.sleep(check_after)
        if fixed:
            await lock.acquire()
        try:
            if seats["left"] > 0:
                await asyncio.sleep(0.05)
                seats["left"] -= 1
        finally:
            if fixed:
                lock.release()
        if seats["left"] < 0:
            raise DoubleBooking(f"seats left: {seats['left']}")

    await asyncio.gather(book(0.0), book(0.05))


@pytest.mark.agentsim(runs=60)
async def test_racy(sim):
    await book_last_seat(fixed=False)


@pytest.mark.agentsim(runs=60)
async def test_fixed(sim):
    await book_last_seat(fixed=True)
'''


def test_a_race_fails_with_seed_minimal_timeline_and_replay_command(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_booking=RACE)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    assert "DoubleBooking: seats left: -1" in output
    assert re.search(r"seed \d+ \(strategy 'portfolio'\) failed", output)  # the default
    assert "minimal schedule:" in output and ">>" in output
    command = re.search(r"replay: (pytest \S+ --agentsim-schedule=\S+)", output)
    assert command is not None
    assert command.group(1).startswith("pytest test_booking.py::test_racy --agentsim-schedule=")
    # The printed command replays the failure...
    schedule = command.group(1).split("=", 1)[1]
    replayed = pytester.runpytest("test_booking.py::test_racy", f"--agentsim-schedule={schedule}")
    replayed.assert_outcomes(failed=1)
    assert "DoubleBooking" in replayed.stdout.str()
    # ...and the failure database replays it first on the next run.
    rerun = pytester.runpytest("test_booking.py::test_racy")
    rerun.assert_outcomes(failed=1)
    assert (pytester.path / ".agentsim" / "failures").is_dir()


def test_replay_one_seed_and_strategy_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_booking=RACE)
    passing = pytester.runpytest("test_booking.py::test_racy", "--agentsim-seed=0", "--agentsim-strategy=fifo", "--agentsim-db=none")
    passing.assert_outcomes(passed=1)  # FIFO order does not show the race
    assert not (pytester.path / ".agentsim").exists()
    fifo = pytester.runpytest("test_booking.py", "--agentsim-strategy=fifo", "--agentsim-runs=5", "--agentsim-db=none")
    fifo.assert_outcomes(passed=2)


def test_sim_fixture_exposes_the_running_simulation(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import asyncio, pytest

        SEEN = []

        @pytest.mark.agentsim(runs=3, strategy="random", seed=10)
        async def test_sees(sim):
            assert sim.now == 0.0
            await asyncio.sleep(2.5)
            assert sim.now == 2.5
            SEEN.append((sim.seed, sim.strategy, sim.backend))
            assert len(sim.trace) > 0

        def test_after():
            assert [seed for seed, _, _ in SEEN] == [10, 11, 12]
            # Run 0 is the stock schedule with nominal timing.
            assert [(strategy, backend) for _, strategy, backend in SEEN] == [("fifo", "asyncio")] + [("random", "asyncio")] * 2
        """
    )
    pytester.runpytest("--agentsim-db=none").assert_outcomes(passed=2)


def test_check_determinism_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import asyncio, itertools, pytest

        LEAK = itertools.count()

        @pytest.mark.agentsim(runs=2)
        async def test_leaky():
            await asyncio.sleep(next(LEAK) * 0.1)
        """
    )
    result = pytester.runpytest("--agentsim-check-determinism", "--agentsim-db=none")
    result.assert_outcomes(failed=1)
    assert "is not deterministic" in result.stdout.str()


def test_works_with_anyio_and_pytest_trio_marks(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import anyio, pytest

        BACKENDS = []

        @pytest.fixture(params=["asyncio", "trio"])
        def anyio_backend(request):
            return request.param

        @pytest.mark.anyio
        @pytest.mark.agentsim(runs=2)
        async def test_anyio(sim):
            await anyio.sleep(1)
            assert sim.now == 1.0
            BACKENDS.append(("anyio", sim.backend))

        @pytest.mark.trio
        @pytest.mark.agentsim(runs=2)
        async def test_trio(sim):
            import trio
            await trio.sleep(3)
            assert trio.current_time() == 3.0
            BACKENDS.append(("trio-mark", sim.backend))

        def test_zz_backends():
            assert sorted(set(BACKENDS)) == [("anyio", "asyncio"), ("anyio", "trio"), ("trio-mark", "trio")]
        """
    )
    pytester.runpytest("--agentsim-db=none").assert_outcomes(passed=4)


def test_a_sync_test_with_the_mark_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.agentsim
        def test_sync():
            pass
        """
    )
    result = pytester.runpytest("--agentsim-db=none")
    assert "needs an `async def` test" in result.stdout.str() + result.stderr.str()


@pytest.mark.slow
def test_xdist_shards_split_the_seeds_of_one_test(pytester: pytest.Pytester) -> None:
    log = pytester.path / "seeds.log"
    pytester.makepyfile(
        test_seeds=f"""
        import os, pytest

        @pytest.mark.agentsim(runs=30, seed=100)
        async def test_record(sim):
            with open({str(log)!r}, "a") as file:
                file.write(f"{{os.getpid()}} {{sim.seed}}\\n")
        """
    )
    result = pytester.runpytest_subprocess("-n", "2", "--agentsim-db=none", "--agentsim-shards=2")
    result.assert_outcomes(passed=2)
    lines = [line.split() for line in log.read_text().splitlines()]
    seeds = [int(seed) for _, seed in lines]
    assert sorted(seeds) == list(range(100, 130))  # every seed once, none twice
    by_worker: dict[str, list[int]] = {}
    for pid, seed in lines:
        by_worker.setdefault(pid, []).append(int(seed))
    assert len(by_worker) == 2 and all(len(worker_seeds) == 15 for worker_seeds in by_worker.values())


@pytest.mark.slow
def test_xdist_shards_report_a_failure_once_and_a_serial_run_replays_it_first(pytester: pytest.Pytester) -> None:
    # Regression: failures were saved per shard (never replayed by a serial
    # run) and each shard reported the same race.
    pytester.makepyfile(test_booking=RACE)
    database = pytester.path / "db"
    serial = pytester.runpytest("test_booking.py::test_racy", "--agentsim-db=none")
    site = re.search(r"raised at (test_booking.py:\d+)", serial.stdout.str())
    assert site is not None, serial.stdout.str()
    sharded = pytester.runpytest_subprocess("test_booking.py", "-n", "2", f"--agentsim-db={database}", "-rs", "--agentsim-shards=2")
    output = sharded.stdout.str()
    outcomes = sharded.parseoutcomes()
    assert outcomes["failed"] == 1 and outcomes["passed"] >= 2  # one report of the race; test_fixed's shards pass
    assert len(re.findall(r"seed (\d+) \(strategy", output)) == 1
    assert f"raised at {site.group(1)}" in output  # the same failure the serial sweep finds
    if outcomes.get("skipped"):
        assert re.search(r"failed the same way \(DoubleBooking at .*\); test_booking.py::test_racy\[agentsim-shard\dof2\] reports it", output)
    again = pytester.runpytest("test_booking.py::test_racy", f"--agentsim-db={database}", "--agentsim-statistics")
    again.assert_outcomes(failed=1)
    assert re.search(r"  - 0 run\(s\), .*\n.*\n.*\n  - 1 failure\(s\), 0 shrink run\(s\), [12] replayed from the failure database first", again.stdout.str()), again.stdout.str()


def test_under_xdist_only_long_sweeps_are_split_over_workers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_sizes="""
        import pytest

        @pytest.mark.agentsim(runs=30)
        async def test_short():
            pass

        @pytest.mark.agentsim(runs=200)
        async def test_long():
            pass

        @pytest.mark.agentsim(runs=200, require=["started"])
        async def test_long_with_a_requirement():
            import agentsim
            agentsim.reached("started")
        """
    )
    result = pytester.runpytest_subprocess("-n", "2", "--agentsim-db=none", "-v", "-W", "ignore::agentsim.explore.SingleScheduleWarning")
    output = result.stdout.str()
    result.assert_outcomes(passed=4)  # test_short once, test_long in two shards, the required one whole
    assert "test_short PASSED" in output or "test_sizes.py::test_short" in output
    assert len(re.findall(r"test_long\[agentsim-shard\dof2\]", output)) >= 2
    assert "test_short[agentsim-shard" not in output
    # A required moment is judged over the whole sweep: that test is not split.
    assert "test_long_with_a_requirement[agentsim-shard" not in output


COUNTING = """
import asyncio, pytest

SEEN = []

@pytest.mark.agentsim{marker}
async def test_counts(sim):
    SEEN.append(sim.seed)
    await asyncio.sleep(0.1)

def test_after():
    print("RUNS", len(SEEN))
"""

PROFILES = """
[tool.agentsim]
runs = 3

[tool.agentsim.profiles.ci]
runs = 5
"""


def _runs(result: pytest.RunResult) -> int:
    match = re.search(r"RUNS (\d+)", result.stdout.str())
    assert match is not None, result.stdout.str()
    return int(match.group(1))


def test_settings_come_from_tool_agentsim_profiles_the_marker_and_the_command_line(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makefile(".toml", pyproject=PROFILES)
    pytester.makepyfile(test_counting=COUNTING.format(marker=""))
    assert _runs(pytester.runpytest("-s", "--agentsim-db=none")) == 3
    assert _runs(pytester.runpytest("-s", "--agentsim-db=none", "--agentsim-profile=ci")) == 5
    monkeypatch.setenv("AGENTSIM_PROFILE", "ci")
    assert _runs(pytester.runpytest("-s", "--agentsim-db=none")) == 5
    monkeypatch.delenv("AGENTSIM_PROFILE")
    assert _runs(pytester.runpytest("-s", "--agentsim-db=none", "--agentsim-runs=0")) == 0  # zero means zero
    pytester.makepyfile(test_counting=COUNTING.format(marker="(runs=2)"))
    assert _runs(pytester.runpytest("-s", "--agentsim-db=none", "--agentsim-profile=ci")) == 2  # the marker wins


def test_bad_marker_arguments_and_profiles_are_usage_errors(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", pyproject=PROFILES)
    pytester.makepyfile(test_counting=COUNTING.format(marker="(run=5)"))
    result = pytester.runpytest("--agentsim-db=none")
    output = result.stdout.str() + result.stderr.str()
    assert "@pytest.mark.agentsim on test_counting.py::test_counts: run" in output and "one of the settings" in output
    pytester.makepyfile(test_counting=COUNTING.format(marker="(5)"))
    result = pytester.runpytest("--agentsim-db=none")
    assert "takes keyword arguments only" in result.stdout.str() + result.stderr.str()
    pytester.makepyfile(test_counting=COUNTING.format(marker="(runs=-1)"))
    result = pytester.runpytest("--agentsim-db=none")
    assert "invalid runs=-1" in result.stdout.str() + result.stderr.str()
    pytester.makepyfile(test_counting=COUNTING.format(marker=""))
    result = pytester.runpytest("--agentsim-db=none", "--agentsim-profile=nightly")
    output = result.stdout.str() + result.stderr.str()
    assert "nightly" in output and "it has: ci" in output


def test_every_reported_seed_and_strategy_replays_exactly(pytester: pytest.Pytester) -> None:
    # PCT's parameters are measured per sweep; the report names them, so the
    # (seed, strategy) it prints replays the very run that failed.
    import agentsim

    from tests.explore.test_explore import booking_race

    report = agentsim.explore(booking_race, runs=100, strategy="pct", stop_on_first=False, shrink_failures=False, database=None)
    assert report.failures
    for failure in report.failures:
        replayed = agentsim.replay(booking_race, seed=failure.seed, strategy=failure.strategy)
        assert replayed.trace.digest() == failure.trace.digest(), failure.strategy
    pytester.makepyfile(test_booking=RACE)
    first = pytester.runpytest("--agentsim-db=none", "--agentsim-strategy=pct")
    match = re.search(r"seed (\d+) \(strategy '(pct/\d+/\d+)'\) failed", first.stdout.str())
    assert match is not None, first.stdout.str()
    again = pytester.runpytest("--agentsim-db=none", f"--agentsim-seed={match.group(1)}", f"--agentsim-strategy={match.group(2)}")
    again.assert_outcomes(failed=1, passed=1)  # test_racy fails again; test_fixed passes
    bad = pytester.runpytest("--agentsim-strategy=pct/x/1")
    assert "pct/DEPTH/STEPS" in bad.stderr.str()


@pytest.mark.slow
def test_skip_xfail_and_ctrl_c_are_not_failing_schedules(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_verdicts="""
        import asyncio, pytest

        @pytest.mark.agentsim(runs=5)
        async def test_skips():
            await asyncio.sleep(1)
            pytest.skip("no API key here")

        @pytest.mark.agentsim(runs=5)
        async def test_xfails():
            await asyncio.sleep(1)
            pytest.xfail("known bug #12")

        @pytest.mark.xfail(raises=AssertionError, strict=True)
        @pytest.mark.agentsim(runs=5)
        async def test_expected_to_fail():
            await asyncio.sleep(1)
            assert False
        """
    )
    database = pytester.path / "db"
    result = pytester.runpytest(f"--agentsim-db={database}", "-rsx")
    result.assert_outcomes(skipped=1, xfailed=2)
    assert "no API key here" in result.stdout.str()
    saved = list(database.rglob("*.json")) if database.exists() else []
    assert all("test_skips" not in path.read_text() and "test_xfails" not in path.read_text() for path in saved)

    pytester.makepyfile(
        test_interrupt="""
        import asyncio, pytest

        @pytest.mark.agentsim(runs=5)
        async def test_ctrl_c():
            await asyncio.sleep(1)
            raise KeyboardInterrupt

        def test_never_reached():
            pass
        """
    )
    result = pytester.runpytest_subprocess(f"--agentsim-db={database}", "test_interrupt.py")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "failed" not in result.stdout.str().splitlines()[-1]
    assert not any("test_ctrl_c" in path.read_text() for path in database.rglob("*.json"))


def test_fixtures_shared_across_runs_are_a_health_check(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_fixtures="""
        import asyncio, pytest

        @pytest.fixture
        def inbox():
            return []

        @pytest.fixture(scope="module")
        def config():
            return {"region": "eu"}

        @pytest.mark.agentsim(runs=5)
        async def test_leaky(inbox):
            inbox.append(1)
            await asyncio.sleep(1)
            assert inbox == [1]   # run 2 would see [1, 1]: a false race

        @pytest.mark.agentsim(runs=5)
        async def test_module_scoped_is_fine(config, sim):
            await asyncio.sleep(1)
            assert config["region"] == "eu"

        @pytest.mark.agentsim(runs=5, allow_shared_fixtures=True)
        async def test_allowed(inbox):
            await asyncio.sleep(1)
        """
    )
    result = pytester.runpytest("--agentsim-db=none")
    result.assert_outcomes(passed=2, failed=1)
    output = result.stdout.str()
    assert "FixtureHealthCheck" in output and "(fixtures: inbox)" in output and "allow_shared_fixtures=True" in output
    assert "seed" not in output.split("FixtureHealthCheck")[1].split("\n")[0]  # not reported as a failing schedule


def test_pytest_trio_async_fixtures_are_set_up_afresh_in_every_run(pytester: pytest.Pytester) -> None:
    # Regression: they reached the test as raw TrioFixture objects.
    pytester.makepyfile(
        test_trio_fixture="""
        import pytest, trio

        SET_UP, TORN_DOWN = [], []

        @pytest.fixture
        async def connection():
            await trio.sleep(0.5)                 # on the run's virtual clock
            SET_UP.append(trio.current_time())
            yield {"opened_at": trio.current_time(), "sent": []}
            TORN_DOWN.append(trio.current_time())

        @pytest.fixture
        async def session(connection):            # depends on another async fixture
            return {"connection": connection}

        @pytest.mark.trio
        @pytest.mark.agentsim(runs=4)
        async def test_uses_async_fixtures(connection, session, sim):
            assert session["connection"] is connection
            assert connection["opened_at"] == 0.5 and connection["sent"] == []   # fresh: no state from earlier runs
            connection["sent"].append("hello")
            await trio.sleep(1)
            assert sim.now == 1.5

        def test_each_run_set_up_and_tore_down_its_own():
            assert SET_UP == [0.5] * 4 and TORN_DOWN == [1.5] * 4

        @pytest.mark.trio
        @pytest.mark.agentsim(runs=2, backend="asyncio")
        async def test_on_asyncio(connection):
            pass
        """
    )
    result = pytester.runpytest("--agentsim-db=none", "-p", "trio")
    result.assert_outcomes(passed=2, failed=1)
    assert "pytest-trio async fixtures run on trio, and this test runs on asyncio" in result.stdout.str()
    assert "(fixtures: connection)" in result.stdout.str()


def test_statistics_report_each_sweep(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_booking=RACE)
    result = pytester.runpytest("--agentsim-db=none", "--agentsim-statistics")
    output = result.stdout.str()
    assert "agentsim statistics" in output
    assert re.search(r"test_booking.py::test_fixed:\n  - 60 run\(s\), [0-9.]+ ms per run", output), output
    assert re.search(r"choice points per run: \d+-\d+ \(mean [0-9.]+\)", output)
    assert re.search(r"test_racy:(?:\n.*){3}\n  - 1 failure\(s\), \d+ shrink run\(s\)", output), output
    quiet = pytester.runpytest("--agentsim-db=none")
    assert "agentsim statistics" not in quiet.stdout.str()


TWO_WINDOWS = '''
import asyncio
import pytest
import agentsim
from agentsim.timing import sleep_between


async def first_of_two():
    """A reply (0.400-0.505 s) and a barge-in (0.500-0.600 s): which ends first."""
    order = []

    async def end(name, low, high):
        await sleep_between(low, high)
        order.append(name)

    async def barge_in():
        await end("late", 0.500, 0.600)
        agentsim.sometimes(order == ["late"], "barge-in during the reply")

    await asyncio.gather(end("early", 0.400, 0.505), barge_in())
    return order[0]
'''

MARKED = TWO_WINDOWS + '''

@pytest.mark.agentsim(runs=30, require=["barge-in during the reply"])
async def test_reaches_it():
    await first_of_two()


@pytest.mark.agentsim(runs=30, require=["a disconnect during the guardrail"])
async def test_never_gets_there():
    await first_of_two()


@pytest.mark.agentsim(strategy="exhaustive", max_deviations=1)
async def test_one_rare_order_is_found():
    assert await first_of_two() == "early"


@pytest.mark.agentsim(strategy="exhaustive", max_deviations=2)
async def test_nothing_to_find():
    await first_of_two()
'''


def test_a_required_moment_never_reached_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_marked=MARKED)
    result = pytester.runpytest("-k", "reaches_it or never_gets_there")
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    assert "required moment(s) never reached in 30 run(s): 'a disconnect during the guardrail'" in output
    assert "test_never_gets_there" in output and "coverage (runs where each moment happened): 'barge-in during the reply'" in output


def test_the_marker_sweeps_exhaustively(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_marked=MARKED)
    result = pytester.runpytest("--agentsim-db=none", "-k", "rare_order or nothing_to_find")
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    assert "exhaustive search stopped at the first failure" in output and "test_one_rare_order_is_found" in output
    # The strategy from the command line, over the marker's.
    overridden = pytester.runpytest("--agentsim-db=none", "--agentsim-strategy=exhaustive", "-k", "nothing_to_find")
    overridden.assert_outcomes(passed=1)
