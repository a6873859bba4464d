"""The failure database: one file per entry, nothing lost, nothing hidden."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agentsim
from agentsim.explore import CorruptFailureEntryWarning, FailureDatabase, FailureDatabaseWarning, Schedule

from .test_explore import booking_race


def test_a_failure_is_saved_with_its_minimal_schedule_and_replayed_first(tmp_path: Path) -> None:
    first = agentsim.explore(booking_race, runs=100, database=tmp_path)
    failure = first.failures[0]
    assert failure.minimal is not None and failure.minimal.shrink_runs > 0
    [entry] = FailureDatabase(tmp_path).fetch("tests.explore.test_explore:booking_race")
    assert entry.schedule == failure.schedule and entry.minimal == failure.minimal.schedule
    second = agentsim.explore(booking_race, runs=100, database=tmp_path)
    assert second.replayed_from_database == 1 and second.runs_executed == 0  # found again before sweeping
    again = second.failures[0]
    assert again.from_database and again.seed == failure.seed
    # The minimal schedule was replayed as saved: no shrinking the second time.
    assert again.minimal is not None and again.minimal.schedule == failure.minimal.schedule and again.minimal.shrink_runs == 0
    assert again.repro == failure.repro


def test_a_fixed_minimal_schedule_falls_back_to_the_original(tmp_path: Path) -> None:
    database = FailureDatabase(tmp_path)
    key = "tests:booking"
    found = agentsim.explore(booking_race, runs=100, database=None).failures[0]
    database.save(key, found.schedule, Schedule(found.seed, "replay", {}, 0.0))  # a "minimal" that passes
    report = agentsim.explore(booking_race, runs=5, database=tmp_path, key=key)
    assert report.failures[0].from_database and report.failures[0].minimal.shrink_runs > 0  # shrunk again
    [entry] = database.fetch(key)
    assert entry.minimal == report.failures[0].minimal.schedule  # the new minimal replaced the stale one


WRITER = """
import sys
from agentsim.explore import FailureDatabase, Schedule
database = FailureDatabase(sys.argv[1])
start = int(sys.argv[2])
for seed in range(start, start + 150):
    database.save("tests:one-key", Schedule(seed, "random"), Schedule(seed, "replay", {seed % 7: 1}, 0.0))
"""


@pytest.mark.slow
def test_two_processes_saving_300_failures_on_one_key_keep_all_300(tmp_path: Path) -> None:
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(start)]) for start in (0, 150)]
    assert [writer.wait(timeout=300) for writer in writers] == [0, 0]
    entries = FailureDatabase(tmp_path).fetch("tests:one-key")
    assert sorted(entry.schedule.seed for entry in entries) == list(range(300))
    assert all(entry.minimal is not None for entry in entries)


@pytest.mark.parametrize(
    "content",
    [b"", b'{"format": 1, "schedule": "3:ran', b"[1, 2, 3]", b"\xff\xfe not utf-8", b'{"format": 1, "schedule": "x:random", "minimal": null}'],
    ids=["empty", "truncated", "json-list", "not-utf8", "non-integer-seed"],
)
def test_a_corrupt_entry_is_skipped_with_a_warning_naming_its_file(tmp_path: Path, content: bytes) -> None:
    database = FailureDatabase(tmp_path)
    key = "tests.explore.test_explore:booking_race"
    database.save(key, Schedule(123456, "random"))  # a readable entry beside it (passes: forgotten)
    [(entry, _)] = database._files(key)
    corrupt = entry.parent / "0123456789abcdef"  # beside the entries of the key
    corrupt.write_bytes(content)
    with pytest.warns(CorruptFailureEntryWarning, match=str(corrupt)) as caught:
        report = agentsim.explore(booking_race, runs=30, database=tmp_path)
    assert caught[0].message.path == corrupt  # type: ignore[union-attr]
    assert report.replayed_from_database == 1 and report.failures  # the sweep went on and found the race


def test_stale_temporary_files_are_cleaned_and_old_entries_move_to_the_new_layout(tmp_path: Path) -> None:
    failures = tmp_path / "failures"
    failures.mkdir()
    stale, fresh = failures / ".tmp-killed.json", failures / ".tmp-writing.json"
    stale.write_text("{")
    fresh.write_text("{")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    (failures / "0123456789abcdef0123.json").write_text('{"key": "tests:old", "schedules": ["7:random", "9:pct/3/40"]}')
    database = FailureDatabase(tmp_path)
    assert not stale.exists() and fresh.exists()  # a write in progress elsewhere is left alone
    assert database.load("tests:old") == [Schedule(7, "random"), Schedule(9, "pct/3/40")]
    assert not list(failures.glob("[!.]*.json"))


def test_a_database_path_that_is_a_file_is_refused_before_the_sweep(tmp_path: Path) -> None:
    # Regression: `--db <file>` crashed after a sweep had found a failure, losing the report.
    from agentsim import SimulationConfigError

    a_file = tmp_path / "failures.txt"
    a_file.write_text("")
    with pytest.raises(SimulationConfigError) as info:
        agentsim.explore(booking_race, runs=100, database=a_file)
    assert info.value.parameter == "database"


# A failed save is never silent (issue: first contact).


def test_an_uncreatable_directory_warns_naming_the_path_and_saves_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    database = FailureDatabase(blocker / "db")  # below a file: cannot be created (even as root)
    with pytest.warns(FailureDatabaseWarning) as caught:
        database.save("tests:key", Schedule(3, "random"))
    warning = caught[0].message
    assert isinstance(warning, FailureDatabaseWarning) and str(blocker) in str(warning.path)
    assert database.fetch("tests:key") == []


def test_explore_warns_when_it_cannot_keep_a_failure(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.warns(FailureDatabaseWarning, match="could not write"):
        report = agentsim.explore(booking_race, runs=100, database=blocker / "db")
    assert report.failures  # the sweep's result stands


def test_a_full_disk_leaves_no_empty_entry_and_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    database = FailureDatabase(tmp_path)
    real_fdopen = os.fdopen

    class FullDisk:
        """A file whose writes fail as on a full disk (the file itself exists)."""

        def __init__(self, handle: int, mode: str) -> None:
            self.file = real_fdopen(handle, mode)

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self.file.close()

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdopen", FullDisk)
    try:
        with pytest.warns(FailureDatabaseWarning, match="No space left"):
            database.save("tests:key", Schedule(5, "random"))
    finally:
        monkeypatch.setattr(os, "fdopen", real_fdopen)
    files = [path for path in (tmp_path / "failures").rglob("*") if path.is_file()]
    assert [path for path in files if path.stat().st_size == 0] == []
    assert [path for path in files if path.name.startswith(".tmp-")] == []
    assert database.fetch("tests:key") == []
    database.save("tests:key", Schedule(5, "random"))  # space again: saved
    assert database.load("tests:key") == [Schedule(5, "random")]


def test_save_takes_schedule_strings_and_refuses_other_values(tmp_path: Path) -> None:
    database = FailureDatabase(tmp_path)
    database.save("tests:key", "7:random", "7:fifo+0=1:j0")
    [entry] = database.fetch("tests:key")
    assert entry.schedule == Schedule(7, "random") and entry.minimal is not None and entry.minimal.encode() == "7:fifo+0=1:j0"
    with pytest.raises(agentsim.SimulationConfigError, match="schedule"):
        database.save("tests:key", 7)  # type: ignore[arg-type]
    with pytest.raises(agentsim.SimulationConfigError, match="key"):
        database.save(b"tests:key", "7:random")  # type: ignore[arg-type]


def test_a_save_reads_no_other_entry_and_replaces_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = FailureDatabase(tmp_path)
    for seed in range(50):
        database.save("tests:many", f"{seed}:random")
    reads: list[Path] = []
    original = Path.read_bytes

    def counting(path: Path) -> bytes:
        reads.append(path)
        return original(path)

    monkeypatch.setattr(Path, "read_bytes", counting)
    database.save("tests:many", "7:random", "7:fifo+3=1")
    assert reads == []  # (before: every entry of the key was read at each save)
    monkeypatch.undo()
    entries = {entry.schedule.encode(): entry for entry in database.fetch("tests:many")}
    assert len(entries) == 50 and entries["7:random"].minimal == Schedule.decode("7:fifo+3=1")


def test_a_key_keeps_a_bounded_number_of_entries_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentsim.explore import _database

    monkeypatch.setattr(_database, "MAX_ENTRIES_PER_KEY", 3)
    database = FailureDatabase(tmp_path)
    for seed in range(6):
        database.save("tests:bounded", f"{seed}:random")
        path = database._path("tests:bounded", Schedule.decode(f"{seed}:random"))
        os.utime(path, ns=(seed * 10**9, seed * 10**9))  # (mtimes apart, whatever the file system's resolution)
    database.save("tests:bounded", "6:random")
    assert [entry.schedule.seed for entry in database.fetch("tests:bounded")] == [4, 5, 6]


def test_an_entry_of_the_earlier_naming_is_superseded_by_a_save(tmp_path: Path) -> None:
    database = FailureDatabase(tmp_path)
    old = json.dumps({"format": 1, "schedule": "9:random", "minimal": None}, sort_keys=True).encode()
    path = database._store._value_path(b"tests:old", old)  # named by its value, as before
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(old)
    database.save("tests:old", "9:random", "9:fifo+1=1")
    (entry,) = database.fetch("tests:old")
    assert entry.minimal == Schedule.decode("9:fifo+1=1")
    database.delete("tests:old", "9:random")
    assert database.fetch("tests:old") == []
