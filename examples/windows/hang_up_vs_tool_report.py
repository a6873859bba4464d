"""Narrow window through the scripted transport: hang-up as a booking lands.

``examples/races/close_vs_inflight_tool.py`` with the booking taking
2.996-3.010 s instead of exactly 3.0 s; the caller hangs up at 3.0 s. Only
when the booking is written in the very instant of the hang-up does the
hang-up cancel the tool between writing the booking and reporting it:
written, never confirmed to the model.

Seeded jitter never lands on that instant; as windows it is "booking first"
(moved to 3.0 s) and then the hang-up between two steps of the report.

``racy``: hangs up at once. ``fixed``: waits for in-flight tools to report.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "races"))

import close_vs_inflight_tool as exact  # noqa: E402

from agentsim.timing import uniform  # noqa: E402

UnconfirmedBooking = exact.UnconfirmedBooking
BOOKING_TAKES = uniform(2.996, 3.010)


async def racy() -> None:
    await exact.call(graceful=False, booking_takes=BOOKING_TAKES)


async def fixed() -> None:
    await exact.call(graceful=True, booking_takes=BOOKING_TAKES)
