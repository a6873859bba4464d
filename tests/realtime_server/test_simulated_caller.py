"""``SimulatedCaller``: a long call on the real adapter, reported; and the
soak oracles over it."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

import pytest
from agents import function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner

import agentsim
from agentsim.audio import SimulatedPlayer
from agentsim.realtime import BARGE_IN_DURING_AUDIO
from agentsim.realtime.server import CallReport, MemoryWatch, SimulatedCaller, SimulatedRealtimeServer, SoakCheckError, check_call
from agentsim.timing import uniform


@function_tool
async def lookup_order(order_id: str) -> str:
    """Look an order up."""
    await asyncio.sleep(agentsim.seeded_random("lookup_order").uniform(0.5, 2.0))
    return f"order {order_id} ships tomorrow"


AGENT = RealtimeAgent(name="Support", instructions="Help with orders.", tools=[lookup_order])
LEAK: list[Any] = []


async def call(minutes: float, *, config: Any = None, leak: bool = False, watch: MemoryWatch | None = None, **caller_options: Any) -> CallReport:
    """The app: a RealtimeSession loop feeding a player, with a caller on the line."""
    server = SimulatedRealtimeServer(latency=uniform(0.01, 0.08), client_latency=uniform(0.01, 0.08), first_audio_latency=uniform(0.15, 0.6), generation_speed=1.5)
    player = SimulatedPlayer(network_delay=uniform(0.02, 0.1), jitter_buffer_ms=100)
    caller = SimulatedCaller(server, player, minutes=minutes, **caller_options)
    async with await RealtimeRunner(AGENT, model=server.model(), config=config).run(model_config={"playback_tracker": player.tracker}) as session:
        if watch is not None:
            watch.start()
        calling = caller.start()

        async def play() -> None:
            async for event in session:
                player.on_event(event)
                if leak:
                    LEAK.append(bytearray(256))  # the app's bug: keeps every event

        # Until the caller hangs up (a session whose server closed does not
        # end its event stream on every SDK release).
        playing = asyncio.get_running_loop().create_task(play())
        report = await calling
        playing.cancel()
        if watch is not None:
            watch.stop()
    player.close()
    return report


def test_a_twenty_minute_call_is_reported_and_the_same_seed_gives_the_same_report() -> None:
    result = agentsim.simulate(call, 20.0, seed=5, wall_timeout=120)
    report = result.unwrap()
    assert report.minutes == pytest.approx(20.0, abs=0.5) and report.hung_up
    assert report.turns >= 10 and report.barge_ins >= 1 and report.tool_questions >= 1
    assert result.coverage.get(BARGE_IN_DURING_AUDIO)  # the server saw speech start over audio it was sending
    assert report.cancelled >= 1 and report.tool_calls == report.tool_questions
    assert report.latency_p50 is not None and report.latency_p95 is not None and report.latency_max is not None
    assert 0 < report.latency_p50 <= report.latency_p95 <= report.latency_max
    assert len(report.latencies) == report.turns - report.unanswered
    assert 0.5 * report.sent_seconds < report.heard_seconds <= report.sent_seconds
    assert report.violations == ()
    assert "turns" in report.format() and "p95" in report.format()
    assert agentsim.run(call, 20.0, seed=5, wall_timeout=120) == report  # one seed, one call
    assert agentsim.run(call, 20.0, seed=6, wall_timeout=120) != report


def test_call_seed_makes_every_run_the_same_call() -> None:
    # Without it the run's seed draws the call (above: seeds 5 and 6 differ);
    # with it, two run seeds make the same call (what was asked, of which
    # tools, how long each answer is: the audio sent), and another call_seed
    # another. The tool's own latency still follows the run's seed.
    def asked(report: CallReport) -> tuple[Any, ...]:
        return (report.turns, report.tool_questions, report.barge_ins, report.silences, round(report.sent_seconds, 6))

    fixed = [agentsim.run(partial(call, 5.0, call_seed=11), seed=seed, wall_timeout=120) for seed in (5, 6)]
    assert asked(fixed[0]) == asked(fixed[1]) and fixed[0].turns >= 5
    assert asked(agentsim.run(partial(call, 5.0), seed=5, wall_timeout=120)) != asked(agentsim.run(partial(call, 5.0), seed=6, wall_timeout=120))
    assert asked(agentsim.run(partial(call, 5.0, call_seed=12), seed=5, wall_timeout=120)) != asked(fixed[0])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_barge_ins_happen_while_the_answer_plays_not_at_a_clock_instant(seed: int) -> None:
    async def main() -> tuple[CallReport, list[bool]]:
        server = SimulatedRealtimeServer(generation_speed=1.5)
        player = SimulatedPlayer(jitter_buffer_ms=60)
        playing_at_speech: list[bool] = []
        speaks = server.user_speaks

        def heard_while(transcript: str, **options: Any) -> None:
            playing_at_speech.append(player.playing)
            speaks(transcript, **options)

        server.user_speaks = heard_while  # type: ignore[method-assign]
        caller = SimulatedCaller(server, player, minutes=5.0, barge_in=1.0, tool_questions=0.0, answer_seconds=(6.0, 8.0))
        async with await RealtimeRunner(AGENT, model=server.model()).run(model_config={"playback_tracker": player.tracker}) as session:
            calling = caller.start()

            async def play() -> None:
                async for event in session:
                    player.on_event(event)

            playing = asyncio.get_running_loop().create_task(play())
            report = await calling
            playing.cancel()
        return report, playing_at_speech

    report, playing = agentsim.run(main, seed=seed)
    # Every answer runs 6-8 s and the caller cuts in 0.5-2.5 s after hearing
    # it start: every turn after the first lands on audio that is playing.
    assert report.barge_ins == report.turns - 1 == sum(playing[1:]) and not playing[0]


@pytest.mark.parametrize("seed", [2, 3])
def test_silences_past_the_idle_timeout_make_the_server_prompt(seed: int) -> None:
    config = {"model_settings": {"turn_detection": {"type": "server_vad", "idle_timeout_ms": 4000}}}
    report = agentsim.run(partial(call, 5.0, config=config, silence=1.0, barge_in=0.0), seed=seed, wall_timeout=120)
    assert report.silences >= 2
    assert report.responses > report.turns + report.tool_calls  # the server answered the silences too


def test_check_call_holds_a_report_to_bounds() -> None:
    report = agentsim.run(call, 5.0, seed=3, wall_timeout=120)
    check_call(report, p95=10.0, max_latency=20.0, drift_ms=200.0)
    with pytest.raises(SoakCheckError) as info:
        check_call(report, p95=0.01)
    assert info.value.check == "p95 latency" and info.value.limit == 0.01 and info.value.measured == report.latency_p95
    with pytest.raises(SoakCheckError) as info:
        check_call(report, max_latency=0.0)
    assert info.value.check == "max latency" and info.value.measured == report.latency_max
    if report.drift_ms_max > 0:
        with pytest.raises(SoakCheckError) as info:
            check_call(report, drift_ms=0.0)
        assert info.value.check == "tracker drift"
    with pytest.raises(agentsim.SimulationConfigError):
        check_call("not a report")  # type: ignore[arg-type]


@pytest.mark.parametrize("leak", [False, True])
def test_memory_watch_sees_the_app_grow_per_simulated_hour(leak: bool) -> None:
    LEAK.clear()
    watch = MemoryWatch(every=60.0, files=[__file__])
    agentsim.run(partial(call, 10.0, leak=leak, watch=watch), seed=4, wall_timeout=120)
    LEAK.clear()
    assert len(watch.samples) >= 9
    if leak:
        assert watch.per_hour() > 1e6
        with pytest.raises(SoakCheckError) as info:
            watch.check(mb_per_hour=0.5)
        assert info.value.check == "memory growth"
    else:
        watch.check(mb_per_hour=0.05)


def test_bad_caller_settings_are_typed_errors() -> None:
    async def main() -> None:
        server = SimulatedRealtimeServer()
        player = SimulatedPlayer()
        for bad in ({"minutes": 0}, {"speaking": (3.0, 1.0)}, {"barge_in": 1.5}, {"phrases": []}, {"follow_up": "ok"}, {"pause": 5}, {"call_seed": 1.5}, {"call_seed": True}):
            with pytest.raises(agentsim.SimulationConfigError):
                SimulatedCaller(server, player, **bad)
        with pytest.raises(agentsim.SimulationConfigError):
            SimulatedCaller(server, object())

    agentsim.run(main)
