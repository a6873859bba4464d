"""The main job: find a real race in a voice agent, shrink it, replay it.

``examples/races/duplicate_guardrail_trips.py`` moderates a realtime
assistant's transcript (a real ``RealtimeSession`` on agentsim's scripted
transport): each finished sentence goes to a moderation service with 0.1-0.3 s
latency, and a flagged answer gets one apology. Under stock order the test
passes; whether two checks overlap depends on the service's latency, so the
bug shows up only sometimes in production.

The moderation latency is a window (0.1-0.3 s): run 0 takes its nominal
0.2 s and passes; the explorer sweeps seeds (each seed fixes the
interleaving, including when each check ends against the audio stream's
chunks), stops at the first failure, shrinks it to the fewest deviations from
stock order that still fail, and prints the line that replays it. Then it replays that line, and checks the fixed twin.

    python examples/explore_demo.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "races"))

import duplicate_guardrail_trips as example  # noqa: E402

import agentsim  # noqa: E402


def main() -> None:
    print("stock order (strategy='fifo'):", "passes" if agentsim.simulate(example.racy).ok else "fails", "- the bug hides\n")

    report = agentsim.explore(example.racy, runs=200, strategy="random", database=None)
    print(report.format())
    assert report.failures, "the explorer did not find the race"
    failure = report.failures[0]
    assert failure.minimal is not None

    replayed = agentsim.replay(example.racy, schedule=failure.minimal.schedule)
    assert type(replayed.exception) is type(failure.error)
    print(f"\nreplayed the minimal schedule: {type(replayed.exception).__name__}: {replayed.exception}")

    fixed = agentsim.explore(example.fixed, runs=200, strategy="random", database=None)
    print(f"fixed twin (claims the apology before awaiting): {len(fixed.failures)} failures in {fixed.runs_executed} runs, "
          f"{fixed.distinct_schedules} distinct schedules")
    assert fixed.ok


if __name__ == "__main__":
    main()
