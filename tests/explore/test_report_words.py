"""Every deviation a report shows is explained in words under it: which
timer fired before which, which task ran first, where a delay landed and
how late. The words are read off real runs' deviation events (seeds swept
until each kind of deviation appears)."""

from __future__ import annotations

import asyncio
import re

import trio

import agentsim
from agentsim import Schedule
from agentsim._kernel.tracing.deviation_words import describe_deviation
import agentsim.timing
from agentsim.timing import uniform


def _deviations(result: agentsim.SimulationResult[object]) -> list[agentsim.TraceEvent]:
    return [event for event in result.trace.events if event.kind == "choice" and "(fifo" in event.detail]


def _first_deviation(main: object, strategy: str, *, backend: str = "asyncio", kind: str) -> agentsim.TraceEvent:
    for seed in range(1, 60):
        result = agentsim.simulate(main, backend=backend, strategy=strategy, seed=seed)  # type: ignore[arg-type]
        for event in _deviations(result):
            if event.detail.startswith(kind + " "):
                return event
    raise AssertionError(f"no {kind} deviation in 59 seeds of {strategy}")


async def two_timers() -> None:
    async def sleeper() -> None:
        await asyncio.sleep(0.5)

    async with asyncio.TaskGroup() as group:
        group.create_task(sleeper(), name="first")
        group.create_task(sleeper(), name="second")


def test_a_timer_deviation_says_which_timer_fired_before_which() -> None:
    event = _first_deviation(two_timers, "random", kind="timer")
    words = describe_deviation(event.task, event.detail)
    assert words is not None
    stock = re.search(r"\(fifo \d+: (.*)\)", event.detail)[1]  # type: ignore[index]
    if event.task == "<ready>":
        assert words.startswith("the tasks already ready ran first;") and stock in words
    else:
        assert words.startswith(f"{event.task}'s timer fired before {stock}'s timer")


async def reply_or_apologise(check: bool = False) -> None:
    spoken: list[str] = []

    async def answer() -> None:
        await agentsim.timing.sleep_between(0.98, 1.01)  # the model's reply: 980-1010 ms
        spoken.append("answer")

    task = asyncio.create_task(answer(), name="answer")
    await asyncio.sleep(1.0)
    if not task.done():
        spoken.append("sorry")
    await task
    if check:
        assert len(spoken) == 1, spoken


def test_a_window_deviation_says_what_fired_first_and_that_the_other_lands_late() -> None:
    event = _first_deviation(reply_or_apologise, "random", kind="window")
    words = describe_deviation(event.task, event.detail)
    assert words == (
        "main's timer, due at 1000.000 ms, fired first, before answer#2's delay (980.000-1010.000 ms, nominal 995.000), "
        "which nominal timing ends first: it lands after 1000.000 ms, after its nominal instant: late"
    )


async def lone_reply() -> None:
    await agentsim.timing.sleep(uniform(0.2, 0.6))


def test_a_delay_deviation_says_where_it_landed_and_how_late() -> None:
    event = _first_deviation(lone_reply, "timed", kind="delay")
    words = describe_deviation(event.task, event.detail)
    # A named landing ("at the latest instant of its window") or a fine one ("73.8% of the way through its window").
    assert words is not None and re.match(r"main's delay landed (at [\w ]+ of its window|[\d.]+% of the way through its window): ", words), words
    gap = float(re.search(r"([\d.]+) ms (late|early)$", words)[1])  # type: ignore[index]
    landed = float(re.search(r"window: ([\d.]+) ms from this instant", words)[1])  # type: ignore[index]
    assert abs(abs(landed - 400.0) - gap) < 0.06  # nominal: the window's middle, 400 ms
    assert ("late" in words) == (landed > 400.0)


def test_a_batch_deviation_says_which_task_ran_first() -> None:
    async def main() -> None:
        async def step() -> None:
            await trio.sleep(0.1)

        async with trio.open_nursery() as nursery:
            for name in ("a", "b", "c"):
                nursery.start_soon(step, name=name)

    event = _first_deviation(main, "random", backend="trio", kind="batch")
    words = describe_deviation(event.task, event.detail)
    stock = re.search(r"\(fifo \d+: (.*)\)", event.detail)[1]  # type: ignore[index]
    assert words == f"{event.task} ran before {stock} in their batch of runnable tasks (stock order: {stock} first)"


def test_the_failure_report_explains_each_deviation_under_it() -> None:
    report = agentsim.explore(reply_or_apologise, True, runs=40, strategy="random", database=None)
    [failure] = report.failures
    text = failure.format()
    lines = text.splitlines()
    marked = [index for index, line in enumerate(lines) if line.startswith(">>")]
    assert marked
    for index in marked:
        assert lines[index + 1].lstrip().startswith("= ") and "fired first" in lines[index + 1]
    assert failure.minimal is not None and failure.minimal.smallest
    assert report.fewest_deviations == 1 and "1 failure(s) (the smallest needs 1 deviation(s) from stock order)" in report.format()
    assert "the smallest: the stock schedule passes (or fails another way)" in text
    replayed = agentsim.replay(reply_or_apologise, True, schedule=Schedule.decode(failure.minimal.schedule.encode()))
    assert isinstance(replayed.exception, AssertionError)
