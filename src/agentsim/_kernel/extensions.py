"""Extensions: what an adapter for a library adds to every simulation.

The kernel knows no library above the standard library, anyio and trio.
An adapter (``agentsim.contrib.openai_agents`` for the Agents SDK) registers
here what a simulation must do for the library to be deterministic:

* :func:`register` a context manager factory entered around every
  simulation (the SDK's trace provider swapped for a virtual one);
* :func:`register_explainer` a function that turns what a run raised into a
  typed error saying what the library call was (a real model call, the SDK
  on trio), given the simulation;
* :func:`rebind_module_names` a package whose modules bound clock, ``uuid4``
  or ``datetime`` by name (``from time import monotonic``), so the
  module-level names see virtual time too.

An adapter is activated lazily: :func:`adapter` names the module that
triggers it, and a simulation started after that module was imported first
imports the adapter (which registers itself). A program that never imports
the library pays nothing for it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager

from .core import SimulationCore

ExtensionFactory = Callable[[SimulationCore], AbstractContextManager[object]]

Explainer = Callable[[SimulationCore, BaseException], "BaseException | None"]

_extensions: list[ExtensionFactory] = []
_explainers: list[Explainer] = []
_rebound_packages: list[str] = []
_adapters: dict[str, str] = {}


def register(factory: ExtensionFactory) -> None:
    """Enter ``factory(core)`` around every simulation from now on (once per factory)."""
    if factory not in _extensions:
        _extensions.append(factory)


def register_explainer(explainer: Explainer) -> None:
    """Pass the exception a run ends with through ``explainer(core, error)``
    from now on: it returns a clearer error to report instead (chained to
    the original), or None to leave it."""
    if explainer not in _explainers:
        _explainers.append(explainer)


def explain(core: SimulationCore, error: BaseException | None) -> BaseException | None:
    """``error`` as the first explainer that knows it reports it."""
    if error is None:
        return None
    for explainer in _explainers:
        clearer = explainer(core, error)
        if clearer is not None:
            if clearer.__cause__ is None and clearer is not error:
                clearer.__cause__ = error
            return clearer
    return error


def rebind_module_names(package: str) -> None:
    """Rebind clock, ``uuid4`` and ``datetime`` names bound at module level in
    ``package`` and its submodules while a simulation runs."""
    if package not in _rebound_packages:
        _rebound_packages.append(package)


def adapter(trigger: str, module: str) -> None:
    """Import ``module`` (an adapter that registers itself) before the first
    simulation that starts once ``trigger`` has been imported."""
    _adapters[trigger] = module


def activate() -> list[ExtensionFactory]:
    """Import the adapters whose library is loaded; the extensions to enter."""
    for trigger, module in list(_adapters.items()):
        if trigger in sys.modules and module not in sys.modules:
            importlib.import_module(module)
    return list(_extensions)


def rebound_packages() -> tuple[str, ...]:
    """The packages whose module-level names are rebound (see :func:`rebind_module_names`)."""
    return tuple(_rebound_packages)
