"""What connects agentsim to the tools around a test: the pytest plugin and
its sharding, the command line, ``[tool.agentsim]`` profiles, timelines,
hypothesis strategies.

Public as ``agentsim.pytest_plugin``, ``agentsim.cli``, ``agentsim.config``,
``agentsim.timeline`` and ``agentsim.hypothesis`` (the same modules).
"""

#: This folder's layer (tests/api/test_layers.py): the top one.
__layer__ = "integrations"
