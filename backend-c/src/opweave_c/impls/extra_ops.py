"""C code for :mod:`opweave.tensor.extra_ops`.

* ``CumOp``: NumPy's ``PyArray_CumSum``/``PyArray_CumProd`` into the (reused) output, in the
  input's dtype, as the Python backend's ``numpy.cumsum(x, axis, dtype=x.dtype)``;
* ``SearchsortedOp``: ``PyArray_SearchSorted`` (``numpy.searchsorted``), cast to int64;
* ``Repeat``: ``PyArray_Repeat`` (``numpy.repeat``);
* ``FillDiagonal``/``FillDiagonalOffset``: a copy of the input and a loop over the diagonal.

So values, dtypes and NumPy's errors are those of :mod:`opweave_python.impls.extra_ops`.
``Unique``, ``UnravelIndex`` and ``RavelMultiIndex`` have no C code: NumPy's C API has no
such functions, and a loop would redo NumPy's sorting; ``cvm`` runs them in Python.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.extra_ops import (
    CumOp,
    FillDiagonal,
    FillDiagonalOffset,
    RavelMultiIndex,
    Repeat,
    SearchsortedOp,
    Unique,
    UnravelIndex,
)
from opweave_c.impls.common import SnippetImpl, int_value, python_only, tensor_dtype, typenum
from opweave_c.impls.csource import render

__all__ = [
    "C_OPS",
    "CumOpC",
    "FillDiagonalC",
    "FillDiagonalOffsetC",
    "RepeatC",
    "SearchsortedC",
]


class _ExtraC(SnippetImpl):
    """The version shared by this module's implementations."""

    version = (1,)


class CumOpC(_ExtraC):
    """``PyArray_CumSum``/``PyArray_CumProd`` along the Op's axis, in the input's dtype."""

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Prepare the output, accumulate into it."""
        (x,) = inputs
        (z,) = outputs
        op = node.op
        fn = "PyArray_CumSum" if op.mode == "add" else "PyArray_CumProd"  # type: ignore[attr-defined]
        num = typenum(node.outputs[0].type.dtype)  # type: ignore[attr-defined]
        axis = op.axis  # type: ignore[attr-defined]
        return render(
            "extra_ops.c", "cumop", x=x, z=z, fn=fn, axis=axis, typenum=num, fail=sub["fail"]
        )


class SearchsortedC(_ExtraC):
    """``PyArray_SearchSorted`` with the Op's side (and sorter)."""

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Search, cast to int64."""
        x, v, *rest = inputs
        (z,) = outputs
        side = "NPY_SEARCHLEFT" if node.op.side == "left" else "NPY_SEARCHRIGHT"  # type: ignore[attr-defined]
        sorter = f"(PyObject*){rest[0]}" if rest else "NULL"
        return render(
            "extra_ops.c", "searchsorted", x=x, v=v, z=z, side=side, sorter=sorter, fail=sub["fail"]
        )


class RepeatC(_ExtraC):
    """``PyArray_Repeat`` along the Op's axis."""

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Repeat."""
        x, repeats = inputs
        (z,) = outputs
        axis = node.op.axis  # type: ignore[attr-defined]
        return render(
            "extra_ops.c", "repeat", x=x, repeats=repeats, z=z, axis=axis, fail=sub["fail"]
        )


class FillDiagonalC(_ExtraC):
    """Copy, then set ``a[i, ..., i]`` for ``i < min(shape)`` (dimensions of one length
    beyond two)."""

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Copy and fill."""
        a, val = inputs
        (z,) = outputs
        return render("extra_ops.c", "fill_diagonal", a=a, val=val, z=z, fail=sub["fail"])


class FillDiagonalOffsetC(_ExtraC):
    """Copy, then set the ``offset`` diagonal of the matrix."""

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Copy and fill."""
        a, val, offset = inputs
        (z,) = outputs
        off = int_value(offset, node.inputs[2].type.dtype)  # type: ignore[attr-defined]
        return render(
            "extra_ops.c", "fill_diagonal_offset", a=a, val=val, offset=off, z=z, fail=sub["fail"]
        )


def _all_c(node: Apply) -> bool:
    return all(tensor_dtype(v) is not None for v in (*node.inputs, *node.outputs))


def _cumop(op: CumOp, node: Apply) -> CumOpC | None:
    return CumOpC() if _all_c(node) else None


def _searchsorted(op: SearchsortedOp, node: Apply) -> SearchsortedC | None:
    return SearchsortedC() if _all_c(node) else None


def _repeat(op: Repeat, node: Apply) -> RepeatC | None:
    return RepeatC() if _all_c(node) else None


def _fill_diagonal(op: FillDiagonal, node: Apply) -> FillDiagonalC | None:
    return FillDiagonalC() if _all_c(node) else None


def _fill_diagonal_offset(op: FillDiagonalOffset, node: Apply) -> FillDiagonalOffsetC | None:
    return FillDiagonalOffsetC() if _all_c(node) else None


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        CumOp: _cumop,
        SearchsortedOp: _searchsorted,
        Repeat: _repeat,
        FillDiagonal: _fill_diagonal,
        FillDiagonalOffset: _fill_diagonal_offset,
        Unique: python_only,
        UnravelIndex: python_only,
        RavelMultiIndex: python_only,
    }
)
