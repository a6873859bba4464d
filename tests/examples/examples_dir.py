"""Loading the example programs of one ``examples/`` folder by module name."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

EXAMPLES_ROOT = Path(__file__).resolve().parents[2] / "examples"


def names(folder: str) -> list[str]:
    """The example modules in ``examples/<folder>``, sorted."""
    return sorted(path.stem for path in (EXAMPLES_ROOT / folder).glob("*.py") if not path.stem.startswith("_"))


def load(folder: str, name: str) -> Any:
    """Import ``examples/<folder>/<name>.py`` (its folder goes on ``sys.path``)."""
    directory = str(EXAMPLES_ROOT / folder)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return importlib.import_module(name)
