"""C code for :mod:`opweave.tensor.basic`.

``Alloc``, ``MakeVector``, ``TensorFromScalar``, ``ScalarFromTensor``, ``Eye`` and
``Split`` (views) are written out; ``Join``, ``ARange`` and ``Choose`` call the NumPy C
functions behind ``numpy.concatenate``, ``numpy.arange`` and ``numpy.choose`` so that
dtypes, values and error messages are those of the Python backend
(:mod:`opweave_python.impls.basic`).

The selections: ``Nonzero`` counts the non-zero elements (NaN is non-zero, ``-0.0`` is
zero), then writes their indices in C order into an ``(ndim, count)`` int64 matrix,
walking the input with its own strides; ``ExtractDiag`` copies a strided view of the
diagonal (``numpy.diagonal(...).copy()``: the other axes in order, then the diagonal);
``DiagGrad`` copies ``x`` and writes ``y`` (cast to ``x``'s dtype, broadcast as NumPy's
fancy assignment allows) onto that diagonal of the copy; a ``y`` that does not broadcast
raises NumPy's ``ValueError`` ("shape mismatch: value array of shape ..."). A
``DiagGrad`` whose axes are not distinct and within the input's rank, and offsets beyond
2**62, are left to Python. ``AllocDiag`` and ``PermuteRowElements`` have no C code: the C linkers
run the Python backend's implementations.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.scalar.type import DTYPE_SPECS, ScalarType
from opweave.tensor.basic import (
    Alloc,
    AllocDiag,
    AllocEmpty,
    ARange,
    Choose,
    DiagGrad,
    ExtractDiag,
    Eye,
    Join,
    MakeVector,
    Nonzero,
    PermuteRowElements,
    ScalarFromTensor,
    Split,
    TensorFromScalar,
)
from opweave_c.impls.common import (
    SHARED_SUPPORT,
    SnippetImpl,
    int_value,
    py_int,
    python_only,
    raw_value,
    tensor_dtype,
    typenum,
)
from opweave_c.impls.csource import render, snippet
from opweave_c.impls.tensor_type import C_DTYPES


def _scalar_ints(node: Apply, inputs: list[Any]) -> bool:
    """Whether every variable in ``inputs`` is a 0-d tensor with C code."""
    return all(tensor_dtype(v) is not None and v.type.ndim == 0 for v in inputs)


# ====================================================================== Alloc


class AllocC(SnippetImpl):
    """A new array of the requested shape with the value broadcast into it."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check the shape and the broadcast (as ``check_broadcast``), then copy the value."""
        value, *shape = inputs
        (z,) = outputs
        fail = sub["fail"]
        nd = len(shape)
        vstatic = node.inputs[0].type.shape  # type: ignore[attr-defined]
        vn = len(vstatic)
        reads = "\n    ".join(
            f"opw_shp[{k}] = (npy_intp){int_value(s, v.type.dtype)};"  # type: ignore[attr-defined]
            for k, (s, v) in enumerate(zip(shape, node.inputs[1:]))
        )
        runtime = "\n    ".join(
            f"if (PyArray_DIMS({value})[{d}] == 1 && opw_shp[{nd - vn + d}] != 1) {{\n"
            f'        opw_runtime_broadcast_error("Alloc", {d}, opw_shp[{nd - vn + d}]);\n'
            f"        {fail}\n    }}"
            for d, st in enumerate(vstatic)
            if st != 1
        )
        return render(
            "basic.c",
            "alloc",
            max_nd_1=max(nd, 1),
            reads=reads,
            nd=nd,
            fail=fail,
            value=value,
            vn=vn,
            nd_vn=nd - vn,
            runtime=runtime,
            z=z,
        )


def _alloc(op: Alloc, node: Apply) -> AllocC | None:
    if tensor_dtype(node.inputs[0]) is None or not _scalar_ints(node, node.inputs[1:]):
        return None
    if node.outputs[0].type.dtype != node.inputs[0].type.dtype:  # type: ignore[attr-defined]
        return None
    return AllocC()


# ====================================================================== MakeVector


class MakeVectorC(SnippetImpl):
    """The 0-d inputs written into a (reused when possible) vector."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Prepare a vector of ``len(inputs)`` and store each value."""
        (z,) = outputs
        n = len(inputs)
        stores = "\n    ".join(
            f"((dtype_{z}*)PyArray_DATA({z}))[{k}] = (dtype_{z}){raw_value(i)};"
            for k, i in enumerate(inputs)
        )
        return render(
            "basic.c",
            "make_vector",
            n=n,
            z=z,
            typenum=typenum(node.op.dtype),
            fail=sub["fail"],
            stores=stores,
        )


def _make_vector(op: MakeVector, node: Apply) -> MakeVectorC | None:
    if op.dtype not in C_DTYPES or not _scalar_ints(node, node.inputs):
        return None
    if any(v.type.dtype != op.dtype for v in node.inputs):  # type: ignore[attr-defined]
        return None  # make_node casts first; a hand-built node keeps Python's casting
    return MakeVectorC()


# ====================================================================== scalars


class TensorFromScalarC(SnippetImpl):
    """The C number as a 0-d array."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Store the number in a 0-d output."""
        (s,) = inputs
        (z,) = outputs
        type_num = typenum(node.outputs[0].type.dtype)  # type: ignore[attr-defined]
        return render("basic.c", "tensor_from_scalar", z=z, typenum=type_num, fail=sub["fail"], s=s)


def _tensor_from_scalar(op: TensorFromScalar, node: Apply) -> TensorFromScalarC | None:
    s = node.inputs[0].type
    if not isinstance(s, ScalarType) or s.dtype not in C_DTYPES:
        return None
    if tensor_dtype(node.outputs[0]) != s.dtype:
        return None
    return TensorFromScalarC()


class ScalarFromTensorC(SnippetImpl):
    """The 0-d array's element as a C number."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Read the element."""
        (t,) = inputs
        (z,) = outputs
        return f"{z} = (dtype_{z}){raw_value(t)};\n"


def _scalar_from_tensor(op: ScalarFromTensor, node: Apply) -> ScalarFromTensorC | None:
    out = node.outputs[0].type
    if not _scalar_ints(node, node.inputs) or not isinstance(out, ScalarType):
        return None
    if out.dtype != node.inputs[0].type.dtype:  # type: ignore[attr-defined]
        return None
    return ScalarFromTensorC()


# ====================================================================== Eye


class EyeC(SnippetImpl):
    """``numpy.eye(n, m, k)``: zeros, then ones on diagonal ``k``."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check the shape, clear the output, write the diagonal."""
        n, m, k = inputs
        (z,) = outputs
        fail = sub["fail"]
        dt = [v.type.dtype for v in node.inputs]  # type: ignore[attr-defined]
        type_num = typenum(node.op.dtype)
        return render(
            "basic.c",
            "eye",
            int_value_n_dt_0=int_value(n, dt[0]),
            int_value_m_dt_1=int_value(m, dt[1]),
            int_value_k_dt_2=int_value(k, dt[2]),
            fail=fail,
            z=z,
            typenum=type_num,
        )


def _eye(op: Eye, node: Apply) -> EyeC | None:
    if op.dtype not in C_DTYPES or not _scalar_ints(node, node.inputs):
        return None
    return EyeC()


# ====================================================================== ARange


class ARangeC(SnippetImpl):
    """``numpy.arange`` through ``PyArray_ArangeObj`` (the function behind it)."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Box the three numbers as Python numbers (``.item()``), check the step, call NumPy."""
        (z,) = outputs
        fail = sub["fail"]
        boxes = []
        for i, v in zip(inputs, node.inputs):
            dtype = v.type.dtype  # type: ignore[attr-defined]
            if dtype == "bool":
                boxes.append(f"PyBool_FromLong((long){raw_value(i)})")
            elif dtype.startswith("float"):
                boxes.append(f"PyFloat_FromDouble((double){raw_value(i)})")
            else:
                boxes.append(py_int(i, dtype))
        step_zero = f"{raw_value(inputs[2])} == 0"
        type_num = typenum(node.op.dtype)
        return render(
            "basic.c",
            "arange",
            step_zero=step_zero,
            fail=fail,
            typenum=type_num,
            a=boxes[0],
            b=boxes[1],
            c=boxes[2],
            z=z,
        )


def _arange(op: ARange, node: Apply) -> ARangeC | None:
    if op.dtype not in C_DTYPES or not _scalar_ints(node, node.inputs):
        return None
    return ARangeC()


# ====================================================================== Join


class JoinC(SnippetImpl):
    """``numpy.concatenate(tensors, axis).astype(out_dtype, copy=False)``; the axis is the
    first input, read when the node runs (negative values count from the end)."""

    #: (4,): the axis is the first input again (PyTensor's ``Join()(axis, *tensors)``).
    version = (4,)

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Concatenate through ``PyArray_Concatenate`` along the axis input, cast if needed."""
        axis, *tensors = inputs
        (z,) = outputs
        type_num = typenum(node.outputs[0].type.dtype)  # type: ignore[attr-defined]
        packs = "\n    ".join(
            f"PyTuple_SET_ITEM(opw_seq, {k}, (PyObject*){t}); Py_INCREF({t});"
            for k, t in enumerate(tensors)
        )
        return render(
            "basic.c",
            "join",
            axis=int_value(axis, node.inputs[0].type.dtype),  # type: ignore[attr-defined]
            fail=sub["fail"],
            n=len(tensors),
            nd=node.outputs[0].type.ndim,  # type: ignore[attr-defined]
            packs=packs,
            typenum=type_num,
            z=z,
        )


def _join(op: Join, node: Apply) -> JoinC | None:
    if tensor_dtype(node.outputs[0]) is None:
        return None
    if not _scalar_ints(node, node.inputs[:1]):
        return None
    if any(tensor_dtype(v) is None for v in node.inputs[1:]):
        return None
    return JoinC()


# ====================================================================== Choose

#: ``Choose.mode`` -> NumPy's clip mode constant.
_CLIP_MODES: MappingProxyType[str, str] = MappingProxyType(
    {"raise": "NPY_RAISE", "wrap": "NPY_WRAP", "clip": "NPY_CLIP"}
)


class ChooseC(SnippetImpl):
    """``numpy.choose(a, choices, mode)`` through ``PyArray_Choose`` (the function behind it)."""

    version = (1,)

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Choose, then cast to the output dtype if NumPy's differs."""
        a, choices = inputs
        (z,) = outputs
        return render(
            "basic.c",
            "choose",
            a=a,
            choices=choices,
            clipmode=_CLIP_MODES[node.op.mode],  # type: ignore[attr-defined]
            fail=sub["fail"],
            typenum=typenum(node.outputs[0].type.dtype),  # type: ignore[attr-defined]
            z=z,
        )


def _choose(op: Choose, node: Apply) -> ChooseC | None:
    if any(tensor_dtype(v) is None for v in (*node.inputs, *node.outputs)):
        return None
    return ChooseC()


# ====================================================================== Split


class SplitC(SnippetImpl):
    """The pieces of ``x`` along ``axis`` as views, after the Python backend's checks."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check axis and sizes; each output a view starting where the previous ended."""
        x, axis, splits = inputs
        fail = sub["fail"]
        n = len(outputs)
        adt = node.inputs[1].type.dtype  # type: ignore[attr-defined]
        sdt = node.inputs[2].type.dtype  # type: ignore[attr-defined]
        raw = f"(*(dtype_{splits}*)PyArray_GETPTR1({splits}, opw_j))"
        if sdt == "uint64":
            read = f"({raw} > (npy_uint64)NPY_MAX_INT64 ? NPY_MAX_INT64 : (npy_int64){raw})"
        else:
            read = f"(npy_int64){raw}"
        views = "\n    ".join(
            render("basic.c", "split_view", k=k, x=x, fail=fail, z=z) for k, z in enumerate(outputs)
        )
        return render(
            "basic.c",
            "split",
            axis_value=int_value(axis, adt),
            n=n,
            splits=splits,
            x=x,
            fail=fail,
            read=read,
            views=views,
        )


def _split(op: Split, node: Apply) -> SplitC | None:
    if tensor_dtype(node.inputs[0]) is None or not _scalar_ints(node, node.inputs[1:2]):
        return None
    if tensor_dtype(node.inputs[2]) is None:
        return None
    return SplitC()


# ====================================================================== selections


#: Offsets beyond this are left to Python (no overflow in the C arithmetic).
_MAX_OFFSET = 2**62

SELECTION_SUPPORT = snippet("basic.c", "selection_support")


def _nonzero_support(dtype: str) -> str:
    """``opw_sel_nonzero_<dtype>``: count, or write, the indices of the non-zero elements."""
    t = DTYPE_SPECS[dtype][0]
    return render("basic.c", "nonzero_support", dtype=dtype, t=t)


class _SelectionC(SnippetImpl):
    """The shared helpers and the version."""

    version = (2,)

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shape helpers and the selection helpers."""
        return [SHARED_SUPPORT, SELECTION_SUPPORT]


class NonzeroC(_SelectionC):
    """``numpy.nonzero`` as an ``(ndim, count)`` int64 matrix."""

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers and the dtype's loop."""
        return [*super().c_support_code(), _nonzero_support(self.dtype)]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Count, prepare the output, write the indices."""
        (a,) = inputs
        (z,) = outputs
        nd = node.inputs[0].type.ndim  # type: ignore[attr-defined]
        fn = f"opw_sel_nonzero_{self.dtype}"
        return render("basic.c", "nonzero", nd=nd, a=a, fn=fn, z=z, fail=sub["fail"])


def _diag_args(op: Any) -> str:
    return f"(npy_int64){int(op.offset)}LL, {int(op.axis1)}, {int(op.axis2)}"


class ExtractDiagC(_SelectionC):
    """A C-contiguous copy of the diagonal."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """View the diagonal, prepare the output with its shape, copy."""
        (x,) = inputs
        (z,) = outputs
        fail = sub["fail"]
        return render("basic.c", "extract_diag", x=x, diag_args=_diag_args(node.op), fail=fail, z=z)


class DiagGradC(_SelectionC):
    """A copy of ``x`` with ``y`` written on the diagonal."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Copy ``x``, view the copy's diagonal, check ``y`` broadcasts, copy it in."""
        x, y = inputs
        (z,) = outputs
        fail = sub["fail"]
        label = f"opw_sel_fail_{sub['id']}"
        return render(
            "basic.c",
            "diag_grad",
            z=z,
            x=x,
            y=y,
            fail=fail,
            diag_args_node_op=_diag_args(node.op),
            label=label,
        )


def _nonzero(op: Nonzero, node: Apply) -> NonzeroC | None:
    dtype = tensor_dtype(node.inputs[0])
    if dtype is None or node.inputs[0].type.ndim == 0:  # type: ignore[attr-defined]
        return None
    return NonzeroC(dtype)


def _diag_ok(op: Any, ndim: int) -> bool:
    """Axes distinct and within ``ndim``, offset small enough for the C arithmetic."""
    a1, a2 = op.axis1, op.axis2
    return 0 <= a1 < ndim and 0 <= a2 < ndim and a1 != a2 and abs(op.offset) <= _MAX_OFFSET


def _extract_diag(op: ExtractDiag, node: Apply) -> ExtractDiagC | None:
    x = node.inputs[0]
    if tensor_dtype(x) is None or not _diag_ok(op, x.type.ndim):  # type: ignore[attr-defined]
        return None
    if tensor_dtype(node.outputs[0]) != tensor_dtype(x):
        return None
    return ExtractDiagC()


def _diag_grad(op: DiagGrad, node: Apply) -> DiagGradC | None:
    x, y = node.inputs
    if tensor_dtype(x) is None or tensor_dtype(y) is None:
        return None
    if not _diag_ok(op, x.type.ndim):  # type: ignore[attr-defined]
        return None
    if tensor_dtype(node.outputs[0]) != tensor_dtype(x):
        return None
    return DiagGradC()


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        Alloc: _alloc,
        MakeVector: _make_vector,
        TensorFromScalar: _tensor_from_scalar,
        ScalarFromTensor: _scalar_from_tensor,
        Eye: _eye,
        ARange: _arange,
        Join: _join,
        Choose: _choose,
        Split: _split,
        Nonzero: _nonzero,
        ExtractDiag: _extract_diag,
        DiagGrad: _diag_grad,
        AllocDiag: python_only,  # a NumPy fancy assignment into zeros: no C code
        AllocEmpty: python_only,
        PermuteRowElements: python_only,
    }
)
