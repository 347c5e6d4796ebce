"""The capability matrix: every Op class known against every installed backend.

Each backend publishes an :class:`~opweave.link.implementations.ImplementationTable` in its
``opweave_backend_info`` answer. For an Op class and a backend the matrix says:

* ``"implemented"``: the table has an implementation for it (through the class's MRO);
* ``"missing"``: the class is in the backend's scope but has no implementation (the
  backend's completeness test fails on it);
* ``"fallback"``: the class is outside the backend's scope; its linkers run such nodes with
  another implementation (``cvm`` in Python, the GPU linker on the host).

The Op classes are the union of every backend's scope, so Op classes of third-party plugins
appear as soon as a backend means to cover them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FALLBACK", "IMPLEMENTED", "MISSING", "capability_matrix", "op_class_name"]

IMPLEMENTED, MISSING, FALLBACK = "implemented", "missing", "fallback"


def op_class_name(cls: type) -> str:
    """``module.QualName`` of an Op class."""
    return f"{cls.__module__}.{cls.__qualname__}"


def capability_matrix(backend_infos: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """The matrix of the backends described by ``backend_infos`` (``opweave_backend_info``
    answers; those without an ``"implementations"`` table are left out).

    Returns
    -------
    dict
        Op class name -> backend name -> ``"implemented"``, ``"missing"`` or
        ``"fallback"``, both levels sorted by name.
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
        row: dict[str, str] = {}
        for name in sorted(tables):
            if tables[name].implements(cls):
                row[name] = IMPLEMENTED
            elif cls in scopes[name]:
                row[name] = MISSING
            else:
                row[name] = FALLBACK
        matrix[op_class_name(cls)] = row
    return matrix
