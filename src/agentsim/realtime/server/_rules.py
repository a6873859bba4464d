"""Server rules the client can break, and the error that reports them.

The simulated server checks them on every client event (see ``_server``):

* ``single_active_response``: no ``response.create`` while a response is active;
* ``truncate_within_sent_audio``: ``conversation.item.truncate`` may not cut
  an item later than the audio the server sent for it;
* ``known_tool_call``: a ``function_call_output`` must answer a call the
  server made;
* ``no_events_after_close``: nothing is sent on a connection after the client
  closed it or saw the server close it (events already in flight when the
  server closes are lost, not a violation);
* ``commit_needs_audio``: ``input_audio_buffer.commit`` needs at least
  100 ms of appended audio;
* ``voice_fixed_after_audio``: the voice cannot change once the session has
  produced assistant audio;
* ``truncate_needs_cancel``: truncating an answer still being generated does
  not stop it; without a ``response.cancel`` the audio streams on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...scenario.errors import ScenarioError


@dataclass(frozen=True)
class RuleViolation:
    """A server rule the client broke: which ``rule``, at what virtual ``time``,
    with which client ``event``; ``detail`` says how."""

    rule: str
    time: float
    event: dict[str, Any]
    detail: str

    def describe(self) -> str:
        return f"{self.time:.3f}s {self.rule}: {self.detail} (client event {self.event.get('type')})"


class RealtimeServerRuleError(ScenarioError):
    """The client broke Realtime server rules. ``violations`` lists them."""

    def __init__(self, violations: Sequence[RuleViolation]) -> None:
        self.violations = tuple(violations)
        lines = "\n".join(f"  {violation.describe()}" for violation in self.violations)
        super().__init__(f"{len(self.violations)} Realtime server rule violation(s):\n{lines}")
