"""``@given`` over a realtime call: drawn conversation and drawn schedule,
shrunk together by hypothesis."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import agentsim
from agentsim.hypothesis import (
    AssistantTurn,
    Conversation,
    HypothesisSchedule,
    assistant_turns,
    conversations,
    schedules,
    utterances,
)
from agentsim.realtime.server import RealtimeServerRuleError, raw_server_event
from agentsim.timing import uniform

pytestmark = pytest.mark.filterwarnings("ignore::agentsim.LeftoverTasksWarning")
# No explain phase: it reruns variations of the minimal example only to
# annotate the report, which costs as many runs as shrinking.
SETTINGS = settings(
    max_examples=60,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
)


def _is_transcript(event: Any) -> bool:
    raw = raw_server_event(event)
    return raw is not None and raw["type"] == "conversation.item.input_audio_transcription.completed"


async def call(conversation: Conversation, app_adds_context: bool) -> None:
    """A planted race: the app sends a message (which creates a response)
    when a transcript arrives, while server VAD creates one too. When the
    network delays ``response.created`` more than the transcript, both
    responses are requested and the server rejects the second."""
    from agents.realtime import RealtimeAgent, RealtimeRunner

    server = conversation.server(latency=uniform(0.01, 0.08))
    config: dict[str, Any] = {"tracing_disabled": True}
    if not app_adds_context:
        config["model_settings"] = {"turn_detection": {"type": "server_vad", "create_response": False}}
    session = await RealtimeRunner(RealtimeAgent(name="Orders"), model=server.model(), config=config).run()  # type: ignore[arg-type]
    async with session:
        conversation.speak(server)
        try:
            async with asyncio.timeout(conversation.hang_up_at):
                async for event in session:
                    if _is_transcript(event):
                        await session.send_message("(context: the caller is on the orders page)")
        except TimeoutError:
            pass
    server.assert_rules()


@pytest.mark.slow  # ~400 runs of a real SDK session: hypothesis finds it in a few, then shrinks
def test_given_finds_the_planted_race_and_reports_a_minimal_replayable_example() -> None:
    found: list[tuple[Conversation, HypothesisSchedule]] = []

    @SETTINGS
    @given(conversation=conversations(max_turns=3), schedule=schedules())
    def test_call(conversation: Conversation, schedule: HypothesisSchedule) -> None:
        try:
            agentsim.run(call, conversation, True, strategy=schedule)
        except RealtimeServerRuleError:
            found.append((conversation, schedule))
            raise

    with pytest.raises(RealtimeServerRuleError) as info:
        test_call()
    # Hypothesis shrank the inputs with the schedule: one utterance, one reply.
    conversation, schedule = found[-1]
    assert len(conversation.said) == 1 and len(conversation.script) == 1
    assert "single_active_response" in str(info.value)
    # Its report names the agentsim schedule of the minimal run...
    notes = "\n".join(getattr(info.value, "__notes__", []))
    match = re.search(r"agentsim schedule: '([^']+)'", notes)
    assert match is not None, notes
    assert schedule.schedule is not None and match.group(1) == schedule.schedule.encode()
    # ...which replays without hypothesis, given the same inputs.
    again = agentsim.replay(call, conversation, True, schedule=match.group(1))
    assert isinstance(again.exception, RealtimeServerRuleError)
    # The schedule shrank with the inputs to a few deviations from stock
    # order (none needed when these inputs fail in stock order too: some
    # utterance timings make the transcript beat response.created at nominal
    # latency; hypothesis's shrinking is heuristic, so "few", not "fewest").
    deviations = len(schedule.schedule.deviations or {})
    assert deviations <= 3, schedule.schedule.encode()
    if agentsim.simulate(call, conversation, True).ok:
        assert deviations >= 1


def test_given_shrinks_inputs_and_schedule_of_a_race_only_a_schedule_shows() -> None:
    # Two windows of drawn width around one instant: stock order (nominal
    # timing) always passes; the race needs the reply to fire after the timeout.
    from agentsim.timing import sleep_between

    async def reply_or_apologise(slack_ms: int) -> list[str]:
        spoken: list[str] = []

        async def answer() -> None:
            await sleep_between(0.99 - slack_ms / 1000, 1.0 + slack_ms / 1000)
            spoken.append("answer")

        task = asyncio.create_task(answer())
        await asyncio.sleep(1.0)
        if not task.done():
            spoken.append("sorry")
        await task
        assert len(spoken) == 1, spoken
        return spoken

    found: list[tuple[int, HypothesisSchedule]] = []

    @SETTINGS
    @given(slack_ms=st.integers(0, 50), schedule=schedules())
    def test_reply(slack_ms: int, schedule: HypothesisSchedule) -> None:
        try:
            agentsim.run(reply_or_apologise, slack_ms, strategy=schedule)
        except AssertionError:
            found.append((slack_ms, schedule))
            raise

    with pytest.raises(AssertionError):
        test_reply()
    slack_ms, schedule = found[-1]
    assert slack_ms <= 1  # (nearly) the narrowest window: even at 0 the reply may land at the timeout's instant, after it
    assert schedule.schedule is not None and len(schedule.schedule.deviations or {}) == 1
    assert agentsim.simulate(reply_or_apologise, slack_ms).ok  # stock order passes
    assert not agentsim.replay(reply_or_apologise, slack_ms, schedule=schedule.schedule).ok


def test_given_finds_nothing_in_the_fixed_app() -> None:
    @settings(SETTINGS, max_examples=25)
    @given(conversation=conversations(max_turns=2), schedule=schedules())
    def test_call(conversation: Conversation, schedule: HypothesisSchedule) -> None:
        agentsim.run(call, conversation, False, strategy=schedule)

    test_call()


@given(said=utterances(max_size=4))
@settings(max_examples=50, database=None)
def test_utterances_follow_one_another(said: list[Any]) -> None:
    assert 1 <= len(said) <= 4
    for before, after in zip(said, said[1:]):
        assert after.at >= before.ends
    assert all(0.3 <= utterance.seconds <= 2.0 and utterance.transcript for utterance in said)


def test_assistant_turns_play_in_a_transport_scenario() -> None:
    from agents import function_tool
    from agents.realtime import RealtimeAgent, RealtimeRunner

    from agentsim.realtime import ScriptedRealtimeTransport

    @function_tool
    def lookup(order_id: str) -> str:
        """Look up an order."""
        return f"{order_id} shipped"

    orders = st.fixed_dictionaries({"order_id": st.sampled_from(["o1", "o2"])})

    @settings(max_examples=15, database=None, deadline=None)
    @given(turns=assistant_turns({"lookup": orders}), schedule=schedules())
    def test_turns(turns: list[AssistantTurn], schedule: HypothesisSchedule) -> None:
        async def main() -> list[float]:
            transport = ScriptedRealtimeTransport()
            runner = RealtimeRunner(RealtimeAgent(name="Orders", tools=[lookup]), model=transport)
            played: list[float] = []
            all_played = asyncio.Event()

            async def scenario(ctx: Any) -> None:
                await ctx.expect_call("connect")
                for index, turn in enumerate(turns):
                    stream = await turn.play(ctx, index)
                    played.append(stream.sent_ms)
                all_played.set()
                await ctx.expect_call("close")

            async def exercise() -> None:
                async with await runner.run():
                    await all_played.wait()  # the session runs the tools meanwhile

            await transport.run_scenario(scenario=scenario, exercise=exercise, timeout=60)
            return played

        played = agentsim.run(main, strategy=schedule)
        assert played == pytest.approx([turn.audio_seconds * 1000 for turn in turns], abs=20)

    test_turns()


def test_fifo_orders_a_call_as_the_policy_path_with_no_deviation() -> None:
    """FIFO fires a window nominally due later as a point timer (a shortcut,
    no window bookkeeping per wire frame); it must order every call exactly as
    the policy path taking the stock option at each choice. Windows re-armed
    with nothing left to wait (a server frame right behind the one ahead)
    are where a shortcut would differ: about a third of these calls have one."""

    @settings(max_examples=12, database=None, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(conversation=conversations(max_turns=3))
    def check(conversation: Conversation) -> None:
        fifo = agentsim.simulate(call, conversation, True)
        stock = agentsim.simulate(call, conversation, True, strategy=agentsim.ReplayPolicy({}))
        assert (fifo.ok, fifo.trace.order_digest()) == (stock.ok, stock.trace.order_digest())

    check()
