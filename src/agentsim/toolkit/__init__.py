"""The doubles' building blocks: delays as ranges (``timing``), links with
latency and loss (``link``), the inboxes doubles deliver through (``inbox``).

Public as ``agentsim.timing`` and ``agentsim.link``; argument checks for
doubles are ``agentsim.validation``.
"""

#: This folder's layer (tests/api/test_layers.py): it imports only the kernel.
__layer__ = "toolkit"
