"""C code for NumPy's general advanced indexing: :class:`AdvancedSubtensor` and
:class:`AdvancedIncSubtensor` on any index.

The generated code describes the index (``impls/c/advanced_indexing.c``, section
``support``): one entry per item of the Op's ``idx_list``, a slice (constant or symbolic
bounds), an integer (constant or a 0-d input), an integer array or a boolean mask. The
support code then checks the integer indices against their axes in order (the Python
backend's message), the masks' shapes, the slices' steps and the broadcast of the index
arrays (NumPy's messages, with the input shape), builds the result's shape (the broadcast
axes where the first advanced index is when the advanced indices are adjacent, else
first) and one byte offset per broadcast position, and walks the result in C order:
copying out (``x[idx]``), writing in (a repeated position keeps its last write), adding in
(``numpy.add.at``: repeats accumulate in order) or adding once (``x[idx] += y``).
"""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Apply
from opweave.scalar.type import DTYPE_SPECS
from opweave.tensor.type import TensorType
from opweave_c.impls.common import SHARED_SUPPORT, SnippetImpl, axes_mask, c_string, int_value
from opweave_c.impls.csource import render, snippet

__all__ = ["AdvancedIndexTakeC", "AdvancedIndexUpdateC", "entries_code"]

#: The support code: the plan of an index, its checks and the walks over it.
ADVANCED_SUPPORT = snippet("advanced_indexing.c", "support")

#: Per kind of dtype, the C sum of ``{a}`` and ``{b}`` in the dtype ``{t}`` (``{u}``: the
#: unsigned type of the same width, so that signed sums wrap as NumPy's do).
_SUMS = {
    "bool": "(npy_bool)({a} || {b})",
    "signed": "({t})(({u}){a} + ({u}){b})",
    "unsigned": "({t})({a} + {b})",
    "float": "{a} + {b}",
}


def add_row_support(dtype: str) -> str:
    """``opw_adv_add_<dtype>``: one row of ``numpy.add`` in ``dtype``, any strides.

    Parameters
    ----------
    dtype
        A dtype with C code.

    Returns
    -------
    str
        The C function.
    """
    t = DTYPE_SPECS[dtype][0]
    if dtype == "bool":
        kind = "bool"
    elif dtype.startswith("int"):
        kind = "signed"
    elif dtype.startswith("uint"):
        kind = "unsigned"
    else:
        kind = "float"
    u = "npy_u" + dtype if kind == "signed" else t
    upd = _SUMS[kind].format(a="*a", b="b", t=t, u=u)
    return render("advanced_indexing.c", "add_row", key=dtype, t=t, upd=upd)


def entries_code(idx_list: tuple[Any, ...], names: list[str], dtypes: list[str]) -> str:
    """C statements filling ``opw_adv_entry opw_e[]`` for ``idx_list``.

    Parameters
    ----------
    idx_list
        The Op's index description: slices, ``int`` constants and TensorType placeholders
        (0-d integers, integer arrays, boolean masks), read from ``names`` in order.
    names, dtypes
        The C names and dtypes of the index inputs.

    Returns
    -------
    str
        The statements.
    """
    inputs = iter(zip(names, dtypes))
    lines: list[str] = []

    def bound(c: Any) -> tuple[str, str]:
        if c is None:
            return "0", "0"
        if isinstance(c, TensorType):
            cname, dtype = next(inputs)
            return "1", int_value(cname, dtype)
        return "1", f"(npy_int64){int(c)}LL"

    for k, e in enumerate(idx_list):
        at = f"opw_e[{k}]"
        if isinstance(e, slice):
            lines.append(f"{at}.kind = OPW_ADV_SLICE;")
            for part, c in (("start", e.start), ("stop", e.stop), ("step", e.step)):
                has, value = bound(c)
                lines.append(f"{at}.has_{part} = {has}; {at}.{part} = {value};")
        elif isinstance(e, TensorType):
            cname, _ = next(inputs)
            if e.ndim == 0:
                kind = "OPW_ADV_INT"
            elif e.dtype == "bool":
                kind = "OPW_ADV_MASK"
            else:
                kind = "OPW_ADV_ARRAY"
            lines.append(f"{at}.kind = {kind}; {at}.arr = {cname};")
        else:
            lines.append(f"{at}.kind = OPW_ADV_INT; {at}.value = (npy_int64){int(e)}LL;")
    return "\n    ".join(lines)


def _supports() -> list[str]:
    return [
        SHARED_SUPPORT,
        snippet("subtensor.c", "slicing"),
        snippet("subtensor.c", "advanced_take_error"),
        ADVANCED_SUPPORT,
    ]


class AdvancedIndexTakeC(SnippetImpl):
    """``x[idx]`` for any advanced index: a new C-contiguous array."""

    version = (5,)

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared, slicing and advanced indexing support code."""
        return _supports()

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Describe the index, then take."""
        x, *idx = inputs
        (z,) = outputs
        idx_list = node.op.idx_list  # type: ignore[attr-defined]
        dtypes = [v.type.dtype for v in node.inputs[1:]]  # type: ignore[attr-defined]
        return render(
            "advanced_indexing.c",
            "take",
            n=len(idx_list),
            n1=len(idx_list) + 1,
            entries=entries_code(idx_list, idx, dtypes),
            op=c_string(str(node.op)),
            x=x,
            z=z,
            fail=sub["fail"],
        )


class AdvancedIndexUpdateC(SnippetImpl):
    """``x`` (copied unless in place) with ``y`` set into, accumulated into or added once
    to ``x[idx]``, for any advanced index."""

    version = (5,)

    def __init__(self, dtype: str, set_: bool, once: bool) -> None:
        self.dtype = dtype
        self.set_ = set_
        self.once = once

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared, slicing and advanced indexing support code, and the dtype's sum."""
        out = _supports()
        if not self.set_:
            out.append(add_row_support(self.dtype))
        return out

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Describe the index, then update."""
        op_ = node.op
        x, y, *idx = inputs
        (z,) = outputs
        idx_list = op_.idx_list  # type: ignore[attr-defined]
        dtypes = [v.type.dtype for v in node.inputs[2:]]  # type: ignore[attr-defined]
        ystatic = node.inputs[1].type.shape  # type: ignore[attr-defined]
        if self.set_:
            mode, add = "OPW_ADV_SET", "NULL"
        else:
            mode = "OPW_ADV_ADD_ONCE" if self.once else "OPW_ADV_ADD_AT"
            add = f"opw_adv_add_{self.dtype}"
        return render(
            "advanced_indexing.c",
            "update",
            n=len(idx_list),
            n1=len(idx_list) + 1,
            yn1=max(len(ystatic), 1),
            ystatic1=axes_mask(len(ystatic), tuple(d for d, s in enumerate(ystatic) if s == 1)),
            entries=entries_code(idx_list, idx, dtypes),
            op=c_string(str(op_)),
            x=x,
            y=y,
            z=z,
            inplace=int(op_.inplace),  # type: ignore[attr-defined]
            mode=mode,
            add=add,
            fail=sub["fail"],
        )
