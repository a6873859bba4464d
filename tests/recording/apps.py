"""The example app of docs/recordings.md (examples/incident/support_call.py),
for the recording tests."""

from __future__ import annotations

from tests.examples.examples_dir import load

support_call = load("incident", "support_call")
GRACE = support_call.GRACE
NETWORK = support_call.NETWORK
INCIDENT = support_call.INCIDENT
first_audio_at = support_call.first_audio_at
record_support_call = support_call.record_support_call
replay_support_call = support_call.replay_support_call
support_server = support_call.support_server
voice_app = support_call.voice_app
