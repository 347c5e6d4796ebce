"""The ``opweave.plugins`` entry point of the Python backend.

Its thunks are the core's (:mod:`opweave.link.perform`): this backend provides the
``py``/``vm`` linkers and the NumPy implementations of the core's Ops (its ``py`` table).
"""

from __future__ import annotations

import functools
from typing import Any

from opweave.plugins import hookimpl
from opweave_python.impls import PERFORMS, perform_for
from opweave_python.linkers.perform_linker import PerformLinker
from opweave_python.linkers.vm import VMLinker


@hookimpl
def opweave_linkers() -> dict[str, type]:
    """``py`` and ``vm``."""
    return {"py": PerformLinker, "vm": VMLinker}


@hookimpl
def opweave_backend_info() -> dict[str, Any]:
    """Always available: it needs only NumPy. Its table's entries are ``perform``
    functions taking the Op first (``implementation_of`` binds them)."""
    return {
        "name": "opweave-python",
        "linkers": ["py", "vm"],
        "available": True,
        "reason": None,
        "implementations": PERFORMS,
        "implementation_of": _bound_perform,
    }


def _bound_perform(entry: Any, op: Any, node: Any) -> Any:
    return functools.partial(entry, op)


@hookimpl(trylast=True)
def opweave_implementation(op: Any, node: Any, backend: str) -> Any:
    """NumPy implementations (``backend="py"``) of the core's standard Ops: the ``py``
    table's, asked last so that the other plugins' answers (GPU nodes') come first."""
    return perform_for(op) if backend == "py" else None
