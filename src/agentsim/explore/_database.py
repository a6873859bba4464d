"""The failure database: failing schedules kept under ``.agentsim/`` and replayed first.

One JSON file per explored function (or test), written atomically (a temp
file then ``os.replace``), so a sweep killed at any moment leaves every file
either as it was or complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from ._schedule import Schedule

DEFAULT_DIRECTORY = ".agentsim"


class FailureDatabase:
    """Failing schedules by key, under ``directory/failures/``."""

    def __init__(self, directory: str | os.PathLike[str] = DEFAULT_DIRECTORY) -> None:
        self.directory = Path(directory) / "failures"

    def _path(self, key: str) -> Path:
        return self.directory / f"{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"

    def load(self, key: str) -> list[Schedule]:
        path = self._path(key)
        try:
            data = json.loads(path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return []
        if data.get("key") != key:
            return []
        return [Schedule.decode(text) for text in data.get("schedules", [])]

    def save(self, key: str, schedule: Schedule) -> None:
        schedules = self.load(key)
        if schedule in schedules:
            return
        self._write(key, [*schedules, schedule])

    def delete(self, key: str, schedule: Schedule) -> None:
        schedules = [known for known in self.load(key) if known != schedule]
        self._write(key, schedules)

    def _write(self, key: str, schedules: list[Schedule]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"key": key, "schedules": [schedule.encode() for schedule in schedules]}, indent=1)
        handle, temp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w") as file:
                file.write(payload)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, self._path(key))
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
