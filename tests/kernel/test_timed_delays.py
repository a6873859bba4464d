"""Timed delays: under a policy that times them, each timer with a window is
also a "delay" choice (where in its window it lands); FIFO, random and PCT
are unchanged (tests/explore/test_recorded_digests.py), and a timed schedule
replays from its string."""

from __future__ import annotations

import anyio
import pytest

import agentsim
from agentsim._kernel.scheduling.delays import DELAY_OPTIONS, FINE_LANDINGS, NAMED_LANDINGS, DelayOptions
from agentsim._kernel.scheduling.portfolio import MEMBERS, member_for, member_seed
from agentsim._kernel.clock import TICKS_PER_SECOND
from agentsim._kernel.scheduling.random_policy import landing
from agentsim._kernel.tracing.deviation_words import _landing_words
from agentsim.explore import Schedule
from agentsim.timing import sleep_between


async def _landing() -> float:
    await sleep_between(0.2, 0.6)
    return agentsim.now()


def test_delay_options_pin_the_bounds_and_the_quarters() -> None:
    options = DelayOptions("reply#2", 0, 200, 400, 600)
    assert [options.instant(index) for index in range(len(DELAY_OPTIONS))] == [400, 600, 200, 500, 300]
    assert "latest" in options[1] and "reply#2" in options[1] and "nominal" in options[0]
    # Then the fine landings, evenly spread over the window, addressable by index.
    assert len(options) == NAMED_LANDINGS + FINE_LANDINGS
    fine = [options.instant(NAMED_LANDINGS + k) for k in range(FINE_LANDINGS)]
    assert fine[0] == 201 and fine[-1] == 599 and fine == sorted(fine) and len(set(fine)) == FINE_LANDINGS
    # In a report, a fine landing says how far through its window it landed.
    ms = TICKS_PER_SECOND // 1000
    in_ms = DelayOptions("reply#2", 0, 200 * ms, 400 * ms, 600 * ms)
    words = _landing_words(in_ms[NAMED_LANDINGS + 150], in_ms[0])
    assert "landed 75.2% of the way through its window: 501.0 ms" in words and "101.0 ms late" in words, words
    with pytest.raises(IndexError):
        options[NAMED_LANDINGS + FINE_LANDINGS]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_timed_sweep_lands_a_lone_delay_at_every_option(backend: str) -> None:
    landed = {agentsim.simulate(_landing, strategy="timed", seed=seed, backend=backend).unwrap() for seed in range(40)}
    # The bounds, the nominal instant, and fine landings in between: not a grid.
    assert {0.2, 0.4, 0.6} <= landed and all(0.2 <= at <= 0.6 for at in landed)
    assert len(landed - {0.2, 0.3, 0.4, 0.5, 0.6}) >= 8
    assert any(at < 0.4 for at in landed - {0.2}) and any(at > 0.4 for at in landed - {0.6})
    # Random and PCT never move a window nothing overlaps; FIFO is nominal.
    for strategy in ("random", "pct", "fifo"):
        assert {agentsim.simulate(_landing, strategy=strategy, seed=seed, backend=backend).unwrap() for seed in range(10)} == {0.4}


def test_a_timed_run_replays_from_its_seed_and_as_deviations() -> None:
    for seed in range(12):
        result = agentsim.simulate(_landing, strategy="timed", seed=seed)
        again = agentsim.replay(_landing, schedule=f"{seed}:timed")
        assert again.value == result.value and again.trace.digest() == result.trace.digest()
        moves = ",".join(f"{index}={option}" for index, option in sorted(result.trace.deviations.items()))
        as_deviations = agentsim.replay(_landing, schedule=f"{seed}:timed+{moves}")
        assert as_deviations.value == result.value
        # The same deviations under the plain window base ask no delay choice: nominal.
        if moves:
            assert agentsim.replay(_landing, schedule=f"{seed}:fifo+{moves}").value == 0.4


def test_timed_schedules_encode_and_decode() -> None:
    schedule = Schedule.decode("7:timed+0=1,3=2:j0.5")
    assert schedule.delays and schedule.windows and schedule.deviations == {0: 1, 3: 2}
    assert schedule.encode() == "7:timed+0=1,3=2:j0.5"
    assert Schedule.decode("7:fifo+0=1").delays is False
    with pytest.raises(agentsim.SimulationConfigError) as info:
        Schedule(7, "replay", {0: 1}, windows=False, delays=True)
    assert info.value.parameter == "delays"
    with pytest.raises(agentsim.SimulationConfigError):
        Schedule.decode("7:pct")  # PCT's parameters belong to its schedule
    assert Schedule.decode("7:portfolio").strategy == "portfolio"  # its PCT member draws its own


def test_landing_shares() -> None:
    # A share ``late`` of the delays lands late (the latest instant, or a fine
    # landing in the later half); the rest keep their window, land earliest,
    # or land anywhere (a fine landing).
    picks = [landing(index / 1000, 0.5) for index in range(1000)]
    late, rest = picks[:500], picks[500:]
    assert late.count(1) == 300 and all(pick >= NAMED_LANDINGS + FINE_LANDINGS // 2 for pick in late if pick != 1)
    assert rest.count(0) == 250 and abs(rest.count(2) - 75) <= 1  # (a boundary's float rounding)
    anywhere = [pick - NAMED_LANDINGS for pick in rest if pick >= NAMED_LANDINGS]
    assert abs(len(anywhere) - 175) <= 1 and min(anywhere) < FINE_LANDINGS // 10 and max(anywhere) > FINE_LANDINGS * 9 // 10
    assert not {3, 4} & set(picks)  # the quarters are for enumeration and the shrinker


async def _ten_pauses() -> float:
    for _ in range(10):
        await sleep_between(1.0, 6.0)
    return agentsim.now()


def test_timed_landings_add_up_off_the_grid() -> None:
    # On the five named points alone a pause lands at 1 + k * 1.25 s, so ten of
    # them end on a 1.25 s grid, and a race whose band lies between two of its
    # points is never reached. Fine landings make the sum reach between them.
    ends = [agentsim.simulate(_ten_pauses, strategy="timed", seed=seed).unwrap() for seed in range(12)]
    offsets = {round((end - 10.0) % 1.25, 3) for end in ends}
    assert len(offsets) >= 6, offsets


def test_the_portfolio_draws_each_member_by_seed_and_names_it() -> None:
    members = [member_for(seed) for seed in range(400)]
    assert set(members) == set(MEMBERS)
    # Every ten consecutive seeds: timed 6, pct 3, jitter 1.
    for start in range(0, 390, 7):
        window = members[start : start + 10]
        assert (window.count("timed"), window.count("pct"), window.count("jitter")) == (6, 3, 1)
    for seed in range(8):
        result = agentsim.simulate(_landing, strategy="portfolio", seed=seed)
        assert result.strategy == f"portfolio:{member_for(seed)}"
        assert agentsim.replay(_landing, schedule=f"{seed}:portfolio").trace.digest() == result.trace.digest()


def test_the_portfolio_interleaves_its_members_own_sweeps() -> None:
    """In each block of ten seeds, timed's k-th turn runs timed's k-th seed of
    the block (and pct's, pct's): the portfolio finds what a member's sweep
    finds by its run r by the portfolio run of that member's r-th turn."""

    async def choices() -> list[float]:
        async def reply(name: str) -> float:
            await sleep_between(0.2, 0.6)
            return agentsim.now()

        async with anyio.create_task_group() as group:  # two overlapping replies: an order to choose
            for name in ("a", "b"):
                group.start_soon(reply, name)
        return [await reply("c")]  # and a lone one: where it lands

    for block in (0, 10, 1000):
        turns = [seed for seed in range(block + 1, block + 11) if member_for(seed) == "timed"]
        assert [member_seed(seed) for seed in turns] == list(range(block + 1, block + 7))
        for seed in turns:
            in_portfolio = agentsim.simulate(choices, strategy="portfolio", seed=seed)
            own = agentsim.simulate(choices, strategy="timed", seed=member_seed(seed))
            assert in_portfolio.trace.choices == own.trace.choices
            assert in_portfolio.value == own.value
        pct_turns = [seed for seed in range(block + 1, block + 11) if member_for(seed) == "pct"]
        assert [member_seed(seed) for seed in pct_turns] == list(range(block + 1, block + 4))


def test_timed_leaves_windows_free_where_no_point_timer_competes() -> None:
    """Two windows overlapping by 5 ms, nothing else pending: ``timed`` picks
    the rare order about half the time (both free: a coin flip), ``random``
    about a quarter (each window sampled half the time, and a sampled late
    window almost never lands in the overlap). Seeds 1-200 of each."""

    async def first() -> str:
        order: list[str] = []

        async def end(name: str, low: float, high: float) -> None:
            await sleep_between(low, high)
            order.append(name)

        async with anyio.create_task_group() as group:
            group.start_soon(end, "early", 0.400, 0.505)
            group.start_soon(end, "late", 0.500, 0.600)
        return order[0]

    def late_first(strategy: str) -> float:
        return sum(agentsim.run(first, strategy=strategy, seed=seed) == "late" for seed in range(1, 201)) / 200

    assert 0.4 < late_first("timed") < 0.6
    assert 0.15 < late_first("random") < 0.35


def test_explore_defaults_to_the_portfolio() -> None:
    assert agentsim.ExploreOptions().strategy == "portfolio"

    async def late_reply_times_out() -> None:
        with anyio.fail_after(0.55):
            await sleep_between(0.2, 0.6)

    report = agentsim.explore(late_reply_times_out, runs=60, database=None)
    assert report.failures and report.failures[0].strategy == "portfolio"
