"""C code for :mod:`opweave.tensor.subtensor`: basic, incrementing and integer-vector indexing.

``Subtensor`` builds its output as a view of the input (``PyArray_NewFromDescr`` on the
input's memory, the input as base), computing each slice as ``slice.indices`` does, so
values, strides and errors are those of NumPy basic indexing in the Python backend
(:mod:`opweave_python.impls.subtensor`). ``IncSubtensor`` writes into such a view of
(a copy of) its input; ``AdvancedSubtensor1`` is ``PyArray_TakeFrom`` after the Python
backend's index check. ``AdvancedIncSubtensor1`` checks the indices and the broadcast as
the Python backend does, then sets or adds (``numpy.add.at``: repeated rows accumulate, in
index order) each row of ``y``, cast to ``x``'s dtype, into (a copy of) ``x``.
``AdvancedSubtensor`` and ``AdvancedIncSubtensor`` keep those two forms for a take along one
axis and for one integer vector on the leading axis; every other index runs the general
advanced indexing of :mod:`opweave_c.impls.advanced_indexing`.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.scalar.type import DTYPE_SPECS
from opweave.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
)
from opweave.tensor.type import TensorType
from opweave_c.impls.advanced_indexing import AdvancedIndexTakeC, AdvancedIndexUpdateC
from opweave_c.impls.common import SHARED_SUPPORT, SnippetImpl, c_string, int_value, tensor_dtype
from opweave_c.impls.csource import render, snippet

SUBTENSOR_SUPPORT = snippet("subtensor.c", "slicing")

INC_SUPPORT = snippet("subtensor.c", "inc")


def _placeholder_inputs(node: Apply, first: int) -> list[str] | None:
    """The dtypes of the index inputs (from ``first`` on), or ``None`` if one has no C."""
    dtypes = []
    for var in node.inputs[first:]:
        dtype = tensor_dtype(var)
        if dtype is None or var.type.ndim != 0:  # type: ignore[attr-defined]
            return None
        dtypes.append(dtype)
    return dtypes


def view_code(
    idx_list: tuple[Any, ...],
    x: str,
    idx_names: list[str],
    idx_dtypes: list[str],
    view: str,
    op: str,
    fail: str,
) -> str:
    """C code setting the (declared) ``PyArrayObject* view`` to the view ``x[idx_list]``.

    Parameters
    ----------
    idx_list
        The Op's index description; placeholders are read from ``idx_names`` in order.
    x
        The C name of the indexed array.
    idx_names, idx_dtypes
        C names and dtypes of the 0-d integer index inputs.
    view
        The C name receiving the new view (a new reference).
    op
        The Op's name as a C string literal, for error messages.
    fail
        The failure code.

    Returns
    -------
    str
        The code (a C block).
    """
    names = iter(zip(idx_names, idx_dtypes))
    overflow: list[str] = []
    lines: list[str] = []

    def value(c: Any, index: bool) -> tuple[str, str]:
        """(has, value) C expressions of a bound: a literal, a placeholder, or absent."""
        if c is None:
            return "0", "0"
        if isinstance(c, TensorType):
            cname, dtype = next(names)
            if index and dtype == "uint64":
                raw = f"(*(dtype_{cname}*)PyArray_DATA({cname}))"
                overflow.append(render("subtensor.c", "view_uint64_overflow", raw=raw, fail=fail))
            return "1", int_value(cname, dtype)
        return "1", f"(npy_int64){int(c)}LL"

    for d, e in enumerate(idx_list):
        lines.append(f"opw_n = PyArray_DIMS({x})[{d}];")
        if isinstance(e, slice):
            hs, s = value(e.start, False)
            ht, t = value(e.stop, False)
            hp, p = value(e.step, False)
            lines.append(
                render(
                    "subtensor.c",
                    "view_slice",
                    hs=hs,
                    s=s,
                    ht=ht,
                    t=t,
                    hp=hp,
                    p=p,
                    fail=fail,
                    x=x,
                    d=d,
                )
            )
        else:
            _, i = value(e, True)
            lines.append(render("subtensor.c", "view_index", i=i, op=op, d=d, x=x, fail=fail))
    n_idx = len(idx_list)
    body = "\n".join(overflow + lines)
    body = body.replace("\n", "\n    ")
    return render("subtensor.c", "view", x=x, n_idx=n_idx, op=op, fail=fail, body=body, view=view)


class SubtensorC(SnippetImpl):
    """Basic indexing as a view of the input."""

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers and the slicing helpers."""
        return [SHARED_SUPPORT, SUBTENSOR_SUPPORT]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Compute the view's shape, strides and data pointer; replace the output."""
        x, *idx = inputs
        (z,) = outputs
        dtypes = [v.type.dtype for v in node.inputs[1:]]  # type: ignore[attr-defined]
        code = view_code(
            node.op.idx_list,  # type: ignore[attr-defined]
            x,
            idx,
            dtypes,
            "opw_view",
            c_string(str(node.op)),
            sub["fail"],
        )
        return render("subtensor.c", "subtensor", view=code.replace("\n", "\n    "), z=z)


def _subtensor(op: Subtensor, node: Apply) -> SubtensorC | None:
    if tensor_dtype(node.inputs[0]) is None or _placeholder_inputs(node, 1) is None:
        return None
    return SubtensorC()


class IncSubtensorC(SnippetImpl):
    """``x`` (copied unless in place) with ``y`` set into or added to a view of it."""

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared, slicing and update helpers."""
        return [SHARED_SUPPORT, SUBTENSOR_SUPPORT, INC_SUPPORT]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Copy, view, check the broadcast as the Python backend does, then update."""
        op_ = node.op
        x, y, *idx = inputs
        (z,) = outputs
        fail = sub["fail"]
        label = f"opw_sub_fail_{sub['id']}"
        op = c_string(str(op_))
        dtypes = [v.type.dtype for v in node.inputs[2:]]  # type: ignore[attr-defined]
        if op_.inplace:  # type: ignore[attr-defined]
            prepare = render("subtensor.c", "inc_inplace", z=z, x=x)
        else:
            prepare = render("subtensor.c", "inc_copy", z=z, x=x, fail=fail)
        code = view_code(
            op_.idx_list,  # type: ignore[attr-defined]
            z,
            idx,
            dtypes,
            "opw_view",
            op,
            fail,
        )
        ystatic = node.inputs[1].type.shape  # type: ignore[attr-defined]
        yn = len(ystatic)
        runtime = []
        for d, st in enumerate(ystatic):
            if st != 1:
                runtime.append(
                    render("subtensor.c", "inc_runtime_broadcast", y=y, d=d, op=op, label=label)
                )
        runtime_code = "\n        ".join(runtime)
        if op_.set_instead_of_inc:  # type: ignore[attr-defined]
            update = f"PyArray_CopyInto(opw_view, {y})"
        else:
            update = f"opw_sub_add_into(opw_view, {y})"
        return render(
            "subtensor.c",
            "inc_subtensor",
            prepare=prepare.replace("\n", "\n    "),
            view=code.replace("\n", "\n    "),
            yn=yn,
            y=y,
            op=op,
            label=label,
            runtime_code=runtime_code,
            update=update,
            fail=fail,
        )


def _inc_subtensor(op: IncSubtensor, node: Apply) -> IncSubtensorC | None:
    if tensor_dtype(node.inputs[0]) is None or tensor_dtype(node.inputs[1]) is None:
        return None
    if _placeholder_inputs(node, 2) is None:
        return None
    return IncSubtensorC()


ADV_SUPPORT = snippet("subtensor.c", "take_error")


class AdvancedSubtensor1C(SnippetImpl):
    """``numpy.take(x, ilist, axis=0)`` after the Python backend's index check."""

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers and the error helper."""
        return [SHARED_SUPPORT, ADV_SUPPORT]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check the indices in order, prepare the output, take into it."""
        x, ilist = inputs
        (z,) = outputs
        fail = sub["fail"]
        op = c_string(str(node.op))
        dtype = node.inputs[1].type.dtype  # type: ignore[attr-defined]
        raw = f"(*(dtype_{ilist}*)PyArray_GETPTR1({ilist}, opw_k))"
        if dtype.startswith("uint"):
            bad = f"(npy_uint64){raw} >= (npy_uint64)opw_n"
            boxed = f"PyLong_FromUnsignedLongLong((unsigned long long){raw})"
        else:
            bad = f"(npy_int64){raw} >= (npy_int64)opw_n || (npy_int64){raw} < -(npy_int64)opw_n"
            boxed = f"PyLong_FromLongLong((long long){raw})"
        return render(
            "subtensor.c",
            "advanced_subtensor1",
            ilist=ilist,
            x=x,
            op=op,
            fail=fail,
            bad=bad,
            boxed=boxed,
            z=z,
        )


def _advanced_subtensor1(op: AdvancedSubtensor1, node: Apply) -> AdvancedSubtensor1C | None:
    if tensor_dtype(node.inputs[0]) is None or tensor_dtype(node.inputs[1]) is None:
        return None
    return AdvancedSubtensor1C()


# ====================================================================== AdvancedIncSubtensor1

AIS_SUPPORT = snippet("subtensor.c", "advanced_inc")

#: Per mode, the C update of ``{a}`` by ``{b}`` (``{u}``: the unsigned type of the width).
_AIS_UPDATES: MappingProxyType[str, str] = MappingProxyType(
    {
        "set": "{b}",
        "bool": "(npy_bool)({a} || {b})",
        "signed": "({t})(({u}){a} + ({u}){b})",
        "unsigned": "({t})({a} + {b})",
        "float": "{a} + {b}",
    }
)


def _ais_row_support(dtype: str, set_: bool) -> str:
    """``opw_ais_row_<dtype>_<set|inc>``: one row of the update, any strides."""
    t = DTYPE_SPECS[dtype][0]
    if set_:
        mode = "set"
    elif dtype == "bool":
        mode = "bool"
    elif dtype.startswith("int"):
        mode = "signed"
    elif dtype.startswith("uint"):
        mode = "unsigned"
    else:
        mode = "float"
    u = "npy_u" + dtype if dtype.startswith("int") else t
    key = f"{dtype}_{'set' if set_ else 'inc'}"

    def upd(a: str, b: str) -> str:
        return _AIS_UPDATES[mode].format(a=a, b=b, t=t, u=u)

    return render(
        "subtensor.c",
        "advanced_inc_row",
        key=key,
        t=t,
        upd_one=upd("*a", f"*(const {t}*)src"),
        upd_contig=upd("a[i]", "b[i]"),
        upd_bcast=upd("a[i]", "v"),
        upd_strided=upd("*a", f"*(const {t}*)(src + i * sl)"),
    )


class AdvancedIncSubtensor1C(SnippetImpl):
    """Rows of ``x`` (copied unless in place) set or incremented (repeats accumulate, or,
    with ``once``, each row is incremented once from its last index)."""

    #: (3,): the row loop is a section of its own (``advanced_inc_loop``).
    version = (3,)

    def __init__(self, dtype: str, set_: bool, once: bool = False) -> None:
        self.dtype = dtype
        self.set_ = set_
        self.once = once

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers, the index error, the overlap test and the row update."""
        return [SHARED_SUPPORT, ADV_SUPPORT, AIS_SUPPORT, _ais_row_support(self.dtype, self.set_)]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check indices and broadcast as Python does, prepare ``x``, update row by row."""
        op_ = node.op
        x, y, ilist = inputs
        (z,) = outputs
        fail = sub["fail"]
        op = c_string(str(op_))
        key = f"{self.dtype}_{'set' if self.set_ else 'inc'}"
        nd = node.inputs[0].type.ndim  # type: ignore[attr-defined]
        ystatic = node.inputs[1].type.shape  # type: ignore[attr-defined]
        yn = len(ystatic)
        idt = node.inputs[2].type.dtype  # type: ignore[attr-defined]
        raw = f"(*(dtype_{ilist}*)PyArray_GETPTR1({ilist}, opw_k))"
        if idt.startswith("uint") or idt == "bool":
            bad = f"(npy_uint64){raw} >= (npy_uint64)opw_n"
            boxed = f"PyLong_FromUnsignedLongLong((unsigned long long){raw})"
            row = f"(npy_intp){raw}"
        else:
            bad = f"(npy_int64){raw} >= (npy_int64)opw_n || (npy_int64){raw} < -(npy_int64)opw_n"
            boxed = f"PyLong_FromLongLong((long long){raw})"
            row = f"((npy_intp){raw} < 0 ? (npy_intp){raw} + opw_n : (npy_intp){raw})"
        runtime = "\n    ".join(
            render(
                "subtensor.c",
                "advanced_inc_runtime_broadcast",
                y=y,
                d=d,
                axis=nd - yn + d,
                op=op,
                fail=fail,
            )
            for d, st in enumerate(ystatic)
            if st != 1
        )
        if op_.inplace:  # type: ignore[attr-defined]
            prepare = render("subtensor.c", "advanced_inc_inplace", x=x, fail=fail, z=z)
        else:
            prepare = render("subtensor.c", "advanced_inc_copy", z=z, x=x, y=y, nd=nd, fail=fail)
        if self.once:  # each row updated once, from its last index
            loop = render(
                "subtensor.c",
                "advanced_inc_once_loop",
                key=key,
                z=z,
                row=row,
                nd1=nd - 1,
                fail=fail,
            )
        else:
            loop = render("subtensor.c", "advanced_inc_loop", key=key, z=z, row=row, nd1=nd - 1)
        return render(
            "subtensor.c",
            "advanced_inc_body",
            x=x,
            ilist=ilist,
            nd=nd,
            bad=bad,
            boxed=boxed,
            op=op,
            fail=fail,
            yn=yn,
            y=y,
            nd_yn=nd - yn,
            runtime=runtime,
            prepare=prepare,
            z=z,
            loop=loop,
        )


def _advanced_inc_subtensor1(
    op: AdvancedIncSubtensor1, node: Apply
) -> AdvancedIncSubtensor1C | None:
    dtype = tensor_dtype(node.inputs[0])
    if dtype is None or tensor_dtype(node.inputs[1]) is None:
        return None
    if tensor_dtype(node.inputs[2]) is None or tensor_dtype(node.outputs[0]) != dtype:
        return None
    return AdvancedIncSubtensor1C(dtype, op.set_instead_of_inc)


# ====================================================================== AdvancedSubtensor


def _take_axis(idx_list: tuple[Any, ...]) -> int | None:
    """The axis of the only entry, an integer array, when every other entry is a full slice."""
    arrays = [d for d, e in enumerate(idx_list) if not isinstance(e, slice)]
    if len(arrays) != 1:
        return None
    entry = idx_list[arrays[0]]
    if not isinstance(entry, TensorType) or entry.ndim == 0 or entry.dtype == "bool":
        return None
    if any(e != slice(None) for d, e in enumerate(idx_list) if d != arrays[0]):
        return None
    return arrays[0]


ADV_TAKE_SUPPORT = snippet("subtensor.c", "advanced_take_error")


class AdvancedTakeC(SnippetImpl):
    """``numpy.take(x, idx, axis)`` after the Python backend's index check (in C order)."""

    version = (1,)

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers and the error helper."""
        return [SHARED_SUPPORT, ADV_TAKE_SUPPORT]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check the indices, then take."""
        x, ilist = inputs
        (z,) = outputs
        dtype = node.inputs[1].type.dtype  # type: ignore[attr-defined]
        raw = f"(((dtype_{ilist}*)PyArray_DATA(opw_idx))[opw_k])"
        if dtype.startswith("uint"):
            bad = f"(npy_uint64){raw} >= (npy_uint64)opw_n"
            boxed = f"PyLong_FromUnsignedLongLong((unsigned long long){raw})"
        else:
            bad = f"(npy_int64){raw} >= (npy_int64)opw_n || (npy_int64){raw} < -(npy_int64)opw_n"
            boxed = f"PyLong_FromLongLong((long long){raw})"
        return render(
            "subtensor.c",
            "advanced_take",
            x=x,
            ilist=ilist,
            axis=self.axis,
            op=c_string(str(node.op)),
            fail=sub["fail"],
            bad=bad,
            boxed=boxed,
            z=z,
        )


def _advanced_subtensor(
    op: AdvancedSubtensor, node: Apply
) -> AdvancedTakeC | AdvancedIndexTakeC | None:
    """A take along one axis (``numpy.take``), else the general advanced indexing."""
    if tensor_dtype(node.inputs[0]) is None:
        return None
    if any(tensor_dtype(v) is None for v in node.inputs[1:]):
        return None
    axis = _take_axis(op.idx_list)
    if axis is not None:
        return AdvancedTakeC(axis)
    return AdvancedIndexTakeC()


def _advanced_inc_subtensor(
    op: AdvancedIncSubtensor, node: Apply
) -> AdvancedIncSubtensor1C | AdvancedIndexUpdateC | None:
    """The row loop for one integer vector on the leading axis, else the general update."""
    dtype = tensor_dtype(node.inputs[0])
    if dtype is None or tensor_dtype(node.inputs[1]) is None:
        return None
    if any(tensor_dtype(v) is None for v in node.inputs[2:]):
        return None
    if tensor_dtype(node.outputs[0]) != dtype:
        return None
    once = op.ignore_duplicates and not op.set_instead_of_inc
    if _take_axis(op.idx_list) == 0 and len(op.idx_list) == 1 and op.idx_list[0].ndim == 1:
        return AdvancedIncSubtensor1C(dtype, op.set_instead_of_inc, once)
    return AdvancedIndexUpdateC(dtype, op.set_instead_of_inc, once)


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        Subtensor: _subtensor,
        IncSubtensor: _inc_subtensor,
        AdvancedSubtensor1: _advanced_subtensor1,
        AdvancedIncSubtensor1: _advanced_inc_subtensor1,
        AdvancedSubtensor: _advanced_subtensor,
        AdvancedIncSubtensor: _advanced_inc_subtensor,
    }
)
