"""The file: bad recordings are typed errors naming the line; the timeline
of ``agentsim session show``; credentials never written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentsim import timeline
from agentsim.cli import main
from agentsim.recording import RecordingFormatError, load
from agentsim.recording._format import scrub

FIXTURE = Path(__file__).parent / "data" / "support_call.jsonl"
HEADER = json.dumps({"format": "agentsim.recording", "version": 1, "kind": "realtime", "layer": "wire"})
EVENT = json.dumps({"t": 0.5, "direction": "server", "type": "session.created", "payload": {}})


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        ([], 0, "empty"),
        (["[1, 2]"], 1, "a JSON list"),
        ([json.dumps({"format": "chrome-trace"})], 1, "not a recording's header"),
        ([json.dumps({"format": "agentsim.recording", "version": 99})], 1, "format version 99"),
        ([HEADER, EVENT, "{not json"], 3, "not JSON"),
        ([HEADER, EVENT, json.dumps({"t": 0.4, "direction": "client", "type": "x", "payload": {}})], 3, "goes back in time"),
        ([HEADER, json.dumps({"t": -1, "direction": "client", "type": "x"})], 2, "t is -1"),
        ([HEADER, json.dumps({"t": "soon", "direction": "client", "type": "x"})], 2, "t is 'soon'"),
        ([HEADER, json.dumps({"t": 1, "direction": "sideways", "type": "x"})], 2, "direction is 'sideways'"),
        ([HEADER, json.dumps({"t": 1, "direction": "client", "type": ""})], 2, "type is ''"),
        ([HEADER, json.dumps({"t": 1, "direction": "client", "type": "x", "payload": [1]})], 2, "payload is a list"),
    ],
)
def test_a_bad_file_is_a_typed_error_naming_the_line(tmp_path: Path, lines: list[str], line: int, words: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    with pytest.raises(RecordingFormatError) as caught:
        load(path)
    assert caught.value.line == line and caught.value.path == str(path)
    assert words in caught.value.problem and words in str(caught.value)
    assert isinstance(caught.value, ValueError)  # and an agentsim UsageError


def test_not_utf8_is_named_too(tmp_path: Path) -> None:
    path = tmp_path / "binary.jsonl"
    path.write_bytes(HEADER.encode() + b"\n\xff\xfe\n")
    with pytest.raises(RecordingFormatError) as caught:
        load(path)
    assert caught.value.line == 2 and "UTF-8" in caught.value.problem


def test_credentials_are_redacted_at_any_depth() -> None:
    config = {"api_key": "sk-1", "headers": {"Authorization": "Bearer sk-2", "api-key": "k3", "x-trace": "ok"}, "nested": [{"client_secret": {"value": "s4"}}], "empty_token": ""}
    text = json.dumps(scrub(config))
    assert not any(secret in text for secret in ("sk-1", "sk-2", "k3", "s4"))
    assert scrub(config)["headers"]["x-trace"] == "ok" and scrub(config)["empty_token"] == ""


def test_session_show_prints_the_timeline_and_exports_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "call.json"
    assert main(["session", "show", str(FIXTURE), "--export", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    recording = load(FIXTURE)
    assert printed[0].startswith("# realtime session recorded on the wire") and f"{len(recording)} events" in printed[0]
    lines = [line for line in printed if " ms  " in line]
    assert len(lines) == len(recording)
    assert "2920.000 ms  server   input_audio_buffer.speech_started" in "\n".join(lines)
    assert any("conversation.item.truncate item_id=" in line and "audio_end_ms=" in line for line in lines)
    # The export opens in Perfetto, and reads back as the same timeline.
    events = timeline.load(out)
    assert [event.format() for event in events] == lines


def test_session_show_last_and_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["session", "show", str(FIXTURE), "--kinds", "client", "--last", "3"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if " ms  " in line]
    assert len(lines) == 3 and all(" client " in line for line in lines)


def test_session_show_of_a_bad_file_says_which_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(HEADER + "\n" + EVENT + "\n{oops\n")
    assert main(["session", "show", str(path)]) == 2
    assert f"{path} line 3: not JSON" in capsys.readouterr().err
    assert main(["session", "show", str(tmp_path / "missing.jsonl")]) == 2
