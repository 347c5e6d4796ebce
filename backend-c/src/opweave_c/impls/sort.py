"""C code for :mod:`opweave.tensor.sort`: ``SortOp`` and ``ArgSortOp``.

Both call the NumPy C functions behind ``numpy.sort`` and ``numpy.argsort``
(``PyArray_Sort`` on a copy of the input that keeps its memory order, and
``PyArray_ArgSort``) with the Op's ``kind``, so that values, the order of equal elements,
NaN placement and error messages (an axis out of range) are those of the Python backend
(:mod:`opweave_python.impls.sort`).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.sort import ArgSortOp, SortOp
from opweave_c.impls.common import SnippetImpl, int_value, tensor_dtype
from opweave_c.impls.csource import render

__all__ = ["C_OPS", "ArgSortC", "SortC"]

#: ``kind`` -> NumPy's ``NPY_SORTKIND`` constant.
_KINDS: MappingProxyType[str, str] = MappingProxyType(
    {
        "quicksort": "NPY_QUICKSORT",
        "heapsort": "NPY_HEAPSORT",
        "mergesort": "NPY_MERGESORT",
        "stable": "NPY_STABLESORT",
    }
)


class _SortingC(SnippetImpl):
    """Shared by both Ops: the section of ``sort.c`` they fill in."""

    version = (1,)
    section = ""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Read the axis, sort (or argsort) through NumPy's C function."""
        x, axis = inputs
        (z,) = outputs
        kind = _KINDS[node.op.kind]  # type: ignore[attr-defined]
        value = int_value(axis, node.inputs[1].type.dtype)  # type: ignore[attr-defined]
        if self.section == "sort":
            return render("sort.c", "sort", axis=value, fail=sub["fail"], kind=kind, x=x, z=z)
        return render("sort.c", "argsort", axis=value, fail=sub["fail"], kind=kind, x=x, z=z)


class SortC(_SortingC):
    """``numpy.sort``: ``PyArray_Sort`` on a copy of the input."""

    section = "sort"


class ArgSortC(_SortingC):
    """``numpy.argsort`` as int64: ``PyArray_ArgSort``."""

    section = "argsort"


def _sorting(op: Any, node: Apply) -> _SortingC | None:
    if any(tensor_dtype(v) is None for v in (*node.inputs, *node.outputs)):
        return None
    return SortC() if isinstance(op, SortOp) else ArgSortC()


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({SortOp: _sorting, ArgSortOp: _sorting})
