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
