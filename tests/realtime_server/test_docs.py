"""The call in docs/realtime-server.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "realtime-server.md"


def test_the_documented_call_runs_and_keeps_the_rules() -> None:
    code = re.search(r"## A call\n\n```python\n(.*?)```", DOC.read_text(), re.S)
    assert code is not None, "docs/realtime-server.md lost its 'A call' example"
    namespace: dict[str, object] = {"__name__": "docs_example"}
    exec(compile(code.group(1), str(DOC), "exec"), namespace)  # raises if a rule broke
    assert "call" in namespace
