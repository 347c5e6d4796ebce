"""The ``opweave.plugins`` entry point of the Python backend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.plugins import hookimpl
from opweave_python.impls import PERFORMS, perform_for
from opweave_python.linkers.perform_linker import PerformLinker
from opweave_python.linkers.vm import VMLinker
from opweave_python.thunk import find_perform, make_perform_thunk

#: Implementations this backend builds thunks for.
IMPLS = (None, "py")


@hookimpl
def opweave_linkers() -> dict[str, type]:
    """``py`` and ``vm``."""
    return {"py": PerformLinker, "vm": VMLinker}


@hookimpl
def opweave_backend_info() -> dict[str, Any]:
    """Always available: it needs only NumPy."""
    return {
        "name": "opweave-python",
        "linkers": ["py", "vm"],
        "available": True,
        "reason": None,
        "implementations": PERFORMS,
    }


@hookimpl
def opweave_implementation(op: Any, node: Any, backend: str) -> Any:
    """NumPy implementations (``backend="py"``) of the core's standard Ops."""
    return perform_for(op) if backend == "py" else None


@hookimpl(trylast=True)
def opweave_make_thunk(
    op: Any,
    node: Any,
    storage_map: dict[Any, list[Any]],
    compute_map: dict[Any, list[int]],
    no_recycling: Sequence[Any],
    impl: str | None,
) -> Any:
    """A thunk from the Op's own ``perform`` or the one ``opweave_implementation`` gives."""
    if impl not in IMPLS:
        return None
    perform = find_perform(op, node)
    if perform is None:
        return None
    return make_perform_thunk(node, perform, storage_map, compute_map, no_recycling)
