"""The pytest plugin: ``@pytest.mark.agentsim`` runs an async test under the explorer.

Installed with agentsim (entry point ``pytest11``), no conftest needed::

    @pytest.mark.agentsim(runs=100, strategy="pct")
    async def test_interrupt_race(sim):
        ...                                    # sim.now, sim.seed, sim.trace

A failure prints the seed, the minimal schedule as a short timeline, and the
command that replays it (``pytest path::test --agentsim-schedule=...``).

Options: ``--agentsim-runs``, ``--agentsim-seed`` (replay one seed),
``--agentsim-schedule`` (replay a reported schedule), ``--agentsim-strategy``,
``--agentsim-check-determinism``, ``--agentsim-db`` (failure database
directory, ``none`` to disable), ``--agentsim-shards`` (split each test's
runs; follows ``-n`` with pytest-xdist).

It composes with anyio's plugin (an ``anyio_backend`` parameter picks the
backend) and pytest-trio (a ``trio`` mark picks trio; its async fixtures are
set up afresh in every run). Other fixtures are set up once per test, not per
run: keep per-run state inside the test.
"""

from __future__ import annotations

import inspect
import os
import shlex
import time
import types
from dataclasses import dataclass
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from .._kernel.errors import AgentsimError, SimulationConfigError
from ..explore._options import parse_sweep_strategy
from .._kernel.view import SimulationView as SimulationView
from .pytest_shards import claim, database_key
from ..explore import explore, replay
from ..explore._database import DEFAULT_DIRECTORY
from ..explore import ExploreOptions
from ..explore._report import ExploreReport, format_replay
from ..explore._schedule import Schedule
from ..explore._shrink import origin

_SHARD_FIXTURE = "_agentsim_shard"
#: What a test raises to be skipped or xfailed: pytest's verdicts, not failing schedules.
_NOT_FAILURES: tuple[type[BaseException], ...] = (pytest.skip.Exception, pytest.xfail.Exception, KeyboardInterrupt, SystemExit)
DEFAULT_RUNS = 100
#: Under pytest-xdist a test's runs are split over workers only from this
#: many runs on (or with --agentsim-shards): below it, the split's fixed
#: cost per item (the nominal run, the database, a claim file) outweighs
#: it, and xdist already spreads the tests (benchmarks/xdist.py).
SHARD_MIN_RUNS = 200


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentsim", "agentsim: deterministic exploration of async races")
    group.addoption("--agentsim-runs", type=int, default=None, help="runs per @pytest.mark.agentsim test (default: the mark's, else 100)")
    group.addoption("--agentsim-seed", type=int, default=None, help="replay this one seed instead of exploring")
    group.addoption("--agentsim-schedule", default=None, help="replay this schedule (as printed in a failure report)")
    group.addoption(
        "--agentsim-strategy", default=None, type=parse_sweep_strategy,
        help="portfolio (the default), random, timed, pct, fifo, jitter, or pct/DEPTH/STEPS, portfolio/DEPTH/STEPS as a report prints it; exhaustive",
    )
    group.addoption("--agentsim-check-determinism", action="store_true", help="run every schedule twice and compare traces")
    group.addoption("--agentsim-db", default=None, help=f"failure database directory ('none' to disable; default: the profile's, else {DEFAULT_DIRECTORY})")
    group.addoption("--agentsim-shards", type=int, default=None, help="split each test's runs into N items (default: -n with xdist)")
    group.addoption("--agentsim-statistics", action="store_true", help="after the run, each marked test's runs, choice points, distinct orders, shrink runs and time per run")
    group.addoption("--agentsim-verbose", action="store_true", help="show the failing run's whole timeline in failure reports")
    group.addoption("--agentsim-profile", default=None, help="a profile of [tool.agentsim.profiles] in pyproject.toml (default: $AGENTSIM_PROFILE)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "agentsim(runs=None, strategy=None, backend=None, seed=0, max_virtual_time=None, wall_timeout=60.0): "
        "run this async test on agentsim's virtual clock under the explorer",
    )


@pytest.fixture
def sim() -> SimulationView:
    """The running simulation (``now``, ``seed``, ``strategy``, ``backend``, ``trace``)."""
    return SimulationView()


@pytest.fixture
def _agentsim_shard(request: pytest.FixtureRequest) -> tuple[int, int]:
    return request.param  # type: ignore[no-any-return]


def _shard_count(config: pytest.Config) -> int:
    shards = config.getoption("agentsim_shards")
    if shards is not None:
        return max(1, int(shards))
    worker_input = getattr(config, "workerinput", None)  # set by pytest-xdist on its workers
    if worker_input is not None:
        return max(1, int(worker_input.get("workercount", 1)))
    workers = config.getoption("numprocesses", default=None)
    if workers in ("auto", "logical"):
        return os.cpu_count() or 1
    return int(workers) if isinstance(workers, int) and workers > 1 else 1


def _planned_runs(metafunc: pytest.Metafunc) -> int:
    """How many runs the marked test will sweep (option, marker, profile)."""
    option = metafunc.config.getoption("agentsim_runs")
    if option is not None:
        return int(option)
    marker = metafunc.definition.get_closest_marker("agentsim")
    runs = marker.kwargs.get("runs") if marker is not None else None
    if isinstance(runs, int):
        return runs
    try:
        return _profile_options(metafunc.config).runs
    except SimulationConfigError:
        return DEFAULT_RUNS  # reported when the test runs


def _sweeps_whole(metafunc: pytest.Metafunc) -> bool:
    """Whether the marked test (marker or profile) is one sweep that no shard
    may split: it requires moments to be reached (judged over the whole
    sweep) or is focused (it branches from its own checkpoints, over every core)."""
    marker = metafunc.definition.get_closest_marker("agentsim")
    if marker is not None and (marker.kwargs.get("require") or marker.kwargs.get("focus") is not None):
        return True
    try:
        options = _profile_options(metafunc.config)
    except SimulationConfigError:
        return False
    return bool(options.require) or options.focus is not None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("agentsim") is None:
        return
    config = metafunc.config
    if config.getoption("agentsim_seed") is not None or config.getoption("agentsim_schedule"):
        return
    shards = _shard_count(config)
    if shards > 1 and config.getoption("agentsim_shards") is None and _planned_runs(metafunc) < SHARD_MIN_RUNS:
        shards = 1  # a short sweep: another item costs more than it saves (xdist spreads the tests anyway)
    if shards > 1 and _sweeps_whole(metafunc):
        shards = 1  # a required moment is judged over the whole sweep, a focus branches itself: one item runs it all
    if shards > 1:
        # One item per shard, so that xdist spreads one test's runs over workers.
        metafunc.fixturenames.append(_SHARD_FIXTURE)
        metafunc.parametrize(_SHARD_FIXTURE, [(k, shards) for k in range(shards)], ids=[f"agentsim-shard{k}of{shards}" for k in range(shards)], indirect=True)


@dataclass(frozen=True)
class _Statistics:
    """One marked test's sweep, for ``--agentsim-statistics``."""

    nodeid: str
    runs: int
    choice_points: tuple[int, ...]
    orders: int
    timings: int
    failures: int
    shrink_runs: int
    seconds: float
    replayed: int = 0

    @classmethod
    def of(cls, nodeid: str, report: ExploreReport, seconds: float) -> _Statistics:
        shrink_runs = sum(failure.minimal.shrink_runs for failure in report.failures if failure.minimal is not None)
        return cls(nodeid, report.runs_executed, tuple(report.choice_points), report.distinct_schedules, report.distinct_timings, len(report.failures), shrink_runs, seconds, report.replayed_from_database)

    def lines(self) -> list[str]:
        points = self.choice_points
        spread = f"{min(points)}-{max(points)} (mean {sum(points) / len(points):.1f})" if points else "-"
        per_run = f"{self.seconds / self.runs * 1000:.1f} ms" if self.runs else "-"
        return [
            f"{self.nodeid}:",
            f"  - {self.runs} run(s), {per_run} per run, {self.seconds:.2f} s in all",
            f"  - choice points per run: {spread}",
            f"  - {self.orders} distinct order(s), {self.timings} distinct timing(s)",
            f"  - {self.failures} failure(s), {self.shrink_runs} shrink run(s), {self.replayed} replayed from the failure database first",
        ]


def _statistics(config: pytest.Config) -> list[_Statistics]:
    collected: list[_Statistics] | None = getattr(config, "_agentsim_statistics", None)
    if collected is None:
        collected = []
        config._agentsim_statistics = collected  # type: ignore[attr-defined]
    return collected


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """``--agentsim-statistics``: each marked test's sweep, as hypothesis's statistics do."""
    if not config.getoption("agentsim_statistics"):
        return
    terminalreporter.section("agentsim statistics")
    for statistics in _statistics(config):
        for line in statistics.lines():
            terminalreporter.write_line(line)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Each marked test becomes a plain function that runs the explorer. Sync,
    # so anyio's runner passes it by; flagged as already wrapped, so
    # pytest-trio does not wrap it either (its mark still picks the backend).
    # pytest-asyncio turns async tests into items whose runtest() runs the
    # test on a real event loop (all of them in auto mode, those marked
    # @pytest.mark.asyncio in strict mode): a marked test runs as a plain
    # function instead, since the simulation brings its own loop.
    for item in items:
        if isinstance(item, pytest.Function) and item.get_closest_marker("agentsim") is not None:
            item.obj = _explorer_for(item, item.obj)
            if type(item).runtest is not pytest.Function.runtest and hasattr(type(item), "_synchronization_target_attr"):
                item.runtest = types.MethodType(pytest.Function.runtest, item)  # type: ignore[method-assign]


def _profile_options(config: pytest.Config) -> ExploreOptions:
    """``[tool.agentsim]`` of the project (with ``--agentsim-profile``), read once
    per session; a marked test's own settings go over it."""
    cached: ExploreOptions | None = getattr(config, "_agentsim_profile_options", None)
    if cached is None:
        from .config import find_pyproject, settings

        pyproject = find_pyproject(config.rootpath)
        table = settings(pyproject, config.getoption("agentsim_profile"))
        table.setdefault("runs", DEFAULT_RUNS)  # a test's sweep is shorter than explore()'s default
        cached = ExploreOptions.from_mapping(table, where=f"[tool.agentsim] of {pyproject}")
        config._agentsim_profile_options = cached  # type: ignore[attr-defined]
    return cached


def _backend(item: pytest.Function, marked: dict[str, Any]) -> str:
    if marked.get("backend"):
        return str(marked["backend"])
    anyio_backend: Any = item.funcargs.get("anyio_backend")
    if anyio_backend:
        return anyio_backend if isinstance(anyio_backend, str) else str(anyio_backend[0])
    if item.get_closest_marker("trio") is not None:
        return "trio"
    return "asyncio"


class AgentsimFailure(AgentsimError, AssertionError):
    """A schedule of an ``@pytest.mark.agentsim`` test failed. ``report`` has
    every failure; the message the seed, minimal timeline and replay command."""

    def __init__(self, message: str, report: ExploreReport | None = None) -> None:
        super().__init__(message)
        self.report = report


def _explorer_for(item: pytest.Function, function: Any) -> Any:
    def run_under_agentsim(**arguments: Any) -> None:
        __tracebackhide__ = True  # a failure shows the user's line and the report, not the plugin
        if not inspect.iscoroutinefunction(function):
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.agentsim needs an `async def` test")
        _run_marked_test(item, function, arguments)

    run_under_agentsim._trio_test_runner_wrapped = True  # type: ignore[attr-defined]
    return run_under_agentsim


class FixtureHealthCheck(AgentsimError):
    """A marked test takes a fixture that would be wrong in a sweep: a
    function-scoped fixture (set up once, shared by every run, so state left by
    one run leaks into the next and looks like a race), or a pytest-trio async
    fixture on a test that does not run on trio. ``fixtures`` names them; the
    message says what to do."""

    def __init__(self, where: str, fixtures: list[str], advice: str) -> None:
        self.fixtures = fixtures
        super().__init__(f"{where}: {advice} (fixtures: {', '.join(fixtures)})")


#: Function-scoped fixtures that hold no state a run could leave behind.
_STATELESS_FIXTURES = frozenset({"sim", "request", "anyio_backend"})


def _is_direct_parameter(item: pytest.Function, name: str) -> bool:
    """True for a ``@pytest.mark.parametrize`` argument that is a plain value,
    not an indirect fixture: pytest gives it a pseudo fixture definition of
    function scope, but it is the same value for every run, not shared state."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or name not in callspec.params:
        return False
    definitions = item._fixtureinfo.name2fixturedefs.get(name) or ()
    return all(getattr(definition.func, "__name__", "") == "get_direct_param_fixture_func" for definition in definitions)


def _is_trio_fixture(value: object) -> bool:
    return type(value).__name__ == "TrioFixture"


def _check_fixtures(item: pytest.Function, arguments: dict[str, Any], allow_shared: object, backend: str, where: str) -> None:
    """The health checks on a marked test's fixtures (see :class:`FixtureHealthCheck`)."""
    trio_fixtures = [name for name, value in arguments.items() if _is_trio_fixture(value)]
    if trio_fixtures and backend != "trio":
        raise FixtureHealthCheck(
            where, trio_fixtures,
            f"pytest-trio async fixtures run on trio, and this test runs on {backend}: "
            "mark it @pytest.mark.trio (or backend='trio'), or make the fixtures synchronous",
        )
    if allow_shared is True:
        return
    if allow_shared is not False:
        raise pytest.UsageError(f"{where}: allow_shared_fixtures={allow_shared!r}: expected True or False")
    definitions = item._fixtureinfo.name2fixturedefs
    shared = [
        name
        for name, value in arguments.items()
        # pytest-trio's fixtures are set up afresh in every run (_per_run_trio_fixtures).
        if name not in _STATELESS_FIXTURES and not name.startswith("_") and not _is_trio_fixture(value)
        and not _is_direct_parameter(item, name)
        and definitions.get(name) and definitions[name][-1].scope == "function"
    ]
    if shared:
        raise FixtureHealthCheck(
            where, shared,
            "function-scoped fixtures are set up once and shared by every run of the sweep, so state one run "
            "leaves behind leaks into the next and looks like a race. Create per-run state inside the test, "
            "widen the fixture's scope, or pass allow_shared_fixtures=True to the marker if they hold no state",
        )


def _per_run_trio_fixtures(item: pytest.Function, function: Any, arguments: dict[str, Any]) -> Callable[[], Awaitable[None]]:
    """The test body for a trio test with pytest-trio async fixtures: each run
    sets the fixtures up afresh inside the simulation (on its virtual clock)
    and tears them down after, as pytest-trio does around one test.

    pytest-trio's own bootstrap does the work: ``_trio_test_runner_factory``
    (with a test function it builds the coroutine that sets the fixtures up,
    runs the test and tears down; ``__wrapped__`` is that coroutine, before
    its ``trio.run``), and ``TrioFixture``'s ``name``, ``_func`` and
    ``_pytest_kwargs`` to make fresh fixture objects for each run (each holds
    one set-up's events and value).
    """
    from pytest_trio.plugin import _trio_test_runner_factory

    bootstrap = _trio_test_runner_factory(item, function).__wrapped__

    def fresh(value: Any, made: dict[int, Any]) -> Any:
        if not _is_trio_fixture(value):
            return value
        if id(value) not in made:  # one object per fixture, however many depend on it
            kwargs = {name: fresh(each, made) for name, each in value._pytest_kwargs.items()}
            made[id(value)] = type(value)(value.name, value._func, kwargs)
        return made[id(value)]

    async def test_body() -> None:
        made: dict[int, Any] = {}
        await bootstrap(**{name: fresh(value, made) for name, value in arguments.items()})

    return test_body


def _shell_word(text: str) -> str:
    """``text`` as one shell word: a node id with parameters (``test_x[0.3]``)
    must be quoted, or the shell expands the brackets."""
    if all(char.isalnum() or char in "/._-:=," for char in text):
        return text
    if not any(char in text for char in '"$`\\!'):
        return f'"{text}"'
    return shlex.quote(text)


def _expects_failure(item: pytest.Function) -> bool:
    """True when the test is marked xfail (with its condition true): its
    failures are expected, so none is kept in the failure database."""
    if item.get_closest_marker("xfail") is None:
        return False
    try:
        from _pytest.skipping import evaluate_xfail_marks
    except ImportError:  # pragma: no cover - pytest moved it: treat the mark as set
        return True
    return evaluate_xfail_marks(item) is not None


def _run_marked_test(item: pytest.Function, function: Any, arguments: dict[str, Any]) -> None:
    __tracebackhide__ = True
    marker = item.get_closest_marker("agentsim")
    assert marker is not None
    config = item.config
    where = f"@pytest.mark.agentsim on {item.nodeid}"
    if marker.args:
        raise pytest.UsageError(f"{where}: takes keyword arguments only ({', '.join(ExploreOptions.names())}); got {marker.args!r}")
    marked = dict(marker.kwargs)
    allow_shared = marked.pop("allow_shared_fixtures", False)
    try:
        profile = _profile_options(config)
        if "backend" not in marked:
            marked["backend"] = _backend(item, marked)
        settings = ExploreOptions.from_mapping(marked, where=where, base=profile)
    except SimulationConfigError as error:
        raise pytest.UsageError(str(error)) from None
    backend = settings.backend
    _check_fixtures(item, arguments, allow_shared, backend, where)

    if any(_is_trio_fixture(value) for value in arguments.values()):
        test_body = _per_run_trio_fixtures(item, function, arguments)
    else:
        async def test_body() -> None:
            __tracebackhide__ = True
            await function(**arguments)

    test_body.__qualname__ = function.__qualname__
    # The node id keeps the parametrize id (without the shard), so the line
    # replays this parameter only.
    base = _shell_word(database_key(item.nodeid))
    pinned = config.getoption("agentsim_schedule")
    seed_option = config.getoption("agentsim_seed")
    strategy = config.getoption("agentsim_strategy") or settings.strategy

    if pinned or seed_option is not None:
        schedule = Schedule.decode(pinned) if pinned else Schedule(seed_option, strategy if isinstance(strategy, str) else "random")
        result = replay(test_body, schedule=schedule, options=settings)
        if isinstance(result.exception, _NOT_FAILURES):
            raise result.exception
        if result.exception is not None:
            repro = f"pytest {base} --agentsim-schedule={schedule.encode()}"
            text = format_replay(schedule, result.exception, result.trace, repro, verbose=config.getoption("agentsim_verbose"))
            raise AgentsimFailure(text) from result.exception
        return

    runs_option = config.getoption("agentsim_runs")
    runs = runs_option if runs_option is not None else settings.runs
    seed = settings.seed
    seeds = None
    callspec = getattr(item, "callspec", None)
    shard = callspec.params.get(_SHARD_FIXTURE) if callspec is not None else None
    if shard is not None:
        index, count = shard
        seeds = range(seed + index, seed + runs, count)
    database = config.getoption("agentsim_db")
    if database is None:
        database = settings.database
    if _expects_failure(item):
        database = None  # an expected failure is no regression to replay first
    started = time.perf_counter()  # the plugin's own wall clock, outside any simulation
    sweep = settings.replace(
        runs=runs,
        strategy=strategy,
        check_determinism=config.getoption("agentsim_check_determinism") or settings.check_determinism,
        database=None if database is None or str(database).lower() == "none" else database,
    )
    report = explore(
        test_body,
        options=sweep,
        key=database_key(item.nodeid),
        seeds=seeds,
        repro=lambda schedule: f"pytest {base} --agentsim-schedule={schedule.encode()}",
        passthrough=_NOT_FAILURES,
    )
    _statistics(config).append(_Statistics.of(item.nodeid, report, time.perf_counter() - started))
    if not report.ok:
        if shard is not None and report.failures and not report.nondeterminism:
            failure = report.failures[0]
            kind, site = origin(failure.error)
            described = kind.__name__ + (f" at {site}" if site else "")
            reporter = claim(config, database_key(item.nodeid), described, item.nodeid)
            if reporter is not None:
                pytest.skip(f"seed {failure.seed} failed the same way ({described}); {reporter} reports it")
        cause = report.failures[0].exception if report.failures else None
        raise AgentsimFailure(report.format(verbose=config.getoption("agentsim_verbose")), report) from cause



# What tracebacks, reprs and pickles show: the public module name (see public_names.py).
from .._kernel.public_names import present_as  # noqa: E402

present_as("agentsim.pytest_plugin", globals())
