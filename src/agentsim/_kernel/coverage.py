"""Coverage of the moments that matter: ``sometimes`` and ``reached``.

A passing sweep says nothing about whether the dangerous moment — a barge-in
during a tool call, a disconnect during a guardrail — happened even once. A
program (or a double) names such a moment with :func:`sometimes` (a
condition, evaluated where the moment could happen) or :func:`reached`
(the moment itself); each run keeps, per label, whether it held at least
once, and a sweep counts the runs where it did (``ExploreReport.coverage``).
Neither ever fails a run: a sweep given ``require=[...]`` fails when a
required moment was never reached (Antithesis's "sometimes" assertions).
"""

from __future__ import annotations

from .core import current_core
from .errors import SimulationConfigError


def sometimes(condition: object, label: str) -> bool:
    """Note whether ``condition`` held at this moment of the run, under
    ``label``; returns ``bool(condition)``. The run's coverage keeps, per
    label, whether it was ever true (False for a label evaluated but never
    true). A no-op outside a simulation::

        agentsim.sometimes(tool_running, "barge-in during a tool call")
    """
    if label.__class__ is not str or not label:
        raise SimulationConfigError("label", label, "a non-empty str naming the moment (the same label in every run)")
    held = bool(condition)
    core = current_core()
    if core is not None:
        # (Not on the trace: naming a moment changes no run, not even its digest.)
        coverage = core.coverage
        if held or label not in coverage:
            coverage[label] = held
        instants = core.moment_instants
        if instants is not None:
            instants.setdefault(label, []).append(core.clock.ticks)
    return held


def reached(label: str) -> None:
    """Note that the moment ``label`` happened in this run: ``sometimes(True, label)``."""
    sometimes(True, label)
