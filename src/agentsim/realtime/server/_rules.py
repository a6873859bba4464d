"""Server rules the client can break, and the error that reports them.

Each rule is a :class:`Rule`: its id, the sentence of the Realtime API it
enforces, and whether that sentence is a protocol rule (the server rejects
or ignores the event) or an *advisory* behaviour check (legal, but what the
caller hears is probably not what the app meant). The simulated server
checks them on every client event (see ``_server``); ``assert_rules()``
raises for protocol rules unless told otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..._kernel.errors import SimulationConfigError
from ...scenario.errors import ScenarioError


@dataclass(frozen=True)
class Rule:
    """A rule of the Realtime API the simulated server checks: ``id`` (what
    a :class:`RuleViolation` names), ``statement`` (what the API says), and
    ``protocol`` (False: an advisory check of legal behaviour, which
    ``assert_rules()`` leaves out unless asked for by ``only=``)."""

    id: str
    statement: str
    protocol: bool = True


#: Every rule the server checks, by id.
RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "single_active_response",
            "A conversation has at most one active response: response.create while one is in progress (including one "
            "whose cancel is not confirmed yet) is rejected with conversation_already_has_active_response.",
        ),
        Rule(
            "truncate_within_sent_audio",
            "conversation.item.truncate: if audio_end_ms is greater than the audio the server sent for the item, "
            "the server responds with an error (invalid_value) and does not truncate.",
        ),
        Rule(
            "known_tool_call",
            "A function_call_output item answers a function call the model made: its call_id must be one the server "
            "issued (invalid_call_id otherwise).",
        ),
        Rule(
            "no_events_after_close",
            "Once the WebSocket is closed (by the client, or by the server and seen by the client) no event is "
            "accepted on it.",
        ),
        Rule(
            "commit_needs_audio",
            "input_audio_buffer.commit needs at least 100 ms of audio appended since the last commit or clear "
            "(input_audio_buffer_commit_empty otherwise).",
        ),
        Rule(
            "voice_fixed_after_audio",
            "session.update cannot change the voice once the model has responded with audio in the session "
            "(cannot_update_voice; the update is not applied).",
        ),
        Rule(
            "truncate_needs_cancel",
            "Advisory, not a protocol rule: conversation.item.truncate of an item still being generated is legal but "
            "does not stop the response; without response.cancel (or a turn that interrupts it) its audio streams on "
            "after the truncate.",
            protocol=False,
        ),
    )
}


def selected_rules(only: object = None, ignore: object = ()) -> frozenset[str]:
    """The rule ids ``assert_rules(only=..., ignore=...)`` checks: ``only``
    (ids; default every protocol rule) less ``ignore`` (ids). Unknown ids
    are a :class:`~agentsim.SimulationConfigError` listing the known ones."""

    def ids(name: str, value: object) -> frozenset[str]:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise SimulationConfigError(name, value, f"a list of rule ids from {sorted(RULES)}")
        value = tuple(value)
        unknown = [rule for rule in value if not isinstance(rule, str) or rule not in RULES]
        if unknown:
            raise SimulationConfigError(name, unknown, f"rule ids from {sorted(RULES)}")
        return frozenset(value)

    chosen = frozenset(rule.id for rule in RULES.values() if rule.protocol) if only is None else ids("only", only)
    return chosen - ids("ignore", ignore)


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

    @property
    def statement(self) -> str:
        """What the Realtime API says that the client broke."""
        return RULES[self.rule].statement


class RealtimeServerRuleError(ScenarioError):
    """The client broke Realtime server rules. ``violations`` lists them."""

    def __init__(self, violations: Sequence[RuleViolation]) -> None:
        self.violations = tuple(violations)
        lines = "\n".join(f"  {violation.describe()}\n    rule: {violation.statement}" for violation in self.violations)
        super().__init__(f"{len(self.violations)} Realtime server rule violation(s):\n{lines}")
