"""The pytest plugin under pytest-xdist: one test's runs split into shard
items (``test_x[agentsim-shard0of2]``), which must still behave as one test.

- The failure database key is the test's node id without the shard, so a
  failure any shard found is replayed first by a serial run, and by every
  shard of the next sharded run.
- A failure is reported once: the shards of one test in one session claim
  each failure's origin (exception type and raising line) with an
  exclusively created file; a shard whose failure another shard already
  claimed skips, naming the item that reports it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

_SHARD_ID = re.compile(r"-agentsim-shard\d+of\d+|agentsim-shard\d+of\d+-?")

#: Claim directories of sessions older than this are removed.
_STALE_SESSION_SECONDS = 24 * 3600.0


def database_key(nodeid: str) -> str:
    """The node id without the shard parameter (``test_x[agentsim-shard1of2]``
    → ``test_x``; other parameters stay)."""
    base, bracket, parameters = nodeid.partition("[")
    if not bracket:
        return nodeid
    parameters = _SHARD_ID.sub("", parameters.removesuffix("]"), count=1)
    return f"{base}[{parameters}]" if parameters else base


def claim(config: Any, key: str, origin: str, nodeid: str) -> str | None:
    """Claim the report of failure ``origin`` of test ``key`` for ``nodeid``.

    Returns None when this item reports it (first to claim, or not running
    under xdist), else the node id of the item that already does.
    """
    worker_input = getattr(config, "workerinput", None)
    if worker_input is None or "testrunuid" not in worker_input:
        return None
    sessions = Path(tempfile.gettempdir()) / "agentsim-claims"
    directory = sessions / str(worker_input["testrunuid"])
    if not directory.is_dir():
        _remove_stale_sessions(sessions)
        directory.mkdir(parents=True, exist_ok=True)
    path = directory / hashlib.sha256(f"{key}\0{origin}".encode()).hexdigest()[:32]
    # Written whole, then linked into place: the link fails if another shard
    # claimed first, and a claim is never seen half-written.
    handle, temp = tempfile.mkstemp(dir=directory)
    with os.fdopen(handle, "w") as file:
        file.write(nodeid)
    try:
        os.link(temp, path)
    except FileExistsError:
        claimer = path.read_text()
        return None if claimer == nodeid else claimer
    finally:
        os.unlink(temp)
    return None


def _remove_stale_sessions(sessions: Path) -> None:
    if not sessions.is_dir():
        return
    now = time.time()
    for session in sessions.iterdir():
        try:
            if now - session.stat().st_mtime > _STALE_SESSION_SECONDS:
                shutil.rmtree(session, ignore_errors=True)
        except OSError:  # removed by another worker meanwhile
            pass
