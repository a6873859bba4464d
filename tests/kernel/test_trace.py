"""The trace and the choice log: bounded memory, every event and choice in the digest."""

from __future__ import annotations

import asyncio

import pytest

import agentsim
from agentsim._kernel.choices import Choice, ChoiceLog
from agentsim._kernel.trace import Trace


def _steps(trace: Trace, count: int, *, start: int = 0) -> None:
    """Record ``count`` task steps in the compact hot-path form, a new tick every 3."""
    for number in range(start, start + count):
        if number % 3 == 0:
            trace.append_raw(number * 1_000)
        trace.append_raw(f"worker#{number % 5}")
        trace.flush_if_large()


def test_the_kept_window_is_the_last_events_with_their_run_indices() -> None:
    trace = Trace(keep_last=1_000)
    _steps(trace, 20_000)
    trace.record(99_999_000, "cancel", "worker#1", "by main")
    events = trace.events
    assert len(trace) == 20_001
    assert len(events) == 1_000
    assert trace.dropped == 19_001
    assert [event.index for event in events] == list(range(19_001, 20_001))
    last_step = events[-2]
    # Step 19,999 ran at the tick set before step 19,998 (a new tick every 3 steps).
    assert (last_step.kind, last_step.task, last_step.ticks) == ("step", "worker#4", 19_998_000)
    assert events[-1].kind == "cancel" and events[-1].detail == "by main"


def test_the_digest_covers_events_beyond_the_kept_window() -> None:
    first, second = Trace(keep_last=100), Trace(keep_last=100)
    _steps(first, 10_000)
    _steps(second, 10_000)
    assert first.digest() == second.digest()
    third = Trace(keep_last=100)
    _steps(third, 10, start=1)  # an early difference, long dropped from the window
    _steps(third, 9_990, start=10)
    assert third.digest() != first.digest()


def test_order_digest_ignores_instants_and_the_schedulers_bookkeeping() -> None:
    early, late = Trace(), Trace()
    for trace, offset in ((early, 0), (late, 7)):
        trace.append_raw(10 + offset)
        trace.append_raw("a#1")
        trace.record(11 + offset, "timer", "b#2")
        trace.record(12 + offset, "send", "b#2", "hello")
    assert early.order_digest() == late.order_digest()
    assert early.digest() != late.digest()


def _choose(log: ChoiceLog, count: int, *, deviate_every: int) -> None:
    for number in range(count):
        chosen = 0 if number % deviate_every == 0 else 1
        log.append("timer", 3, chosen, 1)


def test_the_choice_log_keeps_the_last_choices_and_every_deviation() -> None:
    log = ChoiceLog(keep_last=500)
    _choose(log, 100_000, deviate_every=1_000)
    assert len(log) == 100_000
    assert log.dropped == 99_500
    assert len(list(log)) == 500
    assert log[99_999] == Choice("timer", 3, 1, 1)
    assert log[-1] == log[99_999]
    with pytest.raises(IndexError, match="not kept"):
        log[10]
    # Deviations are kept whole however early: a schedule is made of them.
    assert log.deviations == {number: 0 for number in range(0, 100_000, 1_000)}
    assert log.stock_options() == {number: 1 for number in range(0, 100_000, 1_000)}


def test_the_digest_covers_every_choice_even_one_that_changed_no_event() -> None:
    first, second = Trace(keep_last=10), Trace(keep_last=10)
    for trace, last in ((first, 0), (second, 1)):
        for _ in range(5_000):
            trace.record_choice(0, "batch", ["a#1", "b#2"], 0, 0)
        # The same option at the end in words, but another choice.
        trace.record_choice(0, "batch", ["a#1", "a#1"], last, last)
    assert first.digest() != second.digest()
    assert len(first.choices) == 5_001 and first.choices.dropped == 4_991


def test_a_long_random_run_keeps_choices_in_bounded_memory() -> None:
    async def worker() -> None:
        for _ in range(20_000):
            await asyncio.sleep(0.02)

    async def main() -> None:
        await asyncio.gather(worker(), worker(), worker())

    result = agentsim.simulate(main, strategy="random", seed=4)
    choices = result.trace.choices
    assert result.choice_points == len(choices) > 50_000
    assert len(list(choices)) == 50_000  # the kept window, like the event trace
    assert result.trace.deviations  # and every deviation, for replay
    replayed = agentsim.simulate(main, strategy=agentsim.ReplayPolicy(result.trace.deviations))
    assert replayed.trace.order_digest() == result.trace.order_digest()
