"""Scheduling: FIFO reproduces stock order; seeds explore only legal orders."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import anyio
import pytest

import agentsim
from agentsim import RandomPolicy, SchedulingPolicy
from agentsim.timing import sleep_between

SEEDS = range(40)


async def two_tasks_wake_at_the_same_instant() -> list[str]:
    """A racy program: two tasks sleep until the same instant, then append."""
    order: list[str] = []

    async def worker(name: str) -> None:
        await anyio.sleep(0.1)
        order.append(name)

    async with anyio.create_task_group() as group:
        group.start_soon(worker, "a")
        group.start_soon(worker, "b")
    return order


def test_fifo_runs_tied_timers_in_schedule_order_on_asyncio() -> None:
    # Stock asyncio: "a" scheduled its timer first, so it wakes first.
    for seed in SEEDS:  # the seed does not matter to FIFO
        assert agentsim.run(two_tasks_wake_at_the_same_instant, seed=seed) == ["a", "b"]


def test_fifo_is_one_fixed_order_on_trio() -> None:
    orders = {tuple(agentsim.run(two_tasks_wake_at_the_same_instant, seed=seed, backend="trio")) for seed in SEEDS}
    assert orders == {("a", "b")}


def test_random_strategy_explores_both_orders_of_a_tie(backend: str) -> None:
    orders = {
        tuple(agentsim.run(two_tasks_wake_at_the_same_instant, seed=seed, strategy="random", backend=backend))
        for seed in SEEDS
    }
    assert orders == {("a", "b"), ("b", "a")}


def test_different_seeds_give_different_digests_on_a_racy_program(backend: str) -> None:
    digests = {
        agentsim.simulate(two_tasks_wake_at_the_same_instant, seed=seed, strategy="random", backend=backend).trace.digest()
        for seed in SEEDS
    }
    assert len(digests) >= 2


def test_same_seed_gives_same_order_and_digest(backend: str) -> None:
    for seed in (0, 1, 7, 123):
        first = agentsim.simulate(two_tasks_wake_at_the_same_instant, seed=seed, strategy="random", backend=backend)
        again = agentsim.simulate(two_tasks_wake_at_the_same_instant, seed=seed, strategy="random", backend=backend)
        assert first.value == again.value
        assert first.trace.digest() == again.trace.digest()
        assert first.trace.choices == again.trace.choices


def test_random_strategy_never_reorders_callbacks_one_task_scheduled() -> None:
    # One task schedules callbacks in sequence; a real loop runs them in that
    # order whatever the I/O timing, so no seed may reorder them - even while
    # tied timers fire in between.
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        log: list[str] = []

        async def sleeper(name: str) -> None:
            await asyncio.sleep(0.5)
            log.append(name)

        tasks = [asyncio.create_task(sleeper(f"timer-{i}")) for i in range(3)]
        await asyncio.sleep(0.5)
        for i in range(5):
            loop.call_soon(log.append, f"soon-{i}")
        await asyncio.gather(*tasks)
        await asyncio.sleep(0)
        return log

    seen_positions = set()
    for seed in SEEDS:
        log = agentsim.run(main, seed=seed, strategy="random")
        soon = [entry for entry in log if entry.startswith("soon")]
        assert soon == [f"soon-{i}" for i in range(5)]
        seen_positions.add(log.index("soon-0"))
    assert len(seen_positions) > 1  # ...while the timers did land at different points


def test_random_strategy_keeps_causal_order() -> None:
    # B is woken by A's event; B's reaction can never run before A set it.
    async def main() -> list[str]:
        log: list[str] = []
        event = asyncio.Event()

        async def a() -> None:
            await asyncio.sleep(1)
            log.append("a sets")
            event.set()

        async def b() -> None:
            await event.wait()
            log.append("b reacts")

        async def c() -> None:
            await asyncio.sleep(1)
            log.append("c ticks")

        await asyncio.gather(a(), b(), c())
        return log

    for seed in SEEDS:
        log = agentsim.run(main, seed=seed, strategy="random")
        assert log.index("a sets") < log.index("b reacts")


class AlwaysLast(SchedulingPolicy):
    """A custom policy through the public seam: always take the last option."""

    name = "always-last"

    def __init__(self) -> None:
        self.asked: list[tuple[str, tuple[str, ...]]] = []

    def choose(self, kind: str, labels: Sequence[str]) -> int:  # type: ignore[override]
        self.asked.append((kind, tuple(labels)))
        return len(labels) - 1


def test_a_custom_policy_is_asked_with_task_labels(backend: str) -> None:
    policy = AlwaysLast()
    result = agentsim.simulate(two_tasks_wake_at_the_same_instant, strategy=policy, backend=backend)
    assert result.value == ["b", "a"]
    assert result.strategy == "always-last"
    assert policy.asked, "the policy was never consulted"
    kinds = {kind for kind, _ in policy.asked}
    assert kinds == ({"timer"} if backend == "asyncio" else {"batch"})
    assert len(result.trace.choices) == len(policy.asked)


class LastOfRandom(RandomPolicy):
    """A subclass of a built-in policy that changes how it chooses: the
    backends' shortcuts for built-in policies must not bypass it."""

    name = "last-of-random"

    def __init__(self) -> None:
        super().__init__(0)
        self.asked = 0

    def choose(self, kind: str, labels: Sequence[str]) -> int:  # type: ignore[override]
        self.asked += 1
        return len(labels) - 1


def test_a_subclass_of_a_built_in_policy_is_asked_itself(backend: str) -> None:
    policy = LastOfRandom()
    result = agentsim.simulate(two_tasks_wake_at_the_same_instant, strategy=policy, backend=backend)
    assert result.value == ["b", "a"]
    assert policy.asked and len(result.trace.choices) == policy.asked


@pytest.mark.parametrize("strategy", ["fifo", "random"])
def test_hundred_way_tie_runs_everyone_once_per_instant(strategy: str, backend: str) -> None:
    async def main() -> list[int]:
        wakes = [0] * 100

        async def worker(i: int) -> None:
            for _ in range(10):
                await anyio.sleep(0.02)
                wakes[i] += 1
                assert agentsim.now() == wakes[i] * 20_000_000 / agentsim.TICKS_PER_SECOND

        async with anyio.create_task_group() as group:
            for i in range(100):
                group.start_soon(worker, i)
        return wakes

    assert agentsim.run(main, strategy=strategy, seed=3, backend=backend) == [10] * 100


def test_a_random_policy_template_pickles_and_copies_to_the_same_schedule() -> None:
    import copy
    import pickle

    from agentsim._kernel.scheduling import RandomPolicy as Random

    async def program() -> list[str]:
        order: list[str] = []

        async def worker(name: str) -> None:
            for _ in range(5):
                await asyncio.sleep(0.01)
                order.append(name)

        await asyncio.gather(*(worker(name) for name in "abcd"))
        return order

    runs = [agentsim.simulate(program, strategy=policy) for policy in (Random(7), pickle.loads(pickle.dumps(Random(7))), copy.deepcopy(Random(7)))]
    assert len({(tuple(run.value or ()), run.trace.digest()) for run in runs}) == 1
    assert runs[0].trace.choices.deviations  # the schedule is not FIFO's


class AskedRandom(RandomPolicy):
    """The random policy asked through ``choose`` at every choice (a subclass
    that overrides it): the general path, which the backends' own uniform
    draws must match choice for choice."""

    def choose(self, kind: str, labels: Sequence[str]) -> int:  # type: ignore[override]
        return super().choose(kind, labels)  # type: ignore[arg-type]


@pytest.mark.parametrize("width", [3, 70, 300])
def test_random_draws_taken_by_the_backend_match_the_policy_asked(width: int, backend: str) -> None:
    """The backends draw the random policy's uniforms themselves on their hot
    paths (trio: a batch's order over a plain list, or a SortedList from 64
    tasks on): the same schedule, choices and deviations as asking the
    policy at every choice, seeds 1-3."""

    async def main() -> list[int]:
        woke: list[int] = []

        async def worker(number: int) -> None:
            for round_ in range(3):
                await anyio.sleep(0.01 if number % 3 else 0.02)
                woke.append(number)

        async with anyio.create_task_group() as group:
            for number in range(width):
                group.start_soon(worker, number)
        return woke

    for seed in (1, 2, 3):
        fast = agentsim.simulate(main, strategy="random", seed=seed, backend=backend)
        asked = agentsim.simulate(main, strategy=AskedRandom(seed), seed=seed, backend=backend)
        assert fast.ok and asked.ok
        assert fast.value == asked.value and fast.value != sorted(fast.value or [])
        assert fast.trace.digest() == asked.trace.digest()
        assert fast.trace.deviations == asked.trace.deviations
        # Each deviation's report too: what ran instead of what.
        assert fast.trace.format(last=None) == asked.trace.format(last=None)
        assert "(fifo " in fast.trace.format(last=None)


class AskedPCT(agentsim.PCTPolicy):
    """PCT asked through ``choose`` and checked by the core (a subclass that
    overrides it is not trusted): the general path of every choice."""

    def choose(self, kind: str, labels: Sequence[str]) -> int:  # type: ignore[override]
        return super().choose(kind, labels)  # type: ignore[arg-type]


@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_window_choices_made_by_the_loop_match_the_policy_asked(strategy: str) -> None:
    """The asyncio loop makes a built-in policy's ``"window"`` choices itself
    (random's draw, PCT's ranking) and records them directly: the same
    schedule, choice log, deviations and report as the general path through
    ``SimulationCore.choose``, seeds 1-4."""

    async def main() -> list[str]:
        arrived: list[str] = []

        async def worker(name: str, low: float, high: float) -> None:
            for _ in range(4):
                await sleep_between(low, high)
                arrived.append(name)

        async with asyncio.TaskGroup() as group:
            group.create_task(worker("reply", 0.25, 0.35))
            group.create_task(worker("timeout", 0.3, 0.3))
            group.create_task(worker("chunk", 0.02, 0.06))
        return arrived

    window_choices = 0
    for seed in (1, 2, 3, 4):
        policy = AskedRandom(seed) if strategy == "random" else AskedPCT(seed)
        fast = agentsim.simulate(main, strategy=strategy, seed=seed)
        asked = agentsim.simulate(main, strategy=policy, seed=seed)
        assert fast.ok and asked.ok
        assert fast.value == asked.value
        assert fast.trace.digest() == asked.trace.digest()
        assert list(fast.trace.choices) == list(asked.trace.choices)
        assert fast.trace.deviations == asked.trace.deviations
        assert fast.trace.format(last=None) == asked.trace.format(last=None)
        window_choices += sum(choice.kind == "window" for choice in fast.trace.choices)
    assert window_choices  # the windows overlapped: there were window choices to make
