"""Hypothesis integration: the schedule as a strategy, and the realtime
doubles' inputs as strategies, so one ``@given`` test draws what the caller
says and when **and** the order of events, and hypothesis shrinks both::

    from hypothesis import given
    from agentsim.hypothesis import conversations, schedules

    @given(conversation=conversations(), schedule=schedules())
    def test_call(conversation, schedule):
        agentsim.run(call, conversation, strategy=schedule)

``schedules()`` draws each open choice of the simulation (ties, trio
batches, timer windows) from hypothesis; shrinking moves each choice toward
option 0, which is stock order with nominal timing, so a minimal example
has as few deviations as the failure needs. The failing example's report
carries a note with the agentsim schedule of the run (``agentsim.replay(fn,
schedule=...)`` replays it without hypothesis, given the same inputs).

When to use which: :func:`agentsim.explore` for fast seeded sweeps of a
fixed scenario (sharding over xdist workers, the command line, the failure
database, PCT); ``@given`` with :func:`schedules` when the inputs matter as
much as the order and both should shrink together.

Importing this module imports hypothesis (which loads its plugins); ``import
agentsim`` does not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import hypothesis
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from .._kernel.scheduling import ChoiceKind, SchedulingPolicy, eligible_window_options
from .._kernel.tracing.trace import Trace
from .._kernel.errors import SimulationConfigError
from .._kernel.validation import non_negative, whole
from ..explore._schedule import Schedule
from ..realtime.server import CallTool, Reply, SimulatedRealtimeServer

__all__ = [
    "AssistantTurn",
    "Conversation",
    "HypothesisSchedule",
    "Utterance",
    "assistant_turns",
    "conversations",
    "schedules",
    "server_scripts",
    "utterances",
]


#: Sampled windowed timers fire from one of this many steps across their window on.
_TARGET_STEPS = 16


class HypothesisSchedule(SchedulingPolicy):
    """A scheduling policy whose choices hypothesis draws (see :func:`schedules`).

    Windowed timers are explored as the ``random`` strategy does: each, when
    first a candidate, is *free* (its order inside the overlap is a choice)
    or *sampled* (a target instant in its window is drawn, and it is not
    picked before that instant), so a reply can be late past many frequent
    timers. Every draw shrinks toward stock order and nominal timing.
    """

    name = "hypothesis"
    #: Timing is explored through windows; a computed delay takes its nominal value.
    jitter_scale = 0.0

    def __init__(self, data: Any) -> None:
        self._data = data
        self._stopped: BaseException | None = None
        self.choices = 0
        #: The agentsim schedule of the last run (set when it ended).
        self.schedule: Schedule | None = None

    def __repr__(self) -> str:
        return "schedules()" if self.schedule is None else f"schedules()  # ran {self.schedule.encode()!r}"

    def _draw(self, strategy: st.SearchStrategy[Any]) -> Any:
        if self._stopped is not None:
            return 0  # hypothesis ended this example: stock choices until the run ends
        # Through the test case's own data: hypothesis records and shrinks
        # the draw, without printing one "Draw n" line per scheduling choice.
        conjecture = getattr(self._data, "conjecture_data", None)
        try:
            return conjecture.draw(strategy) if conjecture is not None else self._data.draw(strategy)
        except BaseException as stop:  # noqa: BLE001 - StopTest/Frozen: out of data
            # Raised inside the event loop it would tear the simulation down
            # mid-step; it is re-raised from finished(), once the run is over.
            self._stopped = stop
            return 0

    def choose(self, kind: ChoiceKind, labels: Sequence[str]) -> int:
        self.choices += 1
        if kind != "window" or not hasattr(labels, "option"):
            return int(self._draw(st.integers(0, len(labels) - 1)))
        eligible = eligible_window_options(labels, self._target)
        return eligible[int(self._draw(st.integers(0, len(eligible) - 1)))]

    def _target(self, earliest: int, latest: int) -> int | None:
        if not self._draw(st.booleans()):
            return None  # free
        # A target on a 1/16 grid of the window: enough to reach any region,
        # and few values for the shrinker.
        step = int(self._draw(st.integers(0, _TARGET_STEPS)))
        return earliest + (latest - earliest) * step // _TARGET_STEPS

    def finished(self, trace: Trace, seed: int) -> None:
        if self._stopped is not None:
            raise self._stopped  # hypothesis's own signal (the example ran out of data)
        self.schedule = Schedule(seed, "replay", dict(trace.deviations), 0.0)
        try:
            hypothesis.note(f"agentsim schedule: {self.schedule.encode()!r} (agentsim.replay(fn, ..., schedule=...) replays this run)")
        except InvalidArgument:  # not inside a hypothesis test: nothing to report to
            pass


def schedules() -> st.SearchStrategy[HypothesisSchedule]:
    """A hypothesis strategy whose value is a :class:`HypothesisSchedule`:
    pass it as ``strategy=`` to :func:`agentsim.run` or :func:`agentsim.simulate`
    (one simulation per example)."""
    return st.builds(HypothesisSchedule, st.data())


def _check_range(name: str, value: object) -> tuple[float, float]:
    """A ``(low, high)`` range of seconds, checked where it is given."""
    if not isinstance(value, tuple) or len(value) != 2:
        raise SimulationConfigError(name, value, "a (low, high) tuple of seconds, 0 <= low <= high")
    low, high = (non_negative(name, bound, expected="a (low, high) tuple of finite seconds >= 0") for bound in value)
    if low > high:
        raise SimulationConfigError(name, value, "a (low, high) tuple with low <= high")
    return low, high


def _check_sizes(min_size: object, max_size: object) -> None:
    low = whole("min_size", min_size)
    if whole("max_size", max_size) < low:
        raise SimulationConfigError("max_size", max_size, f"a whole number >= min_size ({low})")


def _check_words(words: object) -> None:
    if isinstance(words, (str, bytes)) or not isinstance(words, Sequence) or not words or not all(isinstance(word, str) for word in words):
        raise SimulationConfigError("words", words, "a non-empty list of words (str) to make phrases from")


def _check_tools(tools: object) -> None:
    if tools is None:
        return
    if not isinstance(tools, Mapping) or not all(isinstance(name, str) and isinstance(arguments, st.SearchStrategy) for name, arguments in tools.items()):
        raise SimulationConfigError("tools", tools, "a mapping of tool name (str) to a hypothesis strategy of its arguments (a dict), or None")


def _seconds(low: float, high: float) -> st.SearchStrategy[float]:
    # Whole milliseconds: readable examples, and shrinking has fewer values to try.
    return st.integers(round(low * 1000), round(high * 1000)).map(lambda ms: ms / 1000)


_WORDS = ("where", "is", "my", "order", "book", "a", "table", "for", "two", "cancel", "it", "thanks", "yes", "no", "wait")


def _phrases(words: Sequence[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(list(words)), min_size=1, max_size=6).map(" ".join)


@dataclass(frozen=True)
class Utterance:
    """The caller says ``transcript`` from ``at`` for ``seconds`` (virtual seconds)."""

    transcript: str
    at: float
    seconds: float

    @property
    def ends(self) -> float:
        return round(self.at + self.seconds, 3)  # whole milliseconds, as drawn


def utterances(
    *,
    min_size: int = 1,
    max_size: int = 3,
    start: float = 0.2,
    pause: tuple[float, float] = (0.0, 3.0),
    seconds: tuple[float, float] = (0.3, 2.0),
    words: Sequence[str] = _WORDS,
) -> st.SearchStrategy[list[Utterance]]:
    """What a caller says, one utterance after another (never overlapping):
    each starts ``pause`` seconds after the previous one ends (the first at
    ``start`` plus a pause) and lasts ``seconds``. Shrinks toward fewer,
    shorter, earlier utterances."""
    _check_sizes(min_size, max_size)
    non_negative("start", start, expected="the virtual second the caller may first speak, >= 0")
    _check_range("pause", pause)
    _check_range("seconds", seconds)
    _check_words(words)

    @st.composite
    def draw(draw_: st.DrawFn) -> list[Utterance]:
        count = draw_(st.integers(min_size, max_size))
        said: list[Utterance] = []
        end = start
        for _ in range(count):
            at = round(end + draw_(_seconds(*pause)), 3)
            utterance = Utterance(draw_(_phrases(words)), at, draw_(_seconds(*seconds)))
            said.append(utterance)
            end = utterance.ends
        return said

    return draw()


def server_scripts(
    tools: Mapping[str, st.SearchStrategy[dict[str, Any]]] | None = None,
    *,
    min_size: int = 1,
    max_size: int = 3,
    audio_seconds: tuple[float, float] = (0.3, 4.0),
    words: Sequence[str] = _WORDS,
) -> st.SearchStrategy[list[Reply | CallTool]]:
    """What the simulated server answers, step by step: ``Reply`` (a
    transcript and its audio length) or, when ``tools`` maps tool names to
    strategies of their arguments, ``CallTool``."""
    _check_tools(tools)
    _check_sizes(min_size, max_size)
    _check_range("audio_seconds", audio_seconds)
    _check_words(words)
    reply = st.builds(Reply, _phrases(words), _seconds(*audio_seconds))
    step: st.SearchStrategy[Reply | CallTool] = reply
    if tools:
        calls = [st.builds(CallTool, st.just(name), arguments) for name, arguments in tools.items()]
        step = st.one_of(reply, *calls)
    return st.lists(step, min_size=min_size, max_size=max_size)


@dataclass(frozen=True)
class Conversation:
    """A call: what the server answers (``script``), what the caller says and
    when (``said``), and when the caller hangs up (``hang_up_at``)."""

    script: list[Reply | CallTool]
    said: list[Utterance]
    hang_up_at: float

    def server(self, **options: Any) -> SimulatedRealtimeServer:
        """A :class:`SimulatedRealtimeServer` answering with ``script``
        (``options``: its latencies, speeds...)."""
        return SimulatedRealtimeServer(self.script, **options)

    def speak(self, server: SimulatedRealtimeServer) -> None:
        """Schedule the caller's utterances on ``server`` (call it once the
        session is connected)."""
        for utterance in self.said:
            server.user_speaks(utterance.transcript, at=utterance.at, seconds=utterance.seconds)


def conversations(
    tools: Mapping[str, st.SearchStrategy[dict[str, Any]]] | None = None,
    *,
    max_turns: int = 3,
    seconds: tuple[float, float] = (0.3, 2.0),
    audio_seconds: tuple[float, float] = (0.3, 4.0),
    linger: tuple[float, float] = (1.0, 6.0),
) -> st.SearchStrategy[Conversation]:
    """A call for the simulated server: 1 to ``max_turns`` utterances of
    ``seconds`` each, a script with a step per turn (replies of
    ``audio_seconds``, plus tool calls when ``tools`` are given), and a
    hang-up ``linger`` seconds after the caller last spoke."""
    whole("max_turns", max_turns, minimum=1)
    _check_tools(tools)
    for name, value in (("seconds", seconds), ("audio_seconds", audio_seconds), ("linger", linger)):
        _check_range(name, value)

    @st.composite
    def draw(draw_: st.DrawFn) -> Conversation:
        said = draw_(utterances(max_size=max_turns, seconds=seconds))
        steps = len(said) + (len(said) if tools else 0)
        script = draw_(server_scripts(tools, min_size=len(said), max_size=steps, audio_seconds=audio_seconds))
        return Conversation(script, said, round(said[-1].ends + draw_(_seconds(*linger)), 3))

    return draw()


@dataclass(frozen=True)
class AssistantTurn:
    """One assistant turn for the scripted transport: an optional tool call,
    then ``transcript`` spoken in ``audio_seconds`` of audio."""

    transcript: str
    audio_seconds: float
    tool: tuple[str, dict[str, Any]] | None = None

    async def play(self, ctx: Any, index: int) -> Any:
        """Play the turn in a transport scenario (``ctx`` of
        ``run_scenario``): the tool call (then wait for its output), then
        the audio. Returns the audio stream (``interrupted``, ``sent_ms``)."""
        import json

        from ..contrib.openai_agents.sdk import model_events
        from ..realtime import turn_started

        response_id, item_id = f"response_{index}", f"item_{index}"
        if self.tool is not None:
            name, arguments = self.tool
            await ctx.emit(
                turn_started(response_id),
                model_events.RealtimeModelToolCallEvent(name=name, call_id=f"call_{index}", arguments=json.dumps(arguments)),
            )
            await ctx.expect_call("tool_output")
        stream = ctx.stream_audio(response_id=response_id, item_id=item_id, duration=self.audio_seconds, transcript=self.transcript)
        await stream
        return stream


def assistant_turns(
    tools: Mapping[str, st.SearchStrategy[dict[str, Any]]] | None = None,
    *,
    min_size: int = 1,
    max_size: int = 3,
    audio_seconds: tuple[float, float] = (0.3, 4.0),
    words: Sequence[str] = _WORDS,
) -> st.SearchStrategy[list[AssistantTurn]]:
    """Assistant turns for :class:`~agentsim.realtime.ScriptedRealtimeTransport`
    scenarios (``await turn.play(ctx, i)``), some with a tool call when
    ``tools`` are given."""
    _check_tools(tools)
    _check_sizes(min_size, max_size)
    _check_range("audio_seconds", audio_seconds)
    _check_words(words)
    tool: st.SearchStrategy[tuple[str, dict[str, Any]] | None] = st.none()
    if tools:
        tool = st.one_of(st.none(), *(st.tuples(st.just(name), arguments) for name, arguments in tools.items()))
    turn = st.builds(AssistantTurn, _phrases(words), _seconds(*audio_seconds), tool)
    return st.lists(turn, min_size=min_size, max_size=max_size)


# What tracebacks, reprs and pickles show: the public module name (see public_names.py).
from .._kernel.public_names import present_as  # noqa: E402

present_as("agentsim.hypothesis", globals())
