"""Linker contract, storage helpers, linker lookup, and the node-to-kernel corridor
(:func:`implementation_for`, :func:`make_node_thunk`) through the plugin manager."""

# PyTensor's ``pytensor.link.vm`` is there after ``import pytensor``: so is this one.
from opweave.link import vm
from opweave.link.basic import Container, Linker, compute_map_for, map_storage
from opweave.link.lookup import available_linkers, resolve_linker
from opweave.link.resolver import Resolution, implementation_for
from opweave.link.thunks import build_thunk, make_node_thunk, make_thunk_through_plugins

__all__ = [
    "Container",
    "Linker",
    "Resolution",
    "available_linkers",
    "build_thunk",
    "compute_map_for",
    "implementation_for",
    "make_node_thunk",
    "make_thunk_through_plugins",
    "map_storage",
    "resolve_linker",
    "vm",
]
