"""The capability matrix: every Op class known against every installed backend.

Each backend publishes an :class:`~opweave.link.implementations.ImplementationTable` in its
``opweave_backend_info`` answer. For an Op class and a backend the matrix says what really
runs such nodes on that backend's linkers:

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
  an entry, or no installed backend implements it at all.

Whether an entry produces an implementation is decided from the entry itself, never from
its presence in the table: an entry may declare it with an ``opweave_capability``
attribute (``"implemented"``, ``"partial"`` or ``"fallback"``); an entry that is a function
whose body only returns ``None`` (a placeholder such as "no C: run it in Python") is a
fallback; any other entry is taken to produce one.

The Op classes are the union of every backend's scope, so Op classes of third-party plugins
appear as soon as a backend means to cover them.
"""

from __future__ import annotations

import dis
from collections.abc import Mapping
from typing import Any

from opweave.link.implementations import _defines_own

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

IMPLEMENTED, PARTIAL, FALLBACK, MISSING = "implemented", "partial", "fallback", "missing"

#: The attribute through which a table entry declares what it produces.
CAPABILITY_ATTRIBUTE = "opweave_capability"

#: The byte-code instructions of a function that does nothing but return ``None``.
_NOTHING_BUT_NONE = frozenset({"RESUME", "NOP", "CACHE", "RETURN_VALUE"})


def op_class_name(cls: type) -> str:
    """``module.QualName`` of an Op class."""
    return f"{cls.__module__}.{cls.__qualname__}"


def _returns_only_none(entry: Any) -> bool:
    """Whether ``entry`` is a function whose body only returns ``None``."""
    if getattr(entry, "__code__", None) is None:
        return False
    for instruction in dis.get_instructions(entry):
        if instruction.opname in _NOTHING_BUT_NONE:
            continue
        if instruction.opname in ("LOAD_CONST", "RETURN_CONST") and instruction.argval is None:
            continue
        return False
    return True


def entry_capability(entry: Any) -> str:
    """What a table entry produces: ``"implemented"``, ``"partial"`` or ``"fallback"``.

    Raises
    ------
    ValueError
        When the entry declares something else through ``opweave_capability``.
    """
    declared = getattr(entry, CAPABILITY_ATTRIBUTE, None)
    if declared is not None:
        if declared not in (IMPLEMENTED, PARTIAL, FALLBACK):
            raise ValueError(
                f"table entry {entry!r} declares {CAPABILITY_ATTRIBUTE}={declared!r}; "
                f"expected {IMPLEMENTED!r}, {PARTIAL!r} or {FALLBACK!r}"
            )
        return str(declared)
    return FALLBACK if _returns_only_none(entry) else IMPLEMENTED


def _status(table: Any, cls: type, in_scope: bool) -> str:
    if table.own_method is not None and _defines_own(cls, table.own_method):
        return IMPLEMENTED  # the class carries the backend's own method, which comes first
    entry = table.lookup(cls)
    if entry is None:
        return MISSING if in_scope else FALLBACK
    return entry_capability(entry)


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
    classes = sorted({cls for scope in scopes.values() for cls in scope}, key=op_class_name)
    matrix: dict[str, dict[str, str]] = {}
    for cls in classes:
        row = {name: _status(tables[name], cls, cls in scopes[name]) for name in sorted(tables)}
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
