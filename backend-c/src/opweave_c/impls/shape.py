"""C code for :mod:`opweave.tensor.shape`: ``Reshape`` and ``SpecifyShape``.

Both give the values, views and errors of the Python backend
(:mod:`opweave_python.impls.shape`): ``Reshape`` goes through ``PyArray_Newshape``,
the function behind ``numpy.reshape``, so it returns a view exactly when NumPy does;
``SpecifyShape`` returns its input itself after checking the shape.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply, Constant
from opweave.graph.type import Generic
from opweave.tensor.shape import Reshape, SpecifyShape
from opweave_c.impls.common import SnippetImpl, c_string, py_int, tensor_dtype
from opweave_c.impls.csource import render

# ====================================================================== Reshape


class ReshapeC(SnippetImpl):
    """``numpy.reshape`` through ``PyArray_Newshape``: a view whenever NumPy makes one."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Read the shape vector, reshape, prefix NumPy's ValueError with the Op."""
        x, shp = inputs
        (z,) = outputs
        ndim = node.op.ndim  # type: ignore[attr-defined]
        op = c_string(str(node.op))
        fail = sub["fail"]
        return render(
            "shape.c",
            "reshape",
            max_ndim_1=max(ndim, 1),
            shp=shp,
            ndim=ndim,
            op=op,
            fail=fail,
            x=x,
            z=z,
        )


def _reshape(op: Reshape, node: Apply) -> ReshapeC | None:
    if tensor_dtype(node.inputs[0]) is None or tensor_dtype(node.inputs[1]) is None:
        return None
    if tensor_dtype(node.inputs[1]) == "uint64":
        return None  # huge entries become Python ints NumPy refuses; leave them to Python
    return ReshapeC()


# ====================================================================== SpecifyShape


class SpecifyShapeC(SnippetImpl):
    """Check the input's shape against the integer entries; the output is the input."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Compare each given entry, in order; on a mismatch raise AssertionError as Python."""
        x, *entries = inputs
        (z,) = outputs
        fail = sub["fail"]
        nd = len(entries)
        checks = []
        wanted = []
        for i, (var, cname) in enumerate(zip(node.inputs[1:], entries)):
            if isinstance(var.type, Generic):
                wanted.append(f'PyTuple_SET_ITEM(opw_w, {i}, PyUnicode_FromString("?"));')
                continue
            dtype = var.type.dtype  # type: ignore[attr-defined]
            raw = f"(*(dtype_{cname}*)PyArray_DATA({cname}))"
            if dtype.startswith("uint"):
                differs = f"(npy_uint64){raw} != (npy_uint64)PyArray_DIMS({x})[{i}]"
            else:
                differs = f"(npy_int64){raw} != (npy_int64)PyArray_DIMS({x})[{i}]"
            box = py_int(cname, dtype)
            checks.append(f"if (opw_bad < 0 && {differs}) {{ opw_bad = {i}; opw_e = {box}; }}")
            wanted.append(f"PyTuple_SET_ITEM(opw_w, {i}, {py_int(cname, dtype)});")
        check_code = "\n    ".join(checks)
        wanted_code = "\n            ".join(wanted)
        return render(
            "shape.c",
            "specify_shape",
            x=x,
            nd=nd,
            fail=fail,
            check_code=check_code,
            wanted_code=wanted_code,
            z=z,
        )


def _specify_shape(op: SpecifyShape, node: Apply) -> SpecifyShapeC | None:
    if tensor_dtype(node.inputs[0]) is None:
        return None
    for var in node.inputs[1:]:
        if isinstance(var.type, Generic):
            if not (isinstance(var, Constant) and var.data is None):
                return None
        elif tensor_dtype(var) is None or var.type.ndim != 0:  # type: ignore[attr-defined]
            return None
    return SpecifyShapeC()


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {Reshape: _reshape, SpecifyShape: _specify_shape}
)
