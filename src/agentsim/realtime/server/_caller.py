"""``SimulatedCaller``: a caller for long voice sessions on the simulated server.

It speaks turns to the server (as server VAD hears them), listens to the
app's player (barge-ins happen while assistant audio is *playing*, not at an
instant of the clock), pauses, sometimes stays silent past the idle timeout,
asks questions that make the model call a tool, and hangs up at the end. Its
decisions are drawn from the simulation's seed (``seeded_random``) and its
pauses are windowed timers the explorer orders and times, so one seed fixes
a call and a sweep explores calls. ``report()`` says what happened.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._kernel.core import require_core, seeded_random
from ..._kernel.errors import SimulationConfigError
from ..._kernel.validation import non_negative, positive
from ...toolkit.timing import sleep_between
from ._script import CallTool, Reply
from ._session import turn_detection

if TYPE_CHECKING:
    from ._server import SimulatedRealtimeServer

#: What the caller says when no phrases are given.
PHRASES = ("where is my order", "can you check the delivery date", "what about my refund", "tell me more", "is there anything else", "thanks")
#: How long to wait for an answer to be heard before giving up on it.
ANSWER_WAIT = 60.0
#: How often a caller whose session ended listens for a new one.
RECONNECT_POLL = 0.25
#: How long a caller waits, in a new session, for the answer its old one owed.
RESUMED_ANSWER_WAIT = 10.0


def _lookup(turn: int) -> CallTool:
    return CallTool("lookup_order", {"order_id": str(1000 + turn)})


@dataclass(frozen=True)
class CallReport:
    """What happened in a :class:`SimulatedCaller`'s call.

    ``turns`` spoken, of which ``barge_ins`` started while assistant audio
    was playing and ``tool_questions`` asked for a tool; ``silences``:
    pauses past the idle timeout; ``tool_calls``, ``responses`` and
    ``cancelled``: what the server did; ``heard_seconds`` (the player) and
    ``sent_seconds`` (the server) of assistant audio; ``latencies``: end of
    the caller's speech to the first audio heard, per answered turn, with
    ``latency_p50``/``latency_p95``/``latency_max`` (None with no answer);
    ``unanswered``: turns no audio answered; ``violations``: the server
    rules broken (described); ``drift_ms_max``: the largest gap seen
    between the SDK's playback tracker and what the player played (sampled
    at each turn that started during audio); ``hung_up``: the caller ended
    the call. Across sessions (the server ended one: its session limit, a
    dropped connection): ``sessions`` the app held during the call (1: it
    never reconnected); ``dropped``: the line went dead, no new session
    within the caller's ``reconnect_wait``, before the caller was done;
    ``lost_answers``: turns whose answer never came because their session
    ended first; ``double_answers``: turns answered more than once (an app
    that asks its new session the old question again).
    """

    minutes: float
    turns: int
    barge_ins: int
    tool_questions: int
    silences: int
    tool_calls: int
    responses: int
    cancelled: int
    heard_seconds: float
    sent_seconds: float
    latencies: tuple[float, ...]
    latency_p50: float | None
    latency_p95: float | None
    latency_max: float | None
    unanswered: int
    violations: tuple[str, ...]
    drift_ms_max: float
    hung_up: bool
    sessions: int = 1
    dropped: bool = False
    lost_answers: int = 0
    double_answers: int = 0

    def format(self) -> str:
        latency = "no answer heard" if self.latency_p50 is None else f"p50 {self.latency_p50:.2f} s, p95 {self.latency_p95:.2f} s, max {self.latency_max:.2f} s"
        return "\n".join(
            [
                f"{self.minutes:.1f} min: {self.turns} turns ({self.barge_ins} barge-ins during assistant audio, {self.tool_questions} tool questions, {self.silences} silences past the idle timeout)",
                f"server: {self.responses} responses, {self.cancelled} cancelled, {self.tool_calls} tool calls; {len(self.violations)} rule(s) broken",
                f"audio: {self.heard_seconds:.1f} s heard of {self.sent_seconds:.1f} s sent; latency to first audio heard: {latency}; {self.unanswered} unanswered",
                f"tracker vs player: {self.drift_ms_max:.1f} ms at most" + ("; the caller hung up" if self.hung_up else ""),
                f"sessions: {self.sessions}; {self.lost_answers} answer(s) lost across a session's end, {self.double_answers} turn(s) answered twice"
                + ("; the line went dead (no new session)" if self.dropped else ""),
            ]
        )


def _percentile(values: Sequence[float], share: float) -> float | None:
    if not values:
        return None
    import numpy

    return float(numpy.percentile(numpy.asarray(values), share))


def _window(name: str, value: object) -> tuple[float, float]:
    if not (isinstance(value, tuple) and len(value) == 2):
        raise SimulationConfigError(name, value, "a (low, high) range of seconds")
    low = non_negative(f"{name}[0]", value[0])
    high = non_negative(f"{name}[1]", value[1])
    if high < low:
        raise SimulationConfigError(name, value, "a (low, high) range of seconds with low <= high")
    return low, high


def _probability(name: str, value: object) -> float:
    number = non_negative(name, value, expected="a probability from 0 to 1")
    if number > 1:
        raise SimulationConfigError(name, value, "a probability from 0 to 1")
    return number


@dataclass
class _Ear:
    """What the caller hears of the player: the items that started and ended."""

    started: list[str] = field(default_factory=list)
    ended: set[str] = field(default_factory=set)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, what: str, item_id: str) -> None:
        if what == "start" and item_id not in self.started:
            self.started.append(item_id)
        elif what in ("finished", "interrupted"):
            self.ended.add(item_id)
        self.changed.set()

    async def until(self, ready: Callable[[], bool], seconds: float) -> bool:
        """Wait until ``ready()`` (checked at each change), at most ``seconds``."""
        try:
            async with asyncio.timeout(seconds):
                while not ready():
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            return False
        return True


class SimulatedCaller:
    """A caller on the line for ``minutes`` of a call, against the simulated server.

    The caller speaks turns of ``speaking`` seconds (a ``(low, high)`` range,
    drawn per turn), words from ``phrases``; the server answers each with a
    :class:`Reply` of ``answer_seconds`` of audio, or, with probability
    ``tool_questions``, with ``tool_call(turn)`` (default: the
    ``lookup_order`` tool) and then ``follow_up``. It listens to ``player``
    (the :class:`~agentsim.audio.SimulatedPlayer` the app feeds): once an
    answer is heard, with probability ``barge_in`` it speaks again
    ``barge_in_after`` seconds in, if the answer is still playing (a
    barge-in); otherwise it waits for the answer to end and pauses for
    ``pause`` seconds (a windowed timer the explorer orders and times), or,
    with probability ``silence``, past the server's idle timeout. At the end
    it hangs up (``hang_up``: the server closes the connection).

    When the server ends a session before the call is over (its
    ``max_session_seconds``, a dropped connection), the caller stays on the
    line for ``reconnect_wait`` seconds: if the app connects again (a new
    session, the same caller and conversation) the call goes on; if not,
    the line is dead (``CallReport.dropped``, which :func:`check_call`
    fails)::

        server = SimulatedRealtimeServer(generation_speed=1.5)
        player = SimulatedPlayer(network_delay=uniform(0.02, 0.1), jitter_buffer_ms=100)
        caller = SimulatedCaller(server, player, minutes=20)
        async with await RealtimeRunner(agent, model=server.model()).run(model_config={"playback_tracker": player.tracker}) as session:
            calling = caller.start()

            async def play():
                async for event in session:
                    player.on_event(event)

            playing = asyncio.create_task(play())
            report = await calling          # until the caller hangs up
            playing.cancel()
        print(report.format())

    Every decision (what is said, which turn asks for a tool, a barge-in, a
    silence) is drawn from the simulation's seed: one seed, one call, and a
    sweep explores calls. ``call_seed`` fixes the call instead: every run of
    a sweep is the same call, and what the sweep varies is its schedule
    (the order of events, where each latency lands), as a race late in a
    call needs.
    """

    def __init__(
        self,
        server: SimulatedRealtimeServer,
        player: Any,
        *,
        minutes: float = 10.0,
        phrases: Sequence[str] = PHRASES,
        speaking: tuple[float, float] = (1.0, 3.5),
        answer_seconds: tuple[float, float] = (2.0, 10.0),
        pause: tuple[float, float] = (1.0, 6.0),
        barge_in: float = 0.25,
        barge_in_after: tuple[float, float] = (0.5, 2.5),
        tool_questions: float = 0.2,
        tool_call: Callable[[int], CallTool] = _lookup,
        follow_up: Reply = Reply("I checked: your order ships tomorrow", audio_seconds=3.0),
        silence: float = 0.0,
        hang_up: bool = True,
        reconnect_wait: float = 10.0,
        call_seed: int | str | None = None,
        name: str = "caller",
    ) -> None:
        from ._server import SimulatedRealtimeServer

        if not isinstance(server, SimulatedRealtimeServer):
            raise SimulationConfigError("server", server, "the SimulatedRealtimeServer the app is connected to")
        if not callable(getattr(player, "add_playback_listener", None)):
            raise SimulationConfigError("player", player, "the SimulatedPlayer the app feeds (agentsim.audio.SimulatedPlayer)")
        positive("minutes", minutes, expected="the call's length in minutes (> 0)")
        if isinstance(phrases, str) or not isinstance(phrases, Sequence) or not phrases or not all(isinstance(p, str) and p for p in phrases):
            raise SimulationConfigError("phrases", phrases, "a non-empty list of non-empty strings (what the caller says)")
        if not callable(tool_call):
            raise SimulationConfigError("tool_call", tool_call, "a function turn -> CallTool(...) (the tool a question makes the model call)")
        if not isinstance(follow_up, Reply):
            raise SimulationConfigError("follow_up", follow_up, "a Reply: the answer after a tool call")
        if not isinstance(hang_up, bool) or not isinstance(name, str):
            raise SimulationConfigError("hang_up/name", (hang_up, name), "a bool and a str")
        if call_seed is not None and (isinstance(call_seed, bool) or not isinstance(call_seed, (int, str))):
            raise SimulationConfigError("call_seed", call_seed, "an int or str that fixes the call across runs, or None to draw it from the run's seed")
        self.server = server
        self.player = player
        self.minutes = float(minutes)
        self.phrases = tuple(phrases)
        self.speaking = _window("speaking", speaking)
        self.answer_seconds = _window("answer_seconds", answer_seconds)
        self.pause = _window("pause", pause)
        self.barge_in_after = _window("barge_in_after", barge_in_after)
        self.barge_in = _probability("barge_in", barge_in)
        self.tool_questions = _probability("tool_questions", tool_questions)
        self.silence = _probability("silence", silence)
        self.tool_call = tool_call
        self.follow_up = follow_up
        self.reconnect_wait = non_negative("reconnect_wait", reconnect_wait, expected="seconds the caller stays on the line for a new session (>= 0)")
        self.hang_up = hang_up
        self.call_seed = call_seed
        self.name = name
        self._ear = _Ear()
        self._task: asyncio.Task[CallReport] | None = None
        self._counts = {"turns": 0, "barge_ins": 0, "tool_questions": 0, "silences": 0, "unanswered": 0, "lost_answers": 0, "double_answers": 0}
        #: Sessions the app had opened before the call (the first of the call among them).
        self._sessions_before = 0
        self._dropped = False
        self._end = 0.0
        #: Answers heard when the last turn's speech ended (None: no turn yet).
        self._heard_at_last_turn: int | None = None
        self._latencies: list[float] = []
        self._drift: list[float] = []
        self._hung_up = False
        self._started_at = 0.0
        player.add_playback_listener(self._ear)
        server.add_close_listener(self._ear.changed.set)  # a turn's wait ends with its session

    # -- the call ---------------------------------------------------------------------------

    def start(self) -> asyncio.Task[CallReport]:
        """Start the caller as a task of the running simulation (after the app
        connected: speech with no connection is not heard)."""
        require_core("SimulatedCaller.start")
        if self._task is not None:
            raise SimulationConfigError("SimulatedCaller.start", "a second start", "one call per caller: make a new SimulatedCaller")
        self._task = asyncio.get_running_loop().create_task(self.run(), name=f"SimulatedCaller:{self.name}")
        return self._task

    async def run(self) -> CallReport:
        """The whole call (``start()`` runs it as a task); returns the report."""
        loop = asyncio.get_running_loop()
        rng = self._decisions()
        self._started_at = loop.time()
        self._sessions_before = self._sessions() - (0 if self.server.closed else 1)
        end = self._end = self._started_at + self.minutes * 60
        await sleep_between(*self.pause)
        turn = 0
        while loop.time() + self.speaking[1] < end:
            if self.server.closed and not await self._reconnected(end):
                break
            await self._turn(turn, rng)
            turn += 1
            if loop.time() >= end:
                break
            if rng.random() < self.barge_in and await self._barge_in_point():
                continue  # the next turn starts now, over the answer
            await self._ear.until(lambda: not self._playing_or_pending() or self.server.closed, ANSWER_WAIT)
            await self._pause(rng, end)
        self._count_answers()
        if self.hang_up and not self.server.closed:
            self._hung_up = True
            await self.server.disconnect()
        return self.report()

    def _decisions(self) -> random.Random:
        """The call's generator: the run's seed's, or ``call_seed``'s (the same call in every run)."""
        if self.call_seed is None:
            return seeded_random(f"caller:{self.name}")
        return random.Random(f"agentsim:caller:{self.name}:call:{self.call_seed}")

    def _sessions(self) -> int:
        """Sessions the server has accepted so far (refused handshakes left out)."""
        return sum(1 for request in self.server.connections if request.rejected is None)

    async def _reconnected(self, end: float) -> bool:
        """The server ended the session: stay on the line ``reconnect_wait``
        seconds for a new one (False: the line is dead)."""
        loop = asyncio.get_running_loop()
        give_up = min(end, loop.time() + self.reconnect_wait)
        while self.server.closed and loop.time() < give_up:
            await asyncio.sleep(min(RECONNECT_POLL, give_up - loop.time()))
        if self.server.closed:
            self._dropped = loop.time() < end
            return False
        return True

    def _count_answers(self) -> None:
        """The last turn's answers, once the next turn starts (or the call ends)."""
        if self._heard_at_last_turn is not None and len(self._ear.started) - self._heard_at_last_turn > 1:
            self._counts["double_answers"] += 1

    async def _turn(self, turn: int, rng: Any) -> None:
        loop = asyncio.get_running_loop()
        phrase = self.phrases[turn % len(self.phrases)]
        marker = f"t{turn:05d}"  # the server picks this turn's answer by it
        if rng.random() < self.tool_questions:
            self._counts["tool_questions"] += 1
            self.server.when_user_says(marker, self.tool_call(turn))
            self.server.add_replies(self.follow_up)
        else:
            words = " ".join(rng.choice(("sure", "let me", "check", "that", "for you", "it", "is", "ready")) for _ in range(rng.randint(4, 20)))
            self.server.when_user_says(marker, Reply(words, audio_seconds=rng.uniform(*self.answer_seconds)))
        if self.player.playing:
            self._counts["barge_ins"] += 1
            self._drift.append(self._tracker_drift())
        self._count_answers()
        heard_before = len(self._ear.started)
        seconds = rng.uniform(*self.speaking)
        self.server.user_speaks(f"{phrase} {marker}", seconds=seconds)
        self._counts["turns"] += 1
        sessions = self._sessions()
        await asyncio.sleep(seconds)
        spoken = loop.time()
        self._heard_at_last_turn = heard_before

        def heard() -> bool:
            return len(self._ear.started) > heard_before

        await self._ear.until(lambda: heard() or self._session_ended(sessions), ANSWER_WAIT)
        ended = not heard() and self._session_ended(sessions)
        if ended and await self._reconnected(self._end):
            # On the line still: the answer may come in the new session.
            await self._ear.until(heard, max(0.0, min(RESUMED_ANSWER_WAIT, spoken + ANSWER_WAIT - loop.time())))
        if heard():
            self._latencies.append(loop.time() - spoken)
        else:
            self._counts["unanswered"] += 1
            self._counts["lost_answers"] += ended

    def _session_ended(self, sessions: int) -> bool:
        """Whether the session a turn was spoken in has ended."""
        return self.server.closed or self._sessions() != sessions

    async def _barge_in_point(self) -> bool:
        """Listen ``barge_in_after`` into the answer: still playing?"""
        await sleep_between(*self.barge_in_after)
        return bool(self.player.playing)

    async def _pause(self, rng: Any, end: float) -> None:
        detection = turn_detection(self.server.session) or {}
        idle_ms = detection.get("idle_timeout_ms")
        loop = asyncio.get_running_loop()
        if rng.random() < self.silence:
            self._counts["silences"] += 1
            quiet = (idle_ms / 1000 if idle_ms else 20.0) + rng.uniform(1.0, 3.0)
            await asyncio.sleep(max(0.0, min(quiet, end - loop.time())))
            return
        await sleep_between(*self.pause)

    def _playing_or_pending(self) -> bool:
        started = self._ear.started
        return bool(self.player.playing) or (bool(started) and started[-1] not in self._ear.ended)

    def _tracker_drift(self) -> float:
        """Milliseconds between the SDK's tracker and what the player played."""
        state = self.player.tracker.get_state()
        item = state.get("current_item_id")
        if not item:
            return 0.0
        return abs(float(state.get("elapsed_ms") or 0.0) - float(self.player.played_ms(item)))

    # -- the report -----------------------------------------------------------------------

    def report(self) -> CallReport:
        """What happened so far (the whole call once ``run`` returned)."""
        require_core("SimulatedCaller.report")
        responses = self.server.responses
        sent = sum(self.server.audio_sent_ms(r["item_id"]) for r in responses if r["item_id"] and r["kind"] == "Reply") / 1000
        latencies = tuple(self._latencies)
        return CallReport(
            minutes=(asyncio.get_running_loop().time() - self._started_at) / 60,
            turns=self._counts["turns"],
            barge_ins=self._counts["barge_ins"],
            tool_questions=self._counts["tool_questions"],
            silences=self._counts["silences"],
            tool_calls=sum(r["kind"] == "CallTool" for r in responses),
            responses=len(responses),
            cancelled=sum(r["cancelled"] for r in responses),
            heard_seconds=self.player.heard_ms / 1000,
            sent_seconds=sent,
            latencies=latencies,
            latency_p50=_percentile(latencies, 50),
            latency_p95=_percentile(latencies, 95),
            latency_max=max(latencies) if latencies else None,
            unanswered=self._counts["unanswered"],
            violations=tuple(violation.describe() for violation in self.server.violations),
            drift_ms_max=max(self._drift, default=0.0),
            hung_up=self._hung_up,
            sessions=max(1, self._sessions() - self._sessions_before),
            dropped=self._dropped,
            lost_answers=self._counts["lost_answers"],
            double_answers=self._counts["double_answers"],
        )
