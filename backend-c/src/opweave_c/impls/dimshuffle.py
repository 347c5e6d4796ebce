"""C code of :class:`~opweave.tensor.dimshuffle.DimShuffle`: a view of the input.

The output is a new array object on the input's data (``PyArray_NewFromDescr`` with the
input as its base, writeable when the input is), with the kept axes' lengths and strides
in the new order and length-1, stride-0 new axes: what the Python backend's
``transpose``/``reshape``/``expand_dims`` give, matching the Op's ``view_map``. A dropped
axis must have length 1 (``ValueError`` otherwise, as in Python).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.dimshuffle import DimShuffle
from opweave_c.impls.csource import snippet
from opweave_c.impls.tensor_type import C_DTYPES, simple_c_string

__all__ = ["C_OPS", "DIMSHUFFLE_C_SUPPORT", "DimShuffleC"]

VERSION = (1,)

DIMSHUFFLE_C_SUPPORT = snippet("dimshuffle.c", "support")


class DimShuffleC:
    """The C implementation of a DimShuffle node."""

    def __init__(self, op: DimShuffle) -> None:
        self.op = op

    def c_support_code(self, **kwargs: Any) -> str:
        """The view helper."""
        return DIMSHUFFLE_C_SUPPORT

    def c_code_cache_version(self) -> tuple[int, ...]:
        """Version of the generated code."""
        return VERSION

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        sub: dict[str, str],
    ) -> str:
        """Check the dropped axes, then make the view."""
        (x,) = inputs
        (z,) = outputs
        fail = sub["fail"]
        op = self.op
        nd = len(op.new_order)
        lines = [
            f"npy_intp opw_dims[{max(nd, 1)}], opw_strides[{max(nd, 1)}];",
            "PyArrayObject* opw_v;",
        ]
        for axis in op.drop:
            lines.append(
                f"if (PyArray_DIMS({x})[{axis}] != 1) {{\n"
                '    PyErr_Format(PyExc_ValueError, "%s: cannot drop axis %d of a value with '
                f'length %zd there (length is not 1)", {simple_c_string(str(op))}, {axis}, '
                f"(Py_ssize_t)PyArray_DIMS({x})[{axis}]);\n"
                f"    {fail}\n}}"
            )
        for j, entry in enumerate(op.new_order):
            if entry == "x":
                lines.append(f"opw_dims[{j}] = 1; opw_strides[{j}] = 0;")
            else:
                lines.append(
                    f"opw_dims[{j}] = PyArray_DIMS({x})[{entry}]; "
                    f"opw_strides[{j}] = PyArray_STRIDES({x})[{entry}];"
                )
        lines.append(f"opw_v = opw_ds_view({x}, {nd}, opw_dims, opw_strides);")
        lines.append(f"if (!opw_v) {fail}")
        lines.append(f"Py_XDECREF({z});\n{z} = opw_v;")
        body = "\n".join("    " + ln.replace("\n", "\n    ") for ln in lines)
        return "{\n" + body + "\n}\n"


def _dimshuffle(op: DimShuffle, node: Apply) -> DimShuffleC | None:
    if node.inputs[0].type.dtype not in C_DTYPES:  # type: ignore[attr-defined]
        return None
    return DimShuffleC(op)


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({DimShuffle: _dimshuffle})
