"""The simulation kernel: virtual clock, event loops, scheduling policy, trace.

Nothing here imports a layer above it. ``backend.py`` is the seam between the
driver (``simulation.py``) and the two loops (``asyncio_*``, ``trio_backend``);
``policy.py`` is the seam where every open ordering choice is made.
"""
