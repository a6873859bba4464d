"""Adapters for the libraries simulated programs use.

Each adapter is the one place agentsim knows its library: what the library
needs to be deterministic in a simulation (registered with the kernel's
``extensions``) and the names agentsim's doubles use from it.
"""

#: This folder's layer (tests/api/test_layers.py): imports point only down.
__layer__ = "toolkit"
