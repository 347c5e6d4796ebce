"""The capability matrix: every Op class known against every installed backend.

Each backend publishes an :class:`~opweave.link.implementations.ImplementationTable` in its
``opweave_backend_info`` answer. For an Op class and a backend the matrix says what really
runs such nodes on that backend's linkers, as the resolver decides it
(:func:`opweave.link.resolver.class_capability`: the same order as
:func:`~opweave.link.resolver.implementation_for` uses for a node, less the plugins'
per-node answers):

* ``"implemented"``: the backend's own implementation (C for opweave-c, a chunk-wise Dask
  graph for opweave-dask ...): the class defines the backend's own method, or the table's
  entry for it (through the class's MRO) produces an implementation;
* ``"partial"``: the entry produces one for some nodes only, as it declares (below);
  the other nodes run as for ``"fallback"``;
* ``"fallback"``: another implementation runs the nodes (``cvm`` in Python, Dask on one
  worker through the Python backend, the GPU linker on the host); the whole-graph linkers
  that need the backend's own (``c``) refuse them. This is the status of a class outside
  the backend's scope, and of one whose table entry never produces an implementation;
* ``"missing"``: nothing runs such nodes there: the class is in the backend's scope without
  an entry, or outside it on a backend that says it has no fallback (``"fallback": False``
  in its answer: its linkers refuse such nodes), or no installed backend implements it.

Whether an entry produces an implementation is decided from the entry itself, never from
its presence in the table: an entry may declare it with an ``opweave_capability``
attribute (``"implemented"``, ``"partial"`` or ``"fallback"``); an entry that is a function
whose body only returns ``None`` (a placeholder such as "no C: run it in Python") is a
fallback; any other entry is taken to produce one.

The Op classes are the union of every backend's scope, so Op classes of third-party plugins
appear as soon as a backend means to cover them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opweave.link.implementations import (
    CAPABILITY_ATTRIBUTE,
    FALLBACK,
    IMPLEMENTED,
    MISSING,
    PARTIAL,
    entry_capability,
)
from opweave.link.resolver import class_capability

__all__ = [
    "CAPABILITY_ATTRIBUTE",
    "FALLBACK",
    "IMPLEMENTED",
    "MISSING",
    "PARTIAL",
    "capability_matrix",
    "coverage",
    "entry_capability",
    "op_class_name",
]


def op_class_name(cls: type) -> str:
    """``module.QualName`` of an Op class."""
    return f"{cls.__module__}.{cls.__qualname__}"


def _status(table: Any, cls: type, scope: set[type], falls_back: bool) -> str:
    status = class_capability(table, cls)
    if status == MISSING and cls not in scope and falls_back:
        return FALLBACK  # outside the backend's scope: another backend runs such nodes
    return status


def capability_matrix(backend_infos: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """The matrix of the backends described by ``backend_infos`` (``opweave_backend_info``
    answers; those without an ``"implementations"`` table are left out).

    Returns
    -------
    dict
        Op class name -> backend name -> ``"implemented"``, ``"partial"``, ``"fallback"``
        or ``"missing"``, both levels sorted by name.
    """
    tables = {
        info["name"]: info["implementations"]
        for info in backend_infos
        if info.get("implementations") is not None
    }
    scopes = {name: set(table.scope()) for name, table in tables.items()}
    falls_back = {info["name"]: info.get("fallback") is not False for info in backend_infos}
    classes = sorted({cls for scope in scopes.values() for cls in scope}, key=op_class_name)
    matrix: dict[str, dict[str, str]] = {}
    for cls in classes:
        row = {
            name: _status(tables[name], cls, scopes[name], falls_back[name])
            for name in sorted(tables)
        }
        if not any(status in (IMPLEMENTED, PARTIAL) for status in row.values()):
            # Nothing to fall back on: no installed backend runs such nodes.
            row = {name: MISSING for name in row}
        matrix[op_class_name(cls)] = row
    return matrix


def coverage(matrix: Mapping[str, Mapping[str, str]], backend: str) -> dict[str, list[str]]:
    """The Op classes of ``matrix`` by their status on ``backend`` (every status a key)."""
    found: dict[str, list[str]] = {status: [] for status in (IMPLEMENTED, PARTIAL, FALLBACK)}
    found[MISSING] = []
    for cls, row in matrix.items():
        if backend in row:
            found[row[backend]].append(cls)
    return found
