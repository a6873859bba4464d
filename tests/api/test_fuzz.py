"""Bad input to any public entry point gets a typed error (under
``agentsim.AgentsimError``) or works; never a bare ``TypeError``,
``ValueError``, ``AttributeError`` or ``IndexError`` from deep inside.

Hypothesis draws each argument from junk of every kind (wrong types, NaN,
infinities, negatives, empty and huge values); counts stay small so that a
valid draw runs quickly.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentsim
from agentsim import AgentsimError

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 30),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.5, 0.0, 0.25, 1e9]),
    st.floats(-10, 10),
    st.text(max_size=12),
    st.sampled_from(["fifo", "random", "pct", "jitter", "pct/2/10", "pct/0/3", "asyncio", "trio", "1", "abc"]),
    st.lists(st.integers(-2, 5), max_size=3),
    st.tuples(st.text(max_size=5)),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
SETTINGS = settings(max_examples=120, deadline=None, database=None, suppress_health_check=list(HealthCheck), derandomize=True)


async def _sleeps() -> float:
    await asyncio.sleep(0.5)
    return agentsim.now()


def _typed_or_fine(call: Callable[[], Any]) -> None:
    try:
        call()
    except AgentsimError:
        pass


@SETTINGS
@given(seed=JUNK, strategy=JUNK, backend=JUNK, max_virtual_time=JUNK, wall_timeout=JUNK, allow_escapes=JUNK)
def test_run_and_simulate(seed: Any, strategy: Any, backend: Any, max_virtual_time: Any, wall_timeout: Any, allow_escapes: Any) -> None:
    options = {"seed": seed, "strategy": strategy, "backend": backend, "max_virtual_time": max_virtual_time, "wall_timeout": wall_timeout, "allow_escapes": allow_escapes}
    _typed_or_fine(lambda: agentsim.simulate(_sleeps, **options))


@SETTINGS
@given(runs=JUNK, seed=JUNK, strategy=JUNK, pct_depth=JUNK, stop_on_first=JUNK, shrink_failures=JUNK, check_determinism=JUNK)
def test_explore(runs: Any, seed: Any, strategy: Any, pct_depth: Any, stop_on_first: Any, shrink_failures: Any, check_determinism: Any) -> None:
    options = {
        "runs": runs, "seed": seed, "strategy": strategy, "pct_depth": pct_depth, "stop_on_first": stop_on_first,
        "shrink_failures": shrink_failures, "check_determinism": check_determinism, "database": None,
    }
    with _no_warning_check():
        _typed_or_fine(lambda: agentsim.explore(_sleeps, **options))


@SETTINGS
@given(schedule=st.one_of(JUNK, st.from_regex(r"-?\d{0,3}:(fifo|jitter|random|pct)?[+/:]?[-\d=,/a-z.]{0,12}", fullmatch=True)), seed=JUNK, strategy=JUNK)
def test_replay_and_the_schedule_parser(schedule: Any, seed: Any, strategy: Any) -> None:
    _typed_or_fine(lambda: agentsim.replay(_sleeps, schedule=schedule))
    _typed_or_fine(lambda: agentsim.replay(_sleeps, seed=seed, strategy=strategy))
    _typed_or_fine(lambda: agentsim.Schedule.decode(schedule))


@SETTINGS
@given(a=JUNK, b=JUNK, c=JUNK)
def test_timing(a: Any, b: Any, c: Any) -> None:
    from agentsim import timing

    _typed_or_fine(lambda: timing.uniform(a, b))
    _typed_or_fine(lambda: timing.exponential(a, cap=b))
    _typed_or_fine(lambda: timing.lognormal(a, b, cap=c))
    _typed_or_fine(lambda: timing.DelaySource(a, name="latency", stream="fuzz").seconds(0))

    async def main() -> None:
        await timing.sleep_between(a, b)
        await timing.sleep(a)

    _typed_or_fine(lambda: agentsim.run(main))


@SETTINGS
@given(a=JUNK, b=JUNK, c=JUNK)
def test_realtime_doubles(a: Any, b: Any, c: Any) -> None:
    from agentsim.audio import SimulatedPlayer
    from agentsim.realtime import ScriptedRealtimeTransport
    from agentsim.realtime.server import CallTool, Reply, SimulatedRealtimeServer

    _typed_or_fine(lambda: Reply(a, b))
    _typed_or_fine(lambda: CallTool(a, b))
    _typed_or_fine(lambda: SimulatedRealtimeServer([Reply("hi")], latency=a, cancel_latency=b, audio_chunk_ms=c))
    _typed_or_fine(lambda: SimulatedRealtimeServer(a))
    _typed_or_fine(lambda: SimulatedPlayer(network_delay=a, jitter_buffer_ms=b))
    _typed_or_fine(lambda: ScriptedRealtimeTransport().fail_next_call(a, b))

    async def speaks() -> None:
        server = SimulatedRealtimeServer([Reply("hi")])
        server.user_speaks(a, at=b, seconds=c)
        await asyncio.sleep(60)  # no client connected: the speech is not heard, and ends

    _typed_or_fine(lambda: agentsim.run(speaks))


@SETTINGS
@given(a=JUNK, b=JUNK)
def test_models(a: Any, b: Any) -> None:
    from agentsim.models import TimedModel

    _typed_or_fine(lambda: TimedModel(a))
    _typed_or_fine(lambda: TimedModel(_model(), latency=a, first_token=b, event_interval=a))


def test_named_bad_inputs_are_refused_at_definition() -> None:
    # Regressions from the hardening probe: each was accepted and failed later, untyped.
    from agentsim.models import TimedModel
    from agentsim.realtime.server import Reply, SimulatedRealtimeServer

    with pytest.raises(agentsim.SimulationConfigError) as info:
        TimedModel("gpt")  # type: ignore[arg-type]
    assert info.value.parameter == "model"

    async def speaks() -> None:
        SimulatedRealtimeServer([Reply("hi")]).user_speaks("hi", at="abc")  # type: ignore[arg-type]

    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.run(speaks)
    assert info.value.parameter == "at"
    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.replay(_sleeps, schedule="3:pct/3")
    assert info.value.parameter == "schedule"
    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.explore(_sleeps, seed="1", database=None)  # type: ignore[arg-type]
    assert info.value.parameter == "seed"
    with pytest.raises(agentsim.SimulationConfigError) as info:
        agentsim.explore(_sleeps, strategy="pct", pct_depth=0, database=None)
    assert info.value.parameter == "pct_depth"


def _model() -> Any:
    from agents.models.interface import Model

    class Nothing(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    return Nothing()


class _no_warning_check:
    """Sweeps over nothing warn that one run is enough; that is fine here."""

    def __enter__(self) -> None:
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc_info: object) -> None:
        self._catch.__exit__(*exc_info)


@SETTINGS
@given(a=JUNK, b=JUNK)
def test_scripted_transport_inside_a_scenario(a: Any, b: Any) -> None:
    from agents.realtime import RealtimeAgent, RealtimeRunner

    from agentsim.realtime import ScriptedRealtimeTransport

    async def main() -> None:
        transport = ScriptedRealtimeTransport()
        runner = RealtimeRunner(RealtimeAgent(name="Assistant"), model=transport)

        async def scenario(ctx: Any) -> None:
            await ctx.expect_call("connect")
            await ctx.emit(a)
            await ctx.stream_audio(duration=b)

        async def exercise() -> None:
            async with await runner.run():
                await asyncio.sleep(1)

        await transport.run_scenario(scenario=scenario, exercise=exercise, timeout=5)

    _typed_or_fine(lambda: agentsim.run(main))


@SETTINGS
@given(a=JUNK, b=JUNK, c=JUNK)
def test_voice_doubles(a: Any, b: Any, c: Any) -> None:
    from tests.conftest import SDK_HAS_TESTING

    if not SDK_HAS_TESTING:
        return  # agentsim.voice raises SdkVersionError (tested in tests/kernel/test_validation.py)
    from agentsim.voice import SimulatedMicrophone, TimedTranscriptionSession, silence, speech

    _typed_or_fine(lambda: speech(a, text=b))
    _typed_or_fine(lambda: silence(a))
    _typed_or_fine(lambda: SimulatedMicrophone(a, sample_rate=b))
    _typed_or_fine(lambda: TimedTranscriptionSession.from_microphone(SimulatedMicrophone([speech(1.0, "hi")]), delay=a))


@SETTINGS
@given(settings_=st.dictionaries(st.sampled_from(["runs", "seed", "strategy", "backend", "pct_depth", "wall_timeout", "max_virtual_time", "database", "allow_escapes", "bogus"]), JUNK, max_size=4))
def test_explore_options_from_a_mapping(settings_: dict[str, Any]) -> None:
    _typed_or_fine(lambda: agentsim.ExploreOptions.from_mapping(settings_, where="[tool.agentsim]"))


# -- every public callable, constructor and method: junk in every parameter --------------------------
#
# The whole public surface is enumerated from each public package's __all__
# (so a new name is fuzzed without being listed here), and every parameter
# of each gets junk. Coroutine functions run inside a simulation. What may
# come out: a value, or an AgentsimError; for the few methods that are the
# SDK's own interfaces, the SDK's own typed errors (listed below, each with
# why). Anything else is an untyped crash and fails with its example.

import importlib
import inspect
import os
import pkgutil

SURFACE_JUNK = st.one_of(
    JUNK,
    st.sampled_from([1e300, 10**30, b"\x00\x01", "", "0:fifo"]),
    st.builds(object),
    st.just(lambda: None),
)
SURFACE_SETTINGS = settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck), derandomize=True)

#: Abstract bases and protocols: subclassed, never instantiated (Python's own TypeError).
ABSTRACT = {"agentsim.SchedulingPolicy", "agentsim.timing.Delay", "agentsim.scenario.RecordedCall"}


def _public_packages() -> list[str]:
    names = ["agentsim", *(f"agentsim.{module.name}" for module in pkgutil.iter_modules(agentsim.__path__) if not module.name.startswith("_"))]
    return [*names, "agentsim.realtime.server", "agentsim.contrib.openai_agents"]


def _public_callables() -> dict[str, Any]:
    found: dict[int, tuple[str, Any]] = {}
    for package in _public_packages():
        try:
            module = importlib.import_module(package)
        except ImportError:  # SdkVersionError on older releases (tested in tests/kernel/test_validation.py)
            continue
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if callable(value) and not (isinstance(value, type) and issubclass(value, BaseException)):
                found.setdefault(id(value), (f"{package}.{name}", value))
    return dict(found.values())


PUBLIC = _public_callables()


def _parameters(function: Any, skip_first: bool = False) -> list[inspect.Parameter]:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return []
    explicit = [p for p in parameters[1 if skip_first else 0 :] if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    # run/simulate/replay/explore take their options' fields as keywords too
    # (**settings): each field is a parameter to fuzz as well.
    options = next((p for p in explicit if p.name == "options"), None)
    if options is not None and any(p.kind == p.VAR_KEYWORD for p in parameters):
        cls = agentsim.ExploreOptions if "ExploreOptions" in str(options.annotation) else agentsim.RunOptions
        named = {p.name for p in explicit}
        explicit += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None) for name in cls.names() if name not in named]
    return explicit


def _arguments(parameters: list[inspect.Parameter]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {p.name: SURFACE_JUNK for p in parameters if p.default is p.empty},
        optional={p.name: SURFACE_JUNK for p in parameters if p.default is not p.empty},
    )


def _call(function: Any, parameters: list[inspect.Parameter], drawn: dict[str, Any]) -> Any:
    args = [drawn[p.name] for p in parameters if p.kind == p.POSITIONAL_ONLY and p.name in drawn]
    kwargs = {p.name: drawn[p.name] for p in parameters if p.kind != p.POSITIONAL_ONLY and p.name in drawn}
    if inspect.iscoroutinefunction(function):
        async def inside() -> Any:
            return await function(*args, **kwargs)

        return agentsim.run(inside, wall_timeout=10)
    result = function(*args, **kwargs)
    if inspect.iscoroutine(result):
        result.close()
    return result


def _untyped(error: BaseException, allowed: tuple[type[BaseException], ...] = ()) -> bool:
    return not isinstance(error, (AgentsimError, *allowed))


def test_the_surface_is_enumerated_whole() -> None:
    # A broken enumeration would fuzz nothing and pass: the surface is large.
    assert len(PUBLIC) >= 90, sorted(PUBLIC)
    assert {"max_virtual_time", "wall_timeout", "runs", "pct_depth"} <= {p.name for p in _parameters(agentsim.explore)}
    for name in ("agentsim.run", "agentsim.explore", "agentsim.realtime.server.SimulatedRealtimeServer", "agentsim.timing.sleep_between"):
        assert name in PUBLIC
    for name in ABSTRACT:
        target = PUBLIC[name]
        assert inspect.isabstract(target) or getattr(target, "_is_protocol", False), name


@pytest.mark.parametrize("name", sorted(set(PUBLIC) - ABSTRACT))
def test_every_public_callable_refuses_junk_with_a_typed_error(name: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # junk paths (timeline files, databases) land here
    function = PUBLIC[name]
    parameters = _parameters(function)

    @SURFACE_SETTINGS
    @given(_arguments(parameters))
    def fuzz(drawn: dict[str, Any]) -> None:
        with _no_warning_check():
            try:
                _call(function, parameters, drawn)
            except BaseException as error:  # noqa: BLE001 - judged below
                if isinstance(error, KeyboardInterrupt) or not _untyped(error):
                    return
                raise AssertionError(f"{name}({drawn!r}) raised untyped {type(error).__name__}: {error}") from error

    fuzz()


def _instances() -> dict[str, Callable[[], Any]]:
    """A valid instance of each public class with methods, made anew per call."""
    from agentsim import timing
    from agentsim.audio import SimulatedPlayer
    from agentsim.explore import FailureDatabase
    from agentsim.link import OrderedLink
    from agentsim.models import TimedModel
    from agentsim.realtime import ScriptedRealtimeTransport
    from agentsim.realtime.server import CallTool, Reply, SimulatedRealtimeServer

    made: dict[str, Callable[[], Any]] = {
        "SimulatedRealtimeServer": lambda: SimulatedRealtimeServer([Reply("hi", 1.0), CallTool("lookup", {})]),
        "ScriptedRealtimeTransport": ScriptedRealtimeTransport,
        "FailureDatabase": lambda: FailureDatabase("db"),
        "SimulatedPlayer": SimulatedPlayer,
        "DelaySource": lambda: timing.DelaySource(timing.uniform(0.1, 0.2), name="latency", stream="fuzz"),
        "Pacer": lambda: timing.Pacer(0.02, 1.0, name="pace"),
        "OrderedLink": lambda: OrderedLink(timing.DelaySource(0.1, name="latency", stream="fuzz")),
        "TimedModel": lambda: TimedModel(_model()),
        "Trace": lambda: agentsim.simulate(_sleeps).trace,
        "SimulationView": agentsim.SimulationView,
        "Schedule": lambda: agentsim.Schedule(3, "random"),
    }
    from tests.conftest import SDK_HAS_TESTING

    if SDK_HAS_TESTING:
        from agents.realtime.testing import ScriptedRealtimeModel

        from agentsim.realtime import TimedRealtimeModel
        from agentsim.voice import SimulatedMicrophone, silence, speech

        made["SimulatedMicrophone"] = lambda: SimulatedMicrophone([speech(1.0, "hi"), silence(0.5)])
        made["TimedRealtimeModel"] = lambda: TimedRealtimeModel(ScriptedRealtimeModel([]))
    return made


def _sdk_interface_errors() -> dict[str, tuple[type[BaseException], ...]]:
    """Methods that are the SDK's interfaces, and the typed errors they pass on."""
    import websockets.exceptions

    allowed: dict[str, tuple[type[BaseException], ...]] = {
        # The simulated endpoint refuses a bad handshake as a real one does:
        # the adapter sees websockets' own InvalidStatus / InvalidURI.
        "SimulatedRealtimeServer.connect": (websockets.exceptions.InvalidHandshake, websockets.exceptions.InvalidURI),
    }
    try:
        from agents.realtime.testing import RealtimeScriptError, UnexpectedRealtimeSend

        # The wrapper passes the wrapped SDK double's own typed errors through.
        allowed["TimedRealtimeModel.send_event"] = (RealtimeScriptError, UnexpectedRealtimeSend)
    except ImportError:
        pass
    return allowed


#: The SDK calls these with its own arguments (Model.get_response...), and
#: the kernel calls Trace's recorder on its hot path: not program input.
NOT_PROGRAM_INPUT = {"TimedModel.get_response", "TimedModel.stream_response", "Trace.record", "Trace.record_choice", "Trace.record_window_choice"}


def _methods() -> list[str]:
    names = []
    for owner, make in _instances().items():
        for method, _ in inspect.getmembers(type(make()), predicate=callable):
            qualified = f"{owner}.{method}"
            if not method.startswith("_") and qualified not in NOT_PROGRAM_INPUT:
                names.append(qualified)
    return sorted(names)


@pytest.mark.parametrize("qualified", _methods())
def test_every_public_method_refuses_junk_with_a_typed_error(qualified: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    owner, method = qualified.split(".")
    make = _instances()[owner]
    function = getattr(type(make()), method)
    is_class_method = isinstance(inspect.getattr_static(type(make()), method), classmethod)
    parameters = _parameters(function, skip_first=not is_class_method and not isinstance(inspect.getattr_static(type(make()), method), staticmethod))
    allowed = _sdk_interface_errors().get(qualified, ())

    @SURFACE_SETTINGS
    @given(_arguments(parameters))
    def fuzz(drawn: dict[str, Any]) -> None:
        args = [drawn[p.name] for p in parameters if p.kind == p.POSITIONAL_ONLY and p.name in drawn]
        kwargs = {p.name: drawn[p.name] for p in parameters if p.kind != p.POSITIONAL_ONLY and p.name in drawn}

        async def inside() -> None:
            result = getattr(make(), method)(*args, **kwargs)
            if inspect.isawaitable(result):
                await asyncio.wait_for(result, 5)  # type: ignore[arg-type]

        def outside() -> None:
            result = getattr(make(), method)(*args, **kwargs)
            if inspect.iscoroutine(result):
                result.close()

        for where, attempt in (("inside a simulation", lambda: agentsim.run(inside, wall_timeout=10)), ("outside", outside)):
            with _no_warning_check():
                try:
                    attempt()
                except (asyncio.TimeoutError, TimeoutError):
                    pass  # a wait that junk made long: not a crash
                except BaseException as error:  # noqa: BLE001 - judged below
                    if isinstance(error, KeyboardInterrupt) or not _untyped(error, allowed):
                        continue
                    raise AssertionError(f"{qualified}({drawn!r}) {where} raised untyped {type(error).__name__}: {error}") from error

    fuzz()


@SURFACE_SETTINGS
@given(argv=st.lists(st.one_of(st.sampled_from(["explore", "replay", "timeline", "--runs", "--seed", "--strategy", "--backend", "--schedule", "--db",
                                                "--export", "--workers", "--wall-timeout", "--max-virtual-time", "--profile", "--allow-escape",
                                                "--last", "--kinds", "target.py::main", "target.py", "nope.py::x", "-1", "0", "nan", "1e300", "pct/0/3",
                                                "1:pct", "trace.json", "none", "--version"]), st.text(max_size=6)), max_size=6))
def test_the_command_line_never_prints_a_traceback(argv: list[str], tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]) -> None:
    from agentsim.cli import main

    folder = tmp_path_factory.mktemp("cli")
    (folder / "target.py").write_text("import asyncio\n\nasync def main():\n    await asyncio.sleep(1)\n")
    (folder / "trace.json").write_text("{not json")
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        with _no_warning_check():
            code = main(argv)
    except SystemExit as exit:  # --help / --version print and exit as argparse does
        code = exit.code if isinstance(exit.code, int) else 2
    finally:
        os.chdir(cwd)
    captured = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code)
    assert "Traceback" not in captured.err + captured.out, (argv, captured.err[-800:])


def test_the_command_line_as_a_subprocess_exits_2_on_junk(tmp_path: Any) -> None:
    import subprocess
    import sys

    (tmp_path / "target.py").write_text("import asyncio\n\nasync def main():\n    await asyncio.sleep(1)\n")
    (tmp_path / "broken.py").write_text("async def main(:\n")
    (tmp_path / "junk.json").write_bytes(b"\x00\xff")
    for argv in (
        ["explore", "target.py::main", "--runs", "nan"],
        ["explore", "target.py::main", "--strategy", "1:pct"],
        ["replay", "target.py::main", "--schedule", "1:fifo+0=1,0=2"],
        ["explore", "broken.py::main"],
        ["timeline", "junk.json"],
        ["replay", "target.py::main", "--schedule", "0:fifo", "--wall-timeout", "1e300"],
        ["bogus-command"],
    ):
        finished = subprocess.run([sys.executable, "-m", "agentsim.cli", *argv], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert finished.returncode == 2, (argv, finished.returncode, finished.stderr[-500:])
        assert "Traceback" not in finished.stderr, (argv, finished.stderr[-800:])
