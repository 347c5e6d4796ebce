"""Linker contract, storage helpers, and linker lookup through the plugin manager."""

from opweave.link.basic import Container, Linker, compute_map_for, map_storage
from opweave.link.lookup import available_linkers, resolve_linker
from opweave.link.thunks import make_thunk_through_plugins

__all__ = [
    "Container",
    "Linker",
    "available_linkers",
    "compute_map_for",
    "make_thunk_through_plugins",
    "map_storage",
    "resolve_linker",
]
