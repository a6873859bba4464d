"""The simulation kernel: virtual clock, event loops, scheduling, trace.

* ``clock.py``: every rule of virtual time; ``core.py``: what one simulation
  owns; ``simulation.py``: the driver (``run``, ``simulate``);
* ``scheduling/``: every decision about order (policies, their choosers);
* ``backends/``: the asyncio loop and the trio backend, which ask the run's
  chooser where their order is open and never name a strategy;
* ``tracing/``: the trace and the choice log; ``patches/``: determinism and
  escape guards.

Nothing here imports a layer above it.
"""

#: This folder's layer (tests/api/test_layers.py): the bottom one.
__layer__ = "kernel"
