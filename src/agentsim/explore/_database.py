"""The failure database: failing schedules kept under ``.agentsim/`` and replayed first.

Storage is hypothesis's :class:`~hypothesis.database.DirectoryBasedExampleDatabase`
layout: a directory per key and a file per entry, each written whole beside
its place before it is renamed there (agentsim writes entries itself, since
hypothesis's save drops a failed write silently and may leave an empty entry
on a full disk: here a failed write warns, :class:`FailureDatabaseWarning`). Writers never rewrite a shared file, so concurrent
processes (pytest-xdist workers, parallel CI jobs) lose no entry, and a
write killed at any moment leaves no partial entry. An entry is one failure:
the schedule that failed and the minimal schedule shrinking found, so a
rerun replays the minimal one and need not shrink again.

An entry's file is named by its *schedule* (hypothesis's hash of it), so
saving a schedule again replaces its entry in place: a save reads no other
entry (a sweep's saves cost the same at 10 entries as at 1,000). A key
keeps at most :data:`MAX_ENTRIES_PER_KEY` entries (hypothesis keeps a
bounded corpus too): past it, a save drops the oldest files.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from .._kernel.errors import AgentsimWarning, SimulationConfigError
from ._schedule import Schedule

DEFAULT_DIRECTORY = ".agentsim"

#: Temporary files older than this are left over from killed writes.
STALE_TEMP_SECONDS = 600.0

_FORMAT = 1

#: The entries one key keeps at most; a save past it forgets the oldest.
MAX_ENTRIES_PER_KEY = 1000


class FailureDatabaseWarning(AgentsimWarning):
    """A failing schedule could not be saved (or forgotten) in the failure
    database: its directory cannot be created or written, or the disk is
    full. The sweep's result stands, but the next run will not replay this
    failure first. ``path`` names where the write failed and ``reason`` the
    system's error: fix the directory, or pass another one (``database=``,
    ``--agentsim-db``) or None to disable the database."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(
            f"the failure database could not write {path}: {reason}. This failure will not be replayed first next "
            "time: make the directory writable, or choose another (database=..., --agentsim-db) or none"
        )


class CorruptFailureEntryWarning(AgentsimWarning):
    """An entry of the failure database could not be read (truncated, edited,
    or written by another program). It is skipped; ``path`` names the file:
    delete it, or leave it and it is skipped again."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        super().__init__(f"skipped a corrupt failure-database entry {path}: {reason}. Delete the file to silence this.")


@dataclass(frozen=True)
class SavedFailure:
    """One entry: the ``schedule`` that failed and its ``minimal`` form (None
    if it was not shrunk)."""

    schedule: Schedule
    minimal: Schedule | None = None


class FailureDatabase:
    """Failing schedules by key (a test's identity), under ``directory/failures/``.

    ``save`` / ``fetch`` / ``delete``; the key is the explored function's
    ``module:qualname`` or the pytest node id without the xdist shard, so a
    failure found by any worker is replayed first by every later run.
    """

    def __init__(self, directory: str | os.PathLike[str] = DEFAULT_DIRECTORY) -> None:
        # Imported here: importing hypothesis loads its plugins (trio among
        # them), which `import agentsim` must not.
        from hypothesis.database import DirectoryBasedExampleDatabase

        if not isinstance(directory, (str, os.PathLike)) or (Path(directory).exists() and not Path(directory).is_dir()):
            # Checked before a sweep: failures saved under a file would be lost.
            raise SimulationConfigError("database", directory, "a directory for the failure database (created if missing), or None to disable it")
        self.directory = Path(directory) / "failures"
        self._store = DirectoryBasedExampleDatabase(self.directory)
        self._tidy()

    def fetch(self, key: str) -> list[SavedFailure]:
        """Every readable entry of ``key``, oldest schedule first (by seed);
        an unreadable one is skipped with :class:`CorruptFailureEntryWarning`."""
        _check_key(key)
        entries: dict[str, tuple[bool, SavedFailure]] = {}
        for path, value in self._files(key):
            try:
                entry = _decode(value)
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                warnings.warn(CorruptFailureEntryWarning(path, str(error) or type(error).__name__), stacklevel=2)
                continue
            # One entry per schedule: the one named by it wins over an entry
            # of the earlier naming (by its value), which a save replaced.
            current = path == self._path(key, entry.schedule)
            name = entry.schedule.encode()
            if name not in entries or current:
                entries[name] = (current, entry)
        return sorted((entry for _, entry in entries.values()), key=lambda entry: (entry.schedule.seed, entry.schedule.encode()))

    def load(self, key: str) -> list[Schedule]:
        """The failing schedules of ``key`` (see :meth:`fetch`)."""
        return [entry.schedule for entry in self.fetch(key)]

    def save(self, key: str, schedule: Schedule | str, minimal: Schedule | str | None = None) -> None:
        """Keep ``schedule`` (and its ``minimal`` form) under ``key``, replacing
        an earlier entry of the same schedule. Schedules may be given as the
        strings reports print. A write that fails (unwritable directory, full
        disk) leaves nothing behind and warns :class:`FailureDatabaseWarning`."""
        _check_key(key)
        schedule = _as_schedule("schedule", schedule)
        minimal = _as_schedule("minimal", minimal) if minimal is not None else None
        entry = _encode(SavedFailure(schedule, minimal))
        path = self._path(key, schedule)
        try:
            _write_whole(path, entry)
            self._bound(path.parent)
        except OSError as error:
            warnings.warn(FailureDatabaseWarning(path, error.strerror or str(error)), stacklevel=2)

    def delete(self, key: str, schedule: Schedule | str) -> None:
        """Forget ``schedule`` under ``key`` (the bug is fixed)."""
        _check_key(key)
        schedule = _as_schedule("schedule", schedule)
        with contextlib.suppress(OSError):
            self._path(key, schedule).unlink()
        for path, value in self._files(key):  # entries of the earlier naming (by their value)
            if _schedule_of(value) == schedule.encode():
                with contextlib.suppress(OSError):
                    path.unlink()

    def _path(self, key: str, schedule: Schedule) -> Path:
        """Where ``schedule``'s entry of ``key`` lives: named by the schedule."""
        return Path(self._store._value_path(key.encode(), schedule.encode().encode()))

    @staticmethod
    def _bound(directory: Path) -> None:
        """Keep at most :data:`MAX_ENTRIES_PER_KEY` entries: the oldest go."""
        names = [name for name in os.listdir(directory) if not name.startswith(".")]
        if len(names) <= MAX_ENTRIES_PER_KEY:
            return
        dated = []
        for name in names:
            with contextlib.suppress(OSError):
                dated.append(((directory / name).stat().st_mtime_ns, name))
        for _, name in sorted(dated)[: len(dated) - MAX_ENTRIES_PER_KEY]:
            with contextlib.suppress(OSError):
                (directory / name).unlink()

    def _files(self, key: str) -> list[tuple[Path, bytes]]:
        """The entries of ``key`` with their files (a file is named by the hash
        of what was written, so a damaged one is found only by listing)."""
        # hypothesis's layout: directory / hash(key) / hash(value).
        directory = self._store._key_path(key.encode())
        found = []
        try:
            names = sorted(os.listdir(directory))
        except OSError:  # no entries yet, or removed meanwhile
            return []
        for name in names:
            try:
                found.append((directory / name, (directory / name).read_bytes()))
            except OSError:  # deleted by another process meanwhile
                pass
        return found

    def _tidy(self) -> None:
        """Remove temporary files of killed writes and move entries of the
        earlier one-JSON-file-per-key format into the directory layout."""
        if not self.directory.is_dir():
            return
        now = time.time()
        for temp in self.directory.rglob(".tmp-*"):
            try:
                if now - temp.stat().st_mtime > STALE_TEMP_SECONDS:
                    temp.unlink()
            except OSError:  # another process got there first
                pass
        for legacy in self.directory.glob("[!.]*.json"):
            try:
                data = json.loads(legacy.read_text())
                for text in data["schedules"]:
                    self.save(data["key"], Schedule.decode(text))
                legacy.unlink()
            except (OSError, ValueError, KeyError, TypeError) as error:
                warnings.warn(CorruptFailureEntryWarning(legacy, str(error) or type(error).__name__), stacklevel=2)


def _write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: into a temporary file
    beside it (same directory, so the rename cannot cross file systems),
    then renamed into place. On failure the temporary file is removed here,
    where it was made; no empty or partial entry is ever visible."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _check_key(key: object) -> None:
    if not isinstance(key, str):
        raise SimulationConfigError("key", key, "a string naming the test (its node id or module:qualname)")


def _as_schedule(name: str, value: object) -> Schedule:
    if isinstance(value, Schedule):
        return value
    if isinstance(value, str):
        return Schedule.decode(value)
    raise SimulationConfigError(name, value, "a Schedule or a schedule string as a report prints it ('17:random', '17:fifo+3=1:j0')")


def _encode(entry: SavedFailure) -> bytes:
    minimal = entry.minimal.encode() if entry.minimal is not None else None
    return json.dumps({"format": _FORMAT, "schedule": entry.schedule.encode(), "minimal": minimal}, sort_keys=True).encode()


def _decode(value: bytes) -> SavedFailure:
    data = json.loads(value.decode("utf-8"))
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise ValueError(f"not an agentsim failure entry (format {_FORMAT}): {value[:60]!r}")
    minimal = data["minimal"]
    return SavedFailure(Schedule.decode(data["schedule"]), Schedule.decode(minimal) if minimal is not None else None)


def _schedule_of(value: bytes) -> str | None:
    try:
        return _decode(value).schedule.encode()
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
