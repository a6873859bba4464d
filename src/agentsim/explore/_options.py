"""``ExploreOptions``: a sweep's settings, shared by ``explore``, the pytest
marker, the command line and ``[tool.agentsim]`` profiles."""

from __future__ import annotations

import os
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any

from .._kernel.options import RunOptions, RunSettings
from .._kernel.scheduling import DEFAULT_STRATEGY, SchedulingPolicy
from .._kernel.validation import whole
from ._database import DEFAULT_DIRECTORY
from ._focus import Focus

#: The strategy that enumerates every schedule within ``max_deviations`` (``_exhaustive.py``).
EXHAUSTIVE = "exhaustive"


def parse_sweep_strategy(text: str) -> str:
    """A strategy a sweep takes (a scheduling strategy, or ``exhaustive``):
    the ``type`` of the command line's and pytest's strategy options."""
    from .._kernel.scheduling import parse_strategy

    return text if text == EXHAUSTIVE else parse_strategy(text)


class ExploreSettings(RunSettings, total=False):
    """The fields of :class:`ExploreOptions` as keyword arguments (for typing ``**settings``)."""

    runs: int
    stop_on_first: bool
    shrink_failures: bool
    check_determinism: bool
    database: str | os.PathLike[str] | None
    pct_depth: int
    require: Sequence[str]
    max_deviations: int
    focus: Focus | tuple[float, float] | str | Sequence[str] | None


@dataclass(frozen=True)
class ExploreOptions(RunOptions):
    """:class:`RunOptions` plus how to sweep: ``runs`` (seeds ``seed``,
    ``seed + 1``, ...; run 0 is the stock schedule), ``strategy`` (default
    ``"portfolio"``), ``stop_on_first``, ``shrink_failures``,
    ``check_determinism``, ``database`` (a directory, None to disable),
    ``pct_depth``, ``max_deviations`` (``strategy="exhaustive"``: every
    schedule with at most that many deviations from stock order), ``focus``
    (every deviation inside a window of virtual time or around moments,
    each run branching from a checkpoint: :class:`Focus`) and
    ``require`` (labels of ``agentsim.sometimes``/``reached``
    the sweep must reach at least once, else it fails)::

        options = ExploreOptions(runs=500, strategy="pct", wall_timeout=10)
        agentsim.explore(main, options=options)
    """

    strategy: str | SchedulingPolicy = DEFAULT_STRATEGY
    runs: int = 200
    stop_on_first: bool = True
    shrink_failures: bool = True
    check_determinism: bool = False
    database: str | os.PathLike[str] | None = DEFAULT_DIRECTORY
    pct_depth: int = 3
    require: tuple[str, ...] = ()
    #: ``strategy="exhaustive"``: every schedule with at most this many deviations.
    max_deviations: int = 2
    #: Where the deviations go (``_focus.py``): a window (start, end), moment
    #: labels, or a :class:`Focus`; None: anywhere in the run.
    focus: Focus | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        require = self.require
        if isinstance(require, (str, bytes)) or not isinstance(require, (list, tuple)) or not all(isinstance(label, str) and label for label in require):
            from .._kernel.errors import SimulationConfigError

            raise SimulationConfigError("require", require, "a list of coverage labels (non-empty str) the sweep must reach")
        object.__setattr__(self, "require", tuple(require))
        object.__setattr__(self, "focus", Focus.of(self.focus))
        if self.focus is not None:
            from ._branched import check_focus_strategy

            check_focus_strategy(self.strategy)
        whole("runs", self.runs, expected="a number of runs >= 0")
        whole("pct_depth", self.pct_depth, minimum=1, expected="a PCT depth >= 1 (the ordering constraints a bug needs)")
        whole("max_deviations", self.max_deviations, expected="the deviations from stock order an exhaustive sweep allows, >= 0")
        for name in ("stop_on_first", "shrink_failures", "check_determinism"):
            if not isinstance(getattr(self, name), bool):
                from .._kernel.errors import SimulationConfigError

                raise SimulationConfigError(name, getattr(self, name), "True or False")

    def _check_strategy(self) -> None:
        if self.strategy != EXHAUSTIVE:  # (a sweep's own strategy: a source, not a policy)
            super()._check_strategy()

    def explore_kwargs(self) -> dict[str, Any]:
        """The settings as keyword arguments of :func:`agentsim.explore`."""
        return {name: getattr(self, name) for name in self.names()}
