"""docs/guides.md: a row for every section of the guides, none empty, and
every test it names exists in this suite."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = re.compile(r"^`(tests/[\w/]+\.py)::(test_\w+)`$")


def _rows() -> list[tuple[str, list[str]]]:
    rows: list[tuple[str, list[str]]] = []
    section = ""
    for line in (ROOT / "docs" / "guides.md").read_text().splitlines():
        if line.startswith("## "):
            section = line[3:]
        elif line.startswith("| ") and not line.startswith("| ---"):
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            if cells[0] not in ("section", "recipe"):
                rows.append((section, cells))
    return rows


def test_every_guide_has_its_table() -> None:
    counts: dict[str, int] = {}
    for section, _ in _rows():
        counts[section] = counts.get(section, 0) + 1
    assert set(counts) == {"Realtime agents guide", "Python testing guide", "JS testing guide"}
    assert min(counts.values()) >= 15


def test_no_row_is_empty_and_every_named_test_exists() -> None:
    missing: list[str] = []
    for section, cells in _rows():
        assert len(cells) == 3 and all(cells), f"{section}: {cells}"
        match = REFERENCE.match(cells[2])
        assert match, f"{section}: {cells[0]!r} names no test as `tests/...py::test_name`: {cells[2]!r}"
        path, name = match.groups()
        source = ROOT / path
        if not source.exists() or f"def {name}(" not in source.read_text():
            missing.append(f"{section}: {cells[0]} -> {path}::{name}")
    assert missing == []
