"""The record of a run: its events (``trace``), its choices (``choices``),
pictures of tasks for error messages (``snapshots``)."""
