"""Exploring a replay: the timings near the incident.

The recorded call is a near miss: the caller barged in 20 ms after the
app's 300 ms echo-suppression grace period (``apps.py``), where a barge-in
inside it crashes the app. Replayed as recorded the app passes; explored
within the default tolerance (a gap may move by ±30 ms), the barge-in
lands inside the grace period and the crash is found. The fixed app, or a
replay with no tolerance, has nothing to find.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import agentsim
from agentsim.recording import Tolerance, load

from .apps import GRACE, first_audio_at, record_support_call, replay_support_call

RUNS = 100
#: The simulated server's default latency each way.
NETWORK = 0.02


@pytest.fixture(scope="module")
def near_miss(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("recordings") / "near_miss.jsonl"
    # The caller starts 20 ms after the grace period ends; the server's
    # speech_started reaches the app one network latency (20 ms) later, as
    # the first audio did.
    record_support_call(path, barge_in_at=first_audio_at() - NETWORK + GRACE + 0.02, fixed=False)
    recording = load(path)
    first_audio = next(event.t for event in recording.events if event.type == "response.output_audio.delta")
    barge_in = [event.t for event in recording.events if event.type == "input_audio_buffer.speech_started"][-1]
    assert barge_in - first_audio == pytest.approx(GRACE + 0.02)  # recorded: 20 ms clear of the grace period
    return path


def test_replayed_as_recorded_the_buggy_app_passes(near_miss: Path) -> None:
    outcome, server = agentsim.run(replay_support_call(near_miss, fixed=False), strategy="fifo")
    assert server.divergence is None and len(outcome.stopped) == 1


def test_exploring_the_replay_finds_the_barge_in_inside_the_grace_period(near_miss: Path) -> None:
    report = agentsim.explore(replay_support_call(near_miss, fixed=False), runs=RUNS, database=None, stop_on_first=True, shrink_failures=False)
    assert not report.ok
    failure = report.failures[0]
    assert isinstance(failure.exception, KeyError)  # the app's crash, not a divergence
    # The failing schedule replays: one seed (or schedule) brings the incident's neighbour back.
    again = agentsim.replay(replay_support_call(near_miss, fixed=False), schedule=failure.schedule)
    assert isinstance(again.exception, KeyError)


def test_the_fixed_app_passes_every_explored_timing(near_miss: Path) -> None:
    report = agentsim.explore(replay_support_call(near_miss, fixed=True), runs=RUNS, database=None)
    assert report.ok, report.format()
    assert report.distinct_timings > RUNS // 2  # the timings really varied


def test_without_tolerance_there_is_no_neighbourhood_to_explore(near_miss: Path) -> None:
    report = agentsim.explore(replay_support_call(near_miss, fixed=False, tolerance=Tolerance(0, 0)), runs=30, database=None)
    assert report.ok  # every gap exactly as recorded: the barge-in always lands 20 ms clear


def test_a_focused_sweep_explores_around_the_incident_and_finds_it(near_miss: Path) -> None:
    recording = load(near_miss)
    barge_in = [event.t for event in recording.events if event.type == "input_audio_buffer.speech_started"][-1]
    window = recording.window_around("input_audio_buffer.speech_started", occurrence=1)  # a second either side
    assert window == pytest.approx((barge_in - 1.0, barge_in + 1.0))
    report = agentsim.explore(replay_support_call(near_miss, fixed=False), runs=RUNS, focus=window, database=None, stop_on_first=True, shrink_failures=False)
    assert isinstance(report.failures[0].exception, KeyError)
    assert report.branching is not None and report.branching.checkpoints == [pytest.approx(window[0])]
    assert agentsim.explore(replay_support_call(near_miss, fixed=True), runs=40, focus=window, database=None).ok


def test_window_around_reads_the_recording_or_says_what_it_has(near_miss: Path) -> None:
    recording = load(near_miss)
    assert recording.window_around(margin=2.0) == pytest.approx((recording.duration - 2.0, recording.duration + 2.0))
    assert recording.window_around(at=0.3, margin=1.0, offset=5.0) == pytest.approx((4.3, 6.3))
    assert recording.window_around(at=0.3) == pytest.approx((0.0, 1.3))  # never before the start
    with pytest.raises(agentsim.SimulationConfigError) as missing:
        recording.window_around("input_audio_buffer.speech_started", occurrence=5)
    assert missing.value.parameter == "event_type" and "response.created" in str(missing.value)
    for bad in ({"margin": -1.0}, {"occurrence": -1}, {"at": 1.0, "event_type": "response.created"}):
        with pytest.raises(agentsim.SimulationConfigError):
            recording.window_around(**bad)  # type: ignore[arg-type]
