"""PyTensor's ``pytensor.link.c.basic``: the C linkers.

opweave's C linkers come from the C backend (the opweave-c distribution), found through the
plugins like any linker: ``CLinker`` here is the installed linker named ``c`` (the whole
graph as one C function) and ``OpWiseCLinker`` the one named ``cvm`` (one C thunk per node,
run in a loop; nodes without C run in Python), as ``Mode(linker="c")`` and
``Mode(linker="cvm")`` would use. Without opweave-c, importing them raises an
:class:`ImportError` that says what to install. :class:`DualLinker` runs every node
with its Python and its C implementation and compares their outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from opweave.graph.basic import Apply
from opweave.graph.fg import FunctionGraph
from opweave.link._absent import absent_name
from opweave.link.basic import NodeThunk, WrapLinker
from opweave.link.lookup import LinkerNotFoundError, available_linkers, linker_distributions

#: The path this module is imported under (PyTensor's, with ``opweave``).
PATH = "opweave.link.c.basic"

__all__ = ["CLinker", "DualLinker", "OpWiseCLinker"]  # noqa: F822 - some by __getattr__

#: PyTensor's linker class names -> opweave's linker names.
_LINKERS = {"CLinker": "c", "OpWiseCLinker": "cvm"}

#: PyTensor names opweave lacks here -> what to use instead.
_ABSENT = {
    "get_module_cache": (
        "The C backend's module cache is opweave_c.cache.cache_for_config() (the opweave-c "
        "distribution)."
    ),
}


def same_values(py_cell: list[Any], c_cell: list[Any]) -> None:
    """DualLinker's default checker: the two cells hold equal values (NaN differs).

    Raises
    ------
    ValueError
        Naming both values when they differ in value, shape or dtype.
    """
    py_value, c_value = py_cell[0], c_cell[0]
    if isinstance(py_value, np.ndarray | np.generic) or isinstance(
        c_value, np.ndarray | np.generic
    ):
        py_arr, c_arr = np.asarray(py_value), np.asarray(c_value)
        equal = (
            py_arr.shape == c_arr.shape
            and py_arr.dtype == c_arr.dtype
            and bool(np.array_equal(py_arr, c_arr))
        )
    else:
        equal = bool(py_value == c_value)
    if not equal:
        raise ValueError(
            f"Output mismatch: the Python implementation gave {py_value!r}, "
            f"the C implementation {c_value!r}"
        )


class DualLinker(WrapLinker):
    """PyTensor's ``DualLinker``: each node runs with its Python and its C implementation.

    The Python side (the ``py`` linker's storage) gives the outputs; the C side (the
    ``cvm`` linker's: C where the node has C code, Python otherwise) gets a copy of the
    inputs, and after every node ``checker(py_cell, c_cell)`` compares each output
    (one-element storage cells) and raises when they differ.

    Parameters
    ----------
    checker
        Called with the Python and the C cell of every output; raises on a mismatch.
        The default, :func:`same_values`, asks for equal values, shapes and dtypes.
    schedule
        Accepted for PyTensor's signature; nodes run in the graph's topological order.

    Raises
    ------
    LinkerNotFoundError
        When the ``py`` or the ``cvm`` linker is not installed (opweave-python,
        opweave-c).
    """

    name: ClassVar[str] = "dual"

    def __init__(
        self,
        checker: Callable[[list[Any], list[Any]], Any] = same_values,
        schedule: Any = None,
        allow_gc: bool | None = None,
    ) -> None:
        installed = available_linkers()
        sides = []
        for linker in ("py", "cvm"):
            if linker not in installed:
                dist = linker_distributions().get(linker, "the backend that provides it")
                raise LinkerNotFoundError(
                    f"DualLinker compares the Python and the C implementation of every node "
                    f"and needs the linker {linker!r}, which no installed plugin provides: "
                    f"pip install {dist}"
                )
            sides.append(installed[linker])
        self.checker = checker
        self.schedule = schedule
        super().__init__(sides, self.run_and_compare, allow_gc=allow_gc)

    def run_and_compare(
        self, fgraph: FunctionGraph, i: int, node: Apply, py_thunk: NodeThunk, c_thunk: NodeThunk
    ) -> None:
        """Run both thunks of ``node`` and check each output pair with the checker."""
        py_thunk()
        c_thunk()
        for py_cell, c_cell in zip(py_thunk.outputs, c_thunk.outputs, strict=True):
            self.checker(py_cell, c_cell)


def __getattr__(name: str) -> object:
    linker = _LINKERS.get(name)
    if linker is None:
        raise absent_name(PATH, name, _ABSENT)
    found = available_linkers().get(linker)
    if found is None:
        dist = linker_distributions().get(linker, "the backend that provides it")
        raise ImportError(
            f"{PATH}.{name} is the linker {linker!r}, which no installed plugin provides: "
            f"pip install {dist}",
            name=PATH,
        )
    return found
