"""Narrow window through the SDK's Runner: a tool timeout a hair before the airline.

``examples/races/timeout_vs_late_result.py`` with the airline answering in
0.5-1.001 s instead of 0.5-1.4 s, against the tool's 1.0 s timeout
(``function_tool(timeout=1.0)``): the tool reserves a seat before the call;
when the SDK cancels it, the racy tool never releases the reservation.

Seeded jitter lands in the 1 ms overlap in 0.2% of runs; as windows, the
SDK's timeout firing first is one of two choices.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "races"))

import timeout_vs_late_result as wide  # noqa: E402

from agentsim.timing import uniform  # noqa: E402

LeakedReservation = wide.LeakedReservation
AIRLINE = uniform(0.5, 1.001)


async def racy() -> None:
    await wide.book(release_on_cancel=False, airline=AIRLINE, model_latency=0.3)


async def fixed() -> None:
    await wide.book(release_on_cancel=True, airline=AIRLINE, model_latency=0.3)
