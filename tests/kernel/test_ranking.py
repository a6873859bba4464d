"""PCT's O(log n) choices (ranking.py) pick what a scan of every option would."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from sortedcontainers import SortedList

import agentsim
from agentsim._kernel.scheduling import CONTINUE
from agentsim._kernel.scheduling.ranking import RankHeap
from agentsim._kernel.scheduling.choice_options import BatchOptions, RankedTimerOptions


class _Handle:
    """Stands in for a timer handle: pending until fired."""

    def __init__(self) -> None:
        self._scheduled = True


def _priorities(seed: int) -> dict[str, float]:
    """Random priorities for every thread name the tests can meet (ties included)."""
    rng = random.Random(seed)
    names = [f"t{n}" + (f"'{k}" if k > 1 else "") for n in range(12) for k in range(1, 42)]
    return {name: rng.choice([0.25, 0.5, rng.random()]) for name in [*names, CONTINUE]}


@settings(max_examples=80, deadline=None)
@given(
    creators=st.lists(st.integers(0, 11), min_size=1, max_size=40),
    picks=st.lists(st.integers(0, 1_000), max_size=40),
    ready=st.booleans(),
    seed=st.integers(0, 1_000),
    sorted_form=st.booleans(),
    heap_first=st.booleans(),
)
def test_due_timer_labels_rank_like_a_scan(creators: list[int], picks: list[int], ready: bool, seed: int, sorted_form: bool, heap_first: bool) -> None:
    # (sorted_form: the due timers as the loop keeps them when there are many;
    # heap_first: ranked through the heap from the start, else scanned while
    # few are due and the labels are distinct.)
    priority = _priorities(seed).__getitem__
    due: list[tuple[int, int, _Handle, str]] | SortedList = SortedList() if sorted_form else []
    labels = RankedTimerOptions(due, ready=ready)
    if heap_first:
        labels.start_heap()
    for sequence, creator in enumerate(creators):
        entry = (0, sequence, _Handle(), f"t{creator}")
        due.add(entry) if sorted_form else due.append(entry)  # type: ignore[union-attr]
        if labels.heap is not None:
            labels.heap.add((0, sequence), entry[3])
    for pick in picks:
        if not due:
            break
        labels.fifo, labels.length = (1 if ready else 0), len(due) + (1 if ready else 0)
        best = labels.best(priority)
        threads = [labels.thread(index) for index in range(len(labels))]
        assert len(set(threads)) == len(threads)  # a task's two timers are two threads
        values = [priority(thread) for thread in threads]
        assert best == values.index(max(values))  # the highest, ties to the lowest index
        if len(set(creators)) < len(creators) or len(due) > 8:
            assert labels.heap is not None  # duplicates or many: ranked through the heap
        # Take some option (the best, or another, as a deviation would).
        index = (best if pick % 2 else pick % len(labels)) - (1 if ready else 0)
        if index >= 0:
            entry = due.pop(index)
            entry[2]._scheduled = False
            if labels.heap is not None:
                if due:
                    labels.heap.remove((entry[0], entry[1]))
                else:
                    labels.heap = None


@settings(max_examples=60, deadline=None)
@given(size=st.sampled_from([2, 5, 63, 64, 200]), picks=st.lists(st.integers(0, 10_000), max_size=30), seed=st.integers(0, 1_000))
def test_batch_labels_rank_like_a_scan_and_take_in_order(size: int, picks: list[int], seed: int) -> None:
    rng = random.Random(seed)
    names = [f"task{n}#{n}" for n in range(size)]
    priority = {name: rng.random() for name in names}.__getitem__
    labels = BatchOptions(list(names))
    remaining = list(names)
    for pick in picks:
        if len(labels) < 2:
            break
        assert list(labels) == remaining
        best = labels.best(priority)
        assert remaining[best] == max(remaining, key=priority)
        index = best if pick % 2 else pick % len(labels)
        assert names[labels.take(index)] == remaining.pop(index)


def _wide(width: int) -> object:
    async def worker(number: int) -> None:
        for _ in range(3):
            await asyncio.sleep(0.01)

    async def main() -> None:
        await asyncio.gather(*(worker(n) for n in range(width)))

    return main


def test_pct_replays_and_orders_wide_instants_on_both_backends() -> None:
    """PCT on 2,000 tasks waking together: every choice made through the
    ranked path, and the run replays from its deviations (seeds 1-3)."""

    async def trio_main() -> None:
        async def worker() -> None:
            for _ in range(3):
                await trio.sleep(0.01)

        async with trio.open_nursery() as nursery:
            for _ in range(2_000):
                nursery.start_soon(worker)

    for seed in (1, 2, 3):
        for backend, main in (("asyncio", _wide(2_000)), ("trio", trio_main)):
            result = agentsim.simulate(main, backend=backend, strategy="pct", seed=seed)  # type: ignore[arg-type]
            assert result.ok and result.choice_points > 2_000
            replayed = agentsim.simulate(main, backend=backend, strategy=agentsim.ReplayPolicy(result.trace.deviations))  # type: ignore[arg-type]
            assert replayed.trace.order_digest() == result.trace.order_digest()


@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_many_due_timers_schedule_as_few_do(strategy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``_SORTED_DUE_ABOVE`` timers due together, the loop keeps them in
    a SortedList: the same schedule as the plain list (seeds 1-3), replayable."""
    import agentsim._kernel.backends.asyncio_loop as loop_module
    import agentsim._kernel.scheduling.choice_options as options_module
    from agentsim._kernel.scheduling import PCTChooser

    async def main() -> list[int]:
        woke: list[int] = []
        loop = asyncio.get_running_loop()

        async def worker(number: int) -> None:
            for round_ in range(3):
                await asyncio.sleep(0.01)
                if number % 50 == 0:  # a timer due in the past joins out of order
                    loop.call_at(loop.time() - 0.001, woke.append, -number)
                woke.append(number)

        await asyncio.gather(*(worker(n) for n in range(700)))
        return woke

    for seed in (1, 2, 3):
        made: list[int] = []

        class CountedSortedList(SortedList):  # type: ignore[misc]
            def __init__(self, *args: object) -> None:
                made.append(1)
                super().__init__(*args)

        with monkeypatch.context() as patched:  # (700 timers: sorted past 256, listed again under 64)
            patched.setattr(loop_module, "_SORTED_DUE_ABOVE", 256)
            patched.setattr(loop_module, "_LISTED_DUE_BELOW", 64)
            patched.setattr(loop_module, "SortedList", CountedSortedList)
            sorted_run = agentsim.simulate(main, strategy=strategy, seed=seed)
        assert made  # the sorted form was taken
        monkeypatch.setattr(loop_module, "_SORTED_DUE_ABOVE", 10**9)
        list_run = agentsim.simulate(main, strategy=strategy, seed=seed)
        monkeypatch.undo()
        assert sorted_run.ok and sorted_run.value == list_run.value
        assert sorted_run.trace.digest() == list_run.trace.digest()
        assert sorted_run.value != sorted(sorted_run.value or [])  # the order was the policy's
        replayed = agentsim.simulate(main, strategy=agentsim.ReplayPolicy(sorted_run.trace.deviations))
        assert replayed.value == sorted_run.value


def test_options_taken_without_a_choice_do_not_pile_up() -> None:
    # A PCT run fires most timers with no choice to make (one due at a time):
    # those options must not stay in the rank heap for the rest of the run.
    ranked = RankHeap()
    priority = {f"t{n}": float(n % 7) for n in range(10)}.__getitem__
    for sequence in range(20_000):
        ranked.add((0, sequence), f"t{sequence % 10}")
        if sequence % 100 == 0:
            assert ranked.top(priority) is not None  # a choice now and then
        ranked.remove((0, sequence))
    assert ranked.top(priority) is None
    assert len(ranked._heap) <= 64 and not ranked._unranked and not ranked._threads


def test_pct_repeats_an_answer_only_until_a_change_point() -> None:
    policy = agentsim.PCTPolicy(1, depth=3, steps=10)
    first_change = policy._change_points[0]
    labels = [CONTINUE, "a", "b"]
    chosen = policy.choose("timer", labels)
    repeats = 0
    while policy.repeat_last_answer():
        repeats += 1
    assert policy._step == first_change - 1  # the change point itself is asked properly
    assert repeats == first_change - 2
    assert policy.choose("timer", labels) == chosen  # the change point: its winner drops after
    assert not policy.repeat_last_answer()  # a change passed since that answer


@pytest.mark.parametrize("shortcut", ["repeat", "plain ranking", "settled", "one due", "scan", "batches without choices"])
def test_pct_schedules_are_the_same_without_a_shortcut(shortcut: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop's PCT shortcuts leave every schedule what plainly asking the
    policy through the rank heap gives (seeds 1-4, default and deep PCT;
    timers falling due mid-instant, a task's sleep and timeout due together,
    cancels): skipping the ranking while a batch runs on unchanged options
    (``repeat_last_answer``), ranking off change points in the loop
    (``next_choice_is_plain``), both read off ``PCTPolicy.settled`` once the
    change points have passed (and the one-due-timer question ranked by
    the chooser itself, ``ranks_one_due_here``), scanning a few due timers instead of a heap, running an
    instant's batches on the FIFO path while they hold no choice."""
    import agentsim._kernel.backends.asyncio_loop as loop_module
    import agentsim._kernel.scheduling.choice_options as options_module
    from agentsim._kernel.scheduling import PCTChooser

    async def main(width: int) -> list[int]:
        out: list[int] = []
        loop = asyncio.get_running_loop()

        async def worker(number: int) -> None:
            for step in range(12):
                await asyncio.sleep(0.01 * (number % 3 + 1))
                if (number + step) % 3 == 0:  # a timer due within this instant: new options mid-instant
                    loop.call_later(0, out.append, -number)
                if step % 4 == 0:
                    helper = asyncio.ensure_future(asyncio.sleep(0.005))
                    if number % 2:
                        helper.cancel()
                    await asyncio.gather(helper, return_exceptions=True)
                if step % 5 == 1:  # its sleep and its timeout due at one instant
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.sleep(0.01), 0.01)
                out.append(number)

        await asyncio.gather(*(worker(n) for n in range(width)))
        return out

    for seed, width, strategy in itertools.product((1, 2, 3, 4), (4, 60), ("pct", "pct/5/300")):
        taken = agentsim.simulate(main, width, strategy=strategy, seed=seed)
        with monkeypatch.context() as patched:
            if shortcut == "repeat":
                patched.setattr(PCTChooser, "repeats_answers", False)
            elif shortcut == "plain ranking":
                patched.setattr(PCTChooser, "ranks_plain_choices", False)
            elif shortcut == "settled":
                patched.setattr(PCTChooser, "trusts_settling", False)
            elif shortcut == "one due":
                patched.setattr(PCTChooser, "ranks_one_due_here", False)
            elif shortcut == "batches without choices":
                patched.setattr(loop_module.VirtualEventLoop, "_run_batches_without_choices", lambda self, now: False)
            else:
                patched.setattr(options_module, "_SCAN_AT_MOST", 0)
            asked = agentsim.simulate(main, width, strategy=strategy, seed=seed)
        assert taken.ok and taken.value == asked.value
        assert taken.trace.digest() == asked.trace.digest() and taken.choice_points == asked.choice_points
        assert taken.trace.format(last=None) == asked.trace.format(last=None)  # the reports too
