"""The moments the realtime doubles name for coverage (``agentsim.sometimes``).

Each label is evaluated where its moment could happen — every barge-in,
interrupt, cancel and disconnect the double sees — so a sweep's coverage
shows how many runs had it, and 0 when the moment never came about
(``ExploreReport.coverage``; ``require=[...]`` fails a sweep that never
reached one). docs/explore.md has the table.
"""

from __future__ import annotations

from typing import Final

#: The user barged in (speech started, or the app interrupted) while assistant audio was streaming.
BARGE_IN_DURING_AUDIO: Final = "barge-in during assistant audio"
#: A barge-in, interrupt or cancel while a tool call was in flight (asked, no output sent back yet).
INTERRUPT_DURING_TOOL_CALL: Final = "interrupt during a tool call"
#: The connection closed (either side) while a tool call was in flight.
DISCONNECT_DURING_TOOL_CALL: Final = "disconnect during a tool call"
#: A response was cancelled before any of its audio was sent.
CANCEL_BEFORE_FIRST_AUDIO: Final = "response cancelled before its first audio"

#: Every built-in label, in the table's order.
MOMENTS: Final = (BARGE_IN_DURING_AUDIO, INTERRUPT_DURING_TOOL_CALL, DISCONNECT_DURING_TOOL_CALL, CANCEL_BEFORE_FIRST_AUDIO)
