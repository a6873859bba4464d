"""The openai-agents SDK (``agents``) inside a simulation.

Imported before the first simulation that starts after ``agents`` was
imported (``agentsim._kernel.extensions.adapter``), it registers:

* the SDK's global trace provider swapped, for each simulation, for one with
  virtual timestamps, counter ids and no export thread (``tracing.py``);
* the SDK's module-level ``from time import monotonic``-style names rebound
  to virtual time and seeded ids;
* an explainer (``explain.py``): a real model or Realtime call, and the SDK
  on the trio backend, reported as typed errors naming the double to use.

``sdk.py`` holds every SDK name agentsim's doubles use, and the few places
where supported releases differ; no other module of agentsim imports
``agents``.
"""

from __future__ import annotations

from ..._kernel import extensions
from . import explain as _explain
from .explain import RealModelCallError, SdkBackendError
from .sdk import SdkVersionError, installed_version
from .tracing import SdkTracing

__all__ = ["RealModelCallError", "SdkBackendError", "SdkTracing", "SdkVersionError", "installed_version"]

extensions.register(SdkTracing)
extensions.register_explainer(_explain.explain)
extensions.rebind_module_names("agents")
