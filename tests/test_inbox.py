"""Inbox: what the doubles' connections buffer for their one reader. It must
wake that reader exactly as asyncio.Queue does, so that replacing the queue
left every schedule as it was: compared under fifo and random seeds 1-6."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import agentsim
from agentsim.toolkit.inbox import Inbox


def _program(make_inbox: Any) -> Any:
    async def main() -> list[tuple[float, str]]:
        inbox = make_inbox()
        seen: list[tuple[float, str]] = []

        async def reader() -> None:
            while True:
                item = await inbox.get()
                if item is None:
                    return
                seen.append((agentsim.now(), item))
                await asyncio.sleep(0)  # others may run between two takes

        async def writer(name: str, spacing: float) -> None:
            for number in range(6):
                await asyncio.sleep(spacing)
                inbox.put_nowait(f"{name}{number}")
                seen.append((agentsim.now(), f"put {name}{number}"))

        async def bystander() -> None:
            for _ in range(12):
                await asyncio.sleep(0.01)
                seen.append((agentsim.now(), "tick"))

        reading = asyncio.create_task(reader())
        await asyncio.gather(writer("a", 0.02), writer("b", 0.03), writer("c", 0.02), bystander())
        inbox.put_nowait(None)
        await reading
        return seen

    return main


@pytest.mark.parametrize(("strategy", "seeds"), [("fifo", [0]), ("random", range(1, 7))])
def test_the_reader_wakes_as_with_an_asyncio_queue(strategy: str, seeds: range) -> None:
    orders = set()
    for seed in seeds:
        with_inbox = agentsim.simulate(_program(Inbox), seed=seed, strategy=strategy)
        with_queue = agentsim.simulate(_program(asyncio.Queue), seed=seed, strategy=strategy)
        assert with_inbox.ok and with_queue.ok
        assert with_inbox.value == with_queue.value
        assert with_inbox.trace.digest() == with_queue.trace.digest()
        assert len([item for _, item in with_inbox.value or [] if not item.startswith(("put", "tick"))]) == 18
        orders.add(tuple(with_inbox.value or ()))
    if strategy == "random":
        assert len(orders) > 1  # the seeds did reorder the puts and takes


def test_taking_from_an_empty_inbox_and_a_second_reader_are_errors() -> None:
    async def main() -> None:
        inbox: Inbox[int] = Inbox()
        with pytest.raises(asyncio.QueueEmpty):
            inbox.get_nowait()
        first = asyncio.create_task(inbox.get())
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError, match="one reader"):
            await inbox.get()
        inbox.put_nowait(7)
        assert await first == 7
        assert inbox.empty() and len(inbox) == 0

    agentsim.run(main)


def test_a_cancelled_reader_does_not_lose_what_arrives_next() -> None:
    async def main() -> list[int]:
        inbox: Inbox[int] = Inbox()
        waiting = asyncio.create_task(inbox.get())
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        inbox.put_nowait(1)  # nobody waits: kept
        inbox.put_nowait(2)
        return [await inbox.get(), inbox.get_nowait()]

    assert agentsim.run(main) == [1, 2]
