"""Each server rule, broken on purpose by a raw client, is reported with the
offending event and its virtual time; the server also answers as the real one
does (an ``error`` event) so the client sees the consequence."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK

import agentsim
from agentsim.realtime.server import RULES, CallTool, RealtimeServerRuleError, Reply, RuleViolation, SimulatedRealtimeServer, SimulatedWebSocket
from agentsim.scenario import ScenarioError


class RawClient:
    """A hand-written client: sends JSON, collects what the server sends."""

    def __init__(self, server: SimulatedRealtimeServer) -> None:
        self.ws: SimulatedWebSocket = server.connect()
        self.received: list[dict[str, Any]] = []
        self.ended: BaseException | None = None
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                self.received.append(json.loads(message))
        except ConnectionClosedError as exc:
            self.ended = exc

    async def send(self, **event: Any) -> None:
        await self.ws.send(json.dumps(event))

    async def until(self, kind: str, count: int = 1) -> dict[str, Any]:
        while sum(event["type"] == kind for event in self.received) < count:
            await asyncio.sleep(0.001)
        return [event for event in self.received if event["type"] == kind][count - 1]

    def errors(self) -> list[str]:
        return [event["error"]["code"] for event in self.received if event["type"] == "error"]

    async def hang_up(self) -> None:
        await self.ws.close()
        await self._reader


def test_a_second_response_create_while_one_is_active() -> None:
    async def main() -> tuple[list[RuleViolation], list[str], float]:
        server = SimulatedRealtimeServer([Reply("a long answer", audio_seconds=4.0), Reply("second")])
        client = RawClient(server)
        await client.send(type="response.create")
        created = await client.until("response.created")
        await asyncio.sleep(0.5)
        sent_at = agentsim.now()
        await client.send(type="response.create")  # the first is still generating
        await client.until("error")
        await client.until("response.done")
        await client.send(type="response.create")  # legal now
        await client.until("response.done", 2)
        await client.hang_up()
        assert created["response"]["status"] == "in_progress"
        return server.violations, client.errors(), sent_at

    violations, errors, sent_at = agentsim.run(main)
    [violation] = violations
    assert violation.rule == "single_active_response"
    assert violation.event == {"type": "response.create"}
    assert violation.time == pytest.approx(sent_at + 0.02)  # when it reached the server
    assert "resp_" in violation.detail
    assert errors == ["conversation_already_has_active_response"]


def test_truncate_past_the_audio_sent() -> None:
    async def main() -> tuple[SimulatedRealtimeServer, list[str], str]:
        server = SimulatedRealtimeServer([Reply("twelve words of answer", audio_seconds=2.0)], generation_speed=1.0)
        client = RawClient(server)
        await client.send(type="response.create")
        item = (await client.until("response.output_item.added"))["item"]["id"]
        await client.until("response.output_audio.delta", 10)  # 400 ms sent by now
        await client.send(type="conversation.item.truncate", item_id=item, content_index=0, audio_end_ms=300)
        await client.until("conversation.item.truncated")
        await client.send(type="conversation.item.truncate", item_id=item, content_index=0, audio_end_ms=1900)
        await client.until("error")
        await client.hang_up()
        return server, client.errors(), item

    server, errors, item = agentsim.run(main)
    # The truncate at 300 ms is within the audio sent, but it cut an answer
    # still being generated and no cancel followed: that is its own rule.
    assert [v.rule for v in server.violations] == ["truncate_within_sent_audio", "truncate_needs_cancel"]
    violation, streamed_on = server.violations
    assert streamed_on.event["audio_end_ms"] == 300
    assert violation.rule == "truncate_within_sent_audio"
    assert violation.event["audio_end_ms"] == 1900 and violation.event["item_id"] == item
    assert "audio_end_ms=1900" in violation.detail and item in violation.detail
    sent_by_then = float(violation.detail.split("only ")[1].split(" ms")[0])
    assert 400 <= sent_by_then < 1900
    assert errors == ["invalid_value"]
    with pytest.raises(RealtimeServerRuleError) as raised:
        server.assert_rules()
    assert isinstance(raised.value, ScenarioError)
    # By default only protocol rules: truncate_needs_cancel is advisory.
    assert raised.value.violations == (violation,)
    assert "truncate_within_sent_audio" in str(raised.value) and "audio_end_ms is greater than" in str(raised.value)
    with pytest.raises(RealtimeServerRuleError) as raised:
        server.assert_rules(only=["truncate_needs_cancel"])
    assert raised.value.violations == (streamed_on,)
    server.assert_rules(ignore=["truncate_within_sent_audio"])  # nothing else broken
    with pytest.raises(RealtimeServerRuleError) as raised:
        server.assert_rules(only=RULES, ignore=[])
    assert raised.value.violations == (violation, streamed_on)


def test_assert_rules_refuses_unknown_rule_ids() -> None:
    server = SimulatedRealtimeServer()
    server.assert_rules(only=["single_active_response"])  # nothing broken: passes
    for bad in ({"only": ["single_response"]}, {"ignore": ["nope"]}, {"only": "single_active_response"}, {"ignore": 3}):
        with pytest.raises(agentsim.SimulationConfigError) as info:
            server.assert_rules(**bad)  # type: ignore[arg-type]
        assert info.value.parameter in ("only", "ignore") and "single_active_response" in str(info.value)


def test_every_rule_states_what_the_api_says_and_only_one_is_advisory() -> None:
    assert all(rule.id == key and len(rule.statement) > 40 for key, rule in RULES.items())
    assert [rule.id for rule in RULES.values() if not rule.protocol] == ["truncate_needs_cancel"]


#: For each rule: facts its check must pass, and facts it must flag.
KEPT_AND_BROKEN: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "single_active_response": ({"active_id": None}, {"active_id": "resp_1"}),
    "truncate_within_sent_audio": ({"item_id": "i", "end_ms": 300, "sent_ms": 300.0}, {"item_id": "i", "end_ms": 301, "sent_ms": 300.0}),
    "known_tool_call": (
        {"item": {"type": "function_call_output", "call_id": "c1"}, "known_calls": {"c1"}},
        {"item": {"type": "function_call_output", "call_id": "c2"}, "known_calls": {"c1"}},
    ),
    "no_events_after_close": ({"kind": "response.create", "client_saw_close": False}, {"kind": "response.create", "client_saw_close": True}),
    "commit_needs_audio": ({"buffered_ms": 100.0}, {"buffered_ms": 99.9}),
    "voice_fixed_after_audio": (
        {"current": "alloy", "requested": "verse", "audio_produced": False},
        {"current": "alloy", "requested": "verse", "audio_produced": True},
    ),
    "transcription_settings": (
        {"transcription": {"model": "gpt-transcribe", "languages": ["en", "fr"]}},
        {"transcription": {"model": "gpt-transcribe", "language": "en", "languages": ["en", "fr"]}},
    ),
    "truncate_needs_cancel": (
        {"item_id": "i", "response_id": "r", "cancelled": True, "streamed_after_ms": 400.0},
        {"item_id": "i", "response_id": "r", "cancelled": False, "streamed_after_ms": 400.0},
    ),
}


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_each_rule_is_an_object_whose_check_tells_kept_from_broken(rule_id: str) -> None:
    rule = RULES[rule_id]
    kept, broken = KEPT_AND_BROKEN[rule_id]
    assert rule.check(**kept) is None
    found = rule.check(**broken)
    assert found is not None and found.detail
    # A protocol rule answers with the real server's error; an advisory one answers nothing.
    assert (found.error is not None) == (rule.protocol and rule_id != "no_events_after_close")


def test_tool_output_for_a_call_the_server_never_made() -> None:
    async def main() -> tuple[SimulatedRealtimeServer, list[str]]:
        server = SimulatedRealtimeServer([CallTool("lookup", {"id": 7}, call_id="call_7")])
        client = RawClient(server)
        await client.send(type="response.create")
        await client.until("response.done")
        output = {"type": "function_call_output", "call_id": "call_7", "output": "found"}
        await client.send(type="conversation.item.create", item=output)  # known: fine
        await client.until("conversation.item.added", 1)
        await client.send(type="conversation.item.create", item={**output, "call_id": "call_8"})
        await client.until("error")
        await client.hang_up()
        return server, client.errors()

    server, errors = agentsim.run(main)
    [violation] = server.violations
    assert violation.rule == "known_tool_call"
    assert violation.event["item"]["call_id"] == "call_8"
    assert errors == ["invalid_call_id"]


def test_sending_after_the_client_closed() -> None:
    async def main() -> SimulatedRealtimeServer:
        server = SimulatedRealtimeServer()
        client = RawClient(server)
        await client.until("session.created")
        await client.hang_up()
        with pytest.raises(ConnectionClosedOK):  # what websockets raises too
            await client.send(type="response.create")
        return server

    server = agentsim.run(main)
    [violation] = server.violations
    assert violation.rule == "no_events_after_close"
    assert violation.event == {"type": "response.create"}
    assert server.log[-1][1:] == ("client", "close")


def test_sending_after_seeing_an_abrupt_disconnect() -> None:
    async def main() -> tuple[SimulatedRealtimeServer, BaseException | None]:
        server = SimulatedRealtimeServer([Reply("hello there", audio_seconds=2.0)])
        client = RawClient(server)
        await client.send(type="response.create")
        await client.until("response.output_audio.delta")
        await server.disconnect(clean=False)
        await client._reader  # the reader sees the connection fail at once
        with pytest.raises(ConnectionClosedError):
            await client.send(type="response.cancel")
        return server, client.ended

    server, ended = agentsim.run(main)
    assert isinstance(ended, ConnectionClosedError)
    [violation] = server.violations
    assert (violation.rule, violation.event["type"]) == ("no_events_after_close", "response.cancel")


def test_events_in_flight_when_the_server_closes_are_lost_not_violations() -> None:
    async def main() -> SimulatedRealtimeServer:
        server = SimulatedRealtimeServer(client_latency=0.1)
        client = RawClient(server)
        await client.until("session.created")
        await client.send(type="response.create")  # arrives at +0.1 s ...
        await server.disconnect(clean=False)  # ... after the server is gone
        await client._reader
        await asyncio.sleep(0.2)
        return server

    server = agentsim.run(main)
    assert server.violations == []
    assert server.responses == []


def test_clean_close_delivers_what_was_sent_then_ends_iteration() -> None:
    async def main() -> tuple[list[str], BaseException | None]:
        server = SimulatedRealtimeServer([Reply("hello there", audio_seconds=2.0)], latency=0.05)
        client = RawClient(server)
        await client.send(type="response.create")
        await client.until("response.output_audio.delta")
        await server.disconnect(clean=True)
        await client._reader
        return [event["type"] for event in client.received], client.ended

    kinds, ended = agentsim.run(main)
    assert ended is None  # iteration ended normally, as ConnectionClosedOK does
    assert kinds[-1] == "response.output_audio.delta"  # nothing after the close, response.done never came
    assert "response.done" not in kinds


def test_a_second_connection_while_one_is_open_is_a_config_error() -> None:
    async def main() -> None:
        server = SimulatedRealtimeServer()
        server.connect()
        server.connect()

    with pytest.raises(agentsim.SimulationConfigError, match="one connection at a time"):
        agentsim.run(main)


@pytest.mark.parametrize("bad", [{"audio_chunk_ms": 0}, {"generation_speed": -1}])
def test_bad_pacing_is_rejected(bad: dict[str, float]) -> None:
    with pytest.raises(agentsim.SimulationConfigError):
        SimulatedRealtimeServer(**bad)


def test_a_server_is_not_reused_across_simulations() -> None:
    server = SimulatedRealtimeServer()

    async def main() -> None:
        wire = server.connect()
        await wire.close()

    agentsim.run(main)
    with pytest.raises(agentsim.SimulationConfigError, match="new server per run") as raised:
        agentsim.run(main)
    assert raised.value.parameter == "SimulatedRealtimeServer"


def test_retrieve_and_delete_items() -> None:
    async def main() -> tuple[list[str], list[str]]:
        server = SimulatedRealtimeServer()
        client = RawClient(server)
        await client.send(type="conversation.item.create", item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]})
        item = (await client.until("conversation.item.added"))["item"]["id"]
        await client.send(type="conversation.item.retrieve", item_id=item)
        await client.until("conversation.item.retrieved")
        await client.send(type="conversation.item.delete", item_id=item)
        deleted = await client.until("conversation.item.deleted")
        await client.send(type="conversation.item.delete", item_id=item)  # gone already
        await client.until("error")
        await client.hang_up()
        assert deleted["item_id"] == item
        return client.errors(), [violation.rule for violation in server.violations]

    errors, rules = agentsim.run(main)
    assert errors == ["item_not_found"] and rules == []


def test_a_new_connection_is_a_new_session() -> None:
    # A reconnect starts a fresh Realtime session: the calls, items and
    # configuration of the previous one are gone, so an output for an old
    # call breaks known_tool_call and truncating an old item is not found.
    async def main() -> tuple[SimulatedRealtimeServer, list[str]]:
        server = SimulatedRealtimeServer([CallTool("lookup", {"id": 7}, call_id="call_7"), Reply("hi", audio_seconds=1.0)])
        first = RawClient(server)
        await first.send(type="session.update", session={"type": "realtime", "output_modalities": ["text"]})
        await first.send(type="response.create")
        await first.until("response.done")
        await first.send(type="response.create")
        answer = (await first.until("response.output_item.added", 2))["item"]["id"]
        await first.until("response.done", 2)
        await server.disconnect(clean=False)
        await first._reader
        second = RawClient(server)
        created = await second.until("session.created")
        assert created["session"]["output_modalities"] == ["audio"]  # the update died with the session
        await second.send(type="conversation.item.create", item={"type": "function_call_output", "call_id": "call_7", "output": "found"})
        await second.send(type="conversation.item.truncate", item_id=answer, content_index=0, audio_end_ms=0)
        await second.until("error", 2)
        await second.hang_up()
        return server, second.errors()

    server, errors = agentsim.run(main)
    assert [violation.rule for violation in server.violations] == ["known_tool_call"]
    assert errors == ["invalid_call_id", "item_not_found"]


@pytest.mark.parametrize(
    ("build", "parameter"),
    [
        (lambda: SimulatedRealtimeServer(["hello"]), "replies[0]"),  # type: ignore[list-item]
        (lambda: SimulatedRealtimeServer(seconds_per_word=0), "seconds_per_word"),
        (lambda: Reply("hi", audio_seconds=-1), "Reply.audio_seconds"),
        (lambda: CallTool("lookup", "{not json"), "CallTool.arguments"),
        (lambda: CallTool(""), "CallTool.name"),
        (lambda: SimulatedRealtimeServer().when_user_says("refund", "sure"), "step"),  # type: ignore[arg-type]
    ],
)
def test_bad_scripts_are_typed_errors_that_name_the_parameter(build: Any, parameter: str) -> None:
    with pytest.raises(agentsim.SimulationConfigError) as raised:
        build()
    assert raised.value.parameter == parameter
    assert parameter in str(raised.value)
