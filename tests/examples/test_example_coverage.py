"""The realtime doubles' built-in moments (``agentsim.realtime.MOMENTS``)
appear in the coverage of the race examples that go through them, and hold
where the race is about them (30 runs each, default strategy from seed 0)."""

from __future__ import annotations

import warnings

import pytest

import agentsim
from agentsim.explore import ExploreReport
from agentsim.realtime import BARGE_IN_DURING_AUDIO, DISCONNECT_DURING_TOOL_CALL, MOMENTS

from . import examples_dir

#: Each realtime race example and the moment it is about.
ABOUT = {
    ("races", "close_vs_inflight_tool"): DISCONNECT_DURING_TOOL_CALL,
    ("windows", "hang_up_vs_tool_report"): DISCONNECT_DURING_TOOL_CALL,
    ("races", "stale_audio_after_barge_in"): BARGE_IN_DURING_AUDIO,
    ("races", "duplicate_guardrail_trips"): BARGE_IN_DURING_AUDIO,
}
#: Realtime examples whose doubles evaluate some built-in moment.
THROUGH_DOUBLES = [*ABOUT, ("races", "vad_response_vs_app_message"), ("windows", "filler_over_answer"), ("lateness", "server_latency_vs_apology")]


def _sweep(function: object, **settings: object) -> ExploreReport:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return agentsim.explore(function, runs=30, database=None, stop_on_first=False, shrink_failures=False, **settings)  # type: ignore[arg-type]


@pytest.mark.parametrize(("folder", "name"), THROUGH_DOUBLES, ids=[name for _, name in THROUGH_DOUBLES])
def test_the_doubles_moments_appear_in_the_coverage_of_the_race_examples(folder: str, name: str) -> None:
    report = _sweep(examples_dir.load(folder, name).racy)
    assert set(report.coverage) & set(MOMENTS)
    assert set(report.coverage) <= set(MOMENTS)  # the examples name none of their own
    moment = ABOUT.get((folder, name))
    if moment is not None:
        assert report.coverage[moment] > 0, report.coverage


def test_require_catches_a_fixed_twin_that_never_gets_to_the_moment() -> None:
    """close_vs_inflight_tool's fixed app waits for the tool to report before
    it closes: its sweep passes, and never closes during a tool call. With
    the moment required, the pass is no longer vacuous: the sweep fails."""
    example = examples_dir.load("races", "close_vs_inflight_tool")
    assert _sweep(example.fixed).ok
    required = _sweep(example.fixed, require=[DISCONNECT_DURING_TOOL_CALL])
    assert not required.ok and not required.failures
    assert required.unreached_requirements == (DISCONNECT_DURING_TOOL_CALL,)
    assert not _sweep(example.racy, require=[DISCONNECT_DURING_TOOL_CALL]).unreached_requirements
