"""Server rules the client can break, and the error that reports them.

Each rule is a :class:`Rule`: its id, the sentence of the Realtime API it
enforces, its check, and whether that sentence is a protocol rule (the
server rejects or ignores the event) or an *advisory* behaviour check
(legal, but what the caller hears is probably not what the app meant). The
simulated server's handlers gather the facts a rule reads and ask its
check (``_state.broke``); ``assert_rules()`` raises for protocol rules
unless told otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..._kernel.errors import SimulationConfigError
from ...scenario.errors import ScenarioError


#: The least audio a commit needs (input_audio_buffer_commit_empty below it).
MIN_COMMIT_MS = 100.0


@dataclass(frozen=True)
class Broken:
    """What a rule's check found: how the client broke it (``detail``) and
    the server's answer, ``(code, message)`` of an error event (None for an
    advisory check: the server answers nothing)."""

    detail: str
    error: tuple[str, str] | None = None


def _single_active_response(active_id: str | None) -> Broken | None:
    if active_id is None:
        return None
    return Broken(f"response.create while {active_id} is active", ("conversation_already_has_active_response", f"Conversation already has an active response {active_id}"))


def _truncate_within_sent_audio(item_id: str, end_ms: int, sent_ms: float) -> Broken | None:
    if end_ms <= sent_ms + 0.5:  # (half a millisecond: the sent audio's rounding)
        return None
    return Broken(f"audio_end_ms={end_ms} but only {sent_ms:.0f} ms of {item_id} were sent", ("invalid_value", f"Audio content of {sent_ms:.0f}ms is already shorter than {end_ms}ms"))


def _known_tool_call(item: dict[str, Any], known_calls: Container[str]) -> Broken | None:
    if item.get("type") != "function_call_output" or item.get("call_id") in known_calls:
        return None
    call_id = item.get("call_id")
    return Broken(f"output for unknown call_id {call_id!r}", ("invalid_call_id", f"no function call with call_id {call_id!r}"))


def _no_events_after_close(kind: str, client_saw_close: bool) -> Broken | None:
    # (The server answers nothing: the connection is closed.)
    return Broken(f"{kind} sent on a connection the client knew was closed") if client_saw_close else None


def _commit_needs_audio(buffered_ms: float) -> Broken | None:
    if buffered_ms >= MIN_COMMIT_MS:
        return None
    return Broken(
        f"only {buffered_ms:.0f} ms of audio appended since the last commit or clear; a commit needs {MIN_COMMIT_MS:.0f} ms",
        (
            "input_audio_buffer_commit_empty",
            f"Error committing input audio buffer: buffer too small. Expected at least {MIN_COMMIT_MS:.0f}ms of audio, "
            f"but buffer only has {buffered_ms:.2f}ms of audio.",
        ),
    )


def _voice_fixed_after_audio(current: str | None, requested: str | None, audio_produced: bool) -> Broken | None:
    if requested is None or requested == current or not audio_produced:
        return None
    return Broken(
        f"voice {current!r} -> {requested!r} after the session produced assistant audio",
        ("cannot_update_voice", "Cannot update a conversation's voice if assistant audio is present."),
    )


def _truncate_needs_cancel(item_id: str, response_id: str, cancelled: bool, streamed_after_ms: float) -> Broken | None:
    if cancelled or streamed_after_ms <= 0:
        return None
    return Broken(
        f"{item_id} was truncated while {response_id} was generating and no response.cancel followed: "
        f"{streamed_after_ms:.0f} ms more audio were streamed after the truncate"
    )


#: Transcription models that take ``languages`` and ``keywords``; the one that takes ``delay``.
LANGUAGE_LIST_MODELS = frozenset({"gpt-transcribe", "gpt-live-transcribe"})
DELAY_MODELS = frozenset({"gpt-realtime-whisper"})
DELAYS = ("minimal", "low", "medium", "high", "xhigh")


def _transcription_settings(transcription: object) -> Broken | None:
    if not isinstance(transcription, dict):
        return None
    model = transcription.get("model")
    problem = None
    if transcription.get("language") and transcription.get("languages"):
        problem = "`language` and `languages` cannot both be set: give one language, or the list of possible ones"
    elif (transcription.get("languages") or transcription.get("keywords")) and model not in LANGUAGE_LIST_MODELS:
        problem = f"`languages` and `keywords` are supported by {' and '.join(sorted(LANGUAGE_LIST_MODELS))}, not {model!r}"
    elif transcription.get("delay") is not None and (model not in DELAY_MODELS or transcription["delay"] not in DELAYS):
        problem = f"`delay` is one of {', '.join(DELAYS)} and is supported only by gpt-realtime-whisper (model {model!r}, delay {transcription['delay']!r})"
    elif transcription.get("prompt") and model in DELAY_MODELS:
        problem = "`prompt` is not supported with gpt-realtime-whisper"
    if problem is None:
        return None
    return Broken(f"audio.input.transcription: {problem}", ("invalid_value", f"Invalid audio.input.transcription: {problem}."))


@dataclass(frozen=True)
class Rule:
    """A rule of the Realtime API the simulated server checks: ``id`` (what
    a :class:`RuleViolation` names), ``statement`` (what the API says),
    ``protocol`` (False: an advisory check of legal behaviour, which
    ``assert_rules()`` leaves out unless asked for by ``only=``), and
    ``check``: given the facts it reads (keywords), what was broken, or None.
    The server's handlers gather the facts and call it (``_state.broke``)."""

    id: str
    statement: str
    check: Callable[..., Broken | None]
    protocol: bool = True


#: Every rule the server checks, by id.
RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "single_active_response",
            "A conversation has at most one active response: response.create while one is in progress (including one "
            "whose cancel is not confirmed yet) is rejected with conversation_already_has_active_response.",
            _single_active_response,
        ),
        Rule(
            "truncate_within_sent_audio",
            "conversation.item.truncate: if audio_end_ms is greater than the audio the server sent for the item, "
            "the server responds with an error (invalid_value) and does not truncate.",
            _truncate_within_sent_audio,
        ),
        Rule(
            "known_tool_call",
            "A function_call_output item answers a function call the model made: its call_id must be one the server "
            "issued (invalid_call_id otherwise).",
            _known_tool_call,
        ),
        Rule(
            "no_events_after_close",
            "Once the WebSocket is closed (by the client, or by the server and seen by the client) no event is "
            "accepted on it.",
            _no_events_after_close,
        ),
        Rule(
            "commit_needs_audio",
            "input_audio_buffer.commit needs at least 100 ms of audio appended since the last commit or clear "
            "(input_audio_buffer_commit_empty otherwise).",
            _commit_needs_audio,
        ),
        Rule(
            "voice_fixed_after_audio",
            "session.update cannot change the voice once the model has responded with audio in the session "
            "(cannot_update_voice; the update is not applied).",
            _voice_fixed_after_audio,
        ),
        Rule(
            "transcription_settings",
            "audio.input.transcription takes `language` or `languages`, not both; `languages` and `keywords` only with "
            "gpt-transcribe and gpt-live-transcribe; `delay` (minimal to xhigh) only with gpt-realtime-whisper, which takes "
            "no `prompt` (invalid_value; the update is not applied).",
            _transcription_settings,
        ),
        Rule(
            "truncate_needs_cancel",
            "Advisory, not a protocol rule: conversation.item.truncate of an item still being generated is legal but "
            "does not stop the response; without response.cancel (or a turn that interrupts it) its audio streams on "
            "after the truncate.",
            _truncate_needs_cancel,
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
