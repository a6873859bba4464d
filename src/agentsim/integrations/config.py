"""``[tool.agentsim]``: sweep settings and named profiles in ``pyproject.toml``.

Like hypothesis's settings profiles: the table's keys are
:class:`~agentsim.ExploreOptions` settings, and ``[tool.agentsim.profiles.NAME]``
tables override them when that profile is chosen (``--agentsim-profile`` in
pytest, ``--profile`` on the command line, or the ``AGENTSIM_PROFILE``
environment variable)::

    [tool.agentsim]
    runs = 200
    wall_timeout = 30

    [tool.agentsim.profiles.ci]
    runs = 2000
    strategy = "pct"

    [tool.agentsim.profiles.dev]
    runs = 20

What is given on the command line or in a test's marker wins over the profile.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from .._kernel.errors import SimulationConfigError
from ..explore import ExploreOptions

__all__ = ["PROFILE_VARIABLE", "find_pyproject", "load_options", "settings"]

#: The environment variable naming the profile when no option does.
PROFILE_VARIABLE = "AGENTSIM_PROFILE"


def find_pyproject(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` (default: the working directory)."""
    if start is not None and not isinstance(start, (str, os.PathLike)):
        raise SimulationConfigError("start", start, "a folder to search from (a str or path), or None for the working directory")
    directory = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (directory, *directory.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def settings(pyproject: Path | None, profile: str | None = None) -> dict[str, Any]:
    """The ``[tool.agentsim]`` settings with ``profile`` applied (empty without a file).

    An unknown profile is a :class:`~agentsim.SimulationConfigError` naming the
    file and the profiles it has."""
    if pyproject is not None and not isinstance(pyproject, (str, os.PathLike)):
        raise SimulationConfigError("pyproject", pyproject, "the path of a pyproject.toml (find_pyproject() finds it), or None")
    if profile is not None and not isinstance(profile, str):
        raise SimulationConfigError("profile", profile, "the name of a profile of [tool.agentsim.profiles], or None")
    pyproject = Path(pyproject) if pyproject is not None else None
    profile = profile or os.environ.get(PROFILE_VARIABLE) or None
    if pyproject is None:
        if profile is not None:
            raise SimulationConfigError("profile", profile, "a profile of [tool.agentsim.profiles] in a pyproject.toml; none was found")
        return {}
    try:
        table = tomllib.loads(pyproject.read_text()).get("tool", {}).get("agentsim", {})
    except tomllib.TOMLDecodeError as error:
        raise SimulationConfigError(str(pyproject), "unreadable TOML", f"a valid pyproject.toml ({error})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SimulationConfigError("pyproject", str(pyproject), f"a readable pyproject.toml ({error})") from None
    if not isinstance(table, dict) or not isinstance(table.get("profiles", {}), dict):
        raise SimulationConfigError(str(pyproject), "[tool.agentsim]", "a table, with [tool.agentsim.profiles.NAME] tables for profiles")
    base = {key: value for key, value in table.items() if key != "profiles"}
    if profile is None:
        return base
    profiles = table.get("profiles", {})
    if profile not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise SimulationConfigError("profile", profile, f"a profile of [tool.agentsim.profiles] in {pyproject} (it has: {known})")
    return {**base, **profiles[profile]}


def load_options(profile: str | None = None, *, start: str | os.PathLike[str] | None = None) -> ExploreOptions:
    """:class:`~agentsim.ExploreOptions` from the nearest ``pyproject.toml``'s
    ``[tool.agentsim]`` and ``profile``; every key checked."""
    pyproject = find_pyproject(start)
    where = f"[tool.agentsim] of {pyproject}" if pyproject is not None else "[tool.agentsim]"
    return ExploreOptions.from_mapping(settings(pyproject, profile), where=where)


# What tracebacks, reprs and pickles show: the public module name (see public_names.py).
from .._kernel.public_names import present_as  # noqa: E402

present_as("agentsim.config", globals())
