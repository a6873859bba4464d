"""The trace and the choice log: bounded memory, every event and choice in the digest."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentsim
from agentsim._kernel.tracing.choices import Choice, ChoiceLog
from agentsim._kernel.tracing.trace import Trace


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


_program_items = st.lists(
    st.one_of(
        st.sampled_from(["a#1", "b#2", "c#3"]),  # task steps
        st.tuples(st.sampled_from(["send", "recv", "cancel"]), st.sampled_from(["a#1", "b#2"]), st.text(max_size=3)),  # events
    ),
    max_size=60,
)


@settings(max_examples=80, deadline=None)
@given(items=_program_items, bookkeeping=st.lists(st.tuples(st.integers(0, 60), st.sampled_from(["timer", "choice", "jump", "delay"])), max_size=20), shift=st.integers(1, 50), chunk=st.integers(1, 70))
def test_the_order_digest_is_what_the_program_did_in_order(items: list[Any], bookkeeping: list[tuple[int, str]], shift: int, chunk: int) -> None:
    # The same steps and events, at other instants, with the scheduler's
    # events and deviation marks put anywhere: the same order digest (chunks
    # flushed at the same steps: a chunk's end is part of it); one event
    # changed: another.
    def record(trace: Trace, items: list[Any], extra: list[tuple[int, str]], offset: int, flush_every: int) -> None:
        for position, item in enumerate(items):
            for at, kind in extra:
                if at == position:
                    trace.record(position + offset, kind, "sched", "")
                    trace.append_raw(None)
            if position % 4 == 0:
                trace.append_raw(position + offset)
            if isinstance(item, str):
                trace.append_raw(item)
            else:
                trace.record(position + offset, *item)
            if position % flush_every == 0:
                trace._flush()

    plain, moved = Trace(), Trace()
    record(plain, items, [], 0, chunk)
    record(moved, items, bookkeeping, shift, chunk)
    assert plain.order_digest() == moved.order_digest()
    events = [index for index, item in enumerate(items) if not isinstance(item, str)]
    if events:
        changed = list(items)
        kind, task, detail = changed[events[-1]]
        changed[events[-1]] = (kind, task, detail + "!")
        other = Trace()
        record(other, changed, bookkeeping, shift, chunk)
        assert other.order_digest() != plain.order_digest()


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


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    choices=st.lists(st.tuples(st.sampled_from(["timer", "batch", "window", "eager"]), st.integers(2, 9), st.integers(0, 8), st.integers(0, 1)), max_size=300),
    settle_every=st.integers(1, 50),
)
def test_deviations_found_when_settling_are_the_choices_that_left_fifo(choices: list[tuple[str, int, int, int]], settle_every: int) -> None:
    log, whole = ChoiceLog(keep_last=100), ChoiceLog(keep_last=100)
    for number, (kind, options, chosen, fifo) in enumerate(choices):
        chosen %= options
        log.append(kind, options, chosen, fifo)
        whole.append(kind, options, chosen, fifo)
        if number % settle_every == 0:
            log.settle()  # however the choices are chunked, the log is the same
    expected = {n: c % o for n, (_, o, c, f) in enumerate(choices) if c % o != f}
    assert log.deviations == whole.deviations == expected
    assert log.stock_options() == {n: choices[n][3] for n in expected}
    assert len(log) == len(choices) and log.digest() == whole.digest()
    assert [choice.chosen for choice in log] == [c % o for _, o, c, _ in choices][-100:]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_deviation_is_one_choice_event_in_words(backend: str, seed: int) -> None:
    import anyio

    async def workers() -> None:
        async def worker(number: int) -> None:
            for _ in range(20):
                await anyio.sleep(0.01)

        async with anyio.create_task_group() as group:
            for number in range(4):
                group.start_soon(worker, number)

    result = agentsim.simulate(workers, seed=seed, strategy="random", backend=backend)
    assert result.ok, result.exception
    events = [event for event in result.trace.events if event.kind == "choice"]
    deviations = result.trace.choices.deviations
    assert deviations and len(events) == len(deviations)
    import re

    labels = {event.task for event in result.trace.events if event.kind == "spawn"} | {"<ready>", "main"}
    for event, (number, chosen) in zip(events, sorted(deviations.items())):
        match = re.fullmatch(r"(timer|batch) (\d+)/(\d+) \(fifo (\d+): (.+)\)", event.detail)
        assert match is not None, event.detail
        assert int(match[2]) == chosen and int(match[4]) == result.trace.choices.stock_options()[number]
        # (trio's own system tasks, "<...>", take part in batches unannounced.)
        assert all(label in labels or label.startswith("<") for label in (event.task, match[5]))


def _digest_of(*items: object) -> str:
    trace = Trace()
    for item in items:
        trace.append_raw(item)  # type: ignore[arg-type]
    return trace.digest()


def test_the_digest_is_of_values_not_of_objects_and_tells_forms_apart() -> None:
    # The same label built twice (two objects) or met twice (one object):
    # one digest. (The hash pickles without a memo, which would not agree.)
    label = "worker#" + str(3)
    assert _digest_of(0, label, label) == _digest_of(0, "worker#3", "worker#" + "3")
    # An int tick, a str label, None (a deviation's place) and a tuple event differ.
    assert len({_digest_of(1), _digest_of("1"), _digest_of(None), _digest_of("None"), _digest_of((1, "spawn", "t", ""))}) == 5
    assert _digest_of(0, "a", "b") != _digest_of(0, "b", "a")


def test_a_detail_pickle_refuses_still_hashes_and_reads() -> None:
    trace = Trace()
    trace.record(0, "milestone", "main", lambda: None)  # type: ignore[arg-type]
    trace.record(0, "milestone", "main", "plain")
    assert len(trace.digest()) == 32 and [event.detail for event in trace.events][1] == "plain"
