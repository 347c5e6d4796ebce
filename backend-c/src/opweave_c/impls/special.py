"""C code for :mod:`opweave.tensor.special`: ``Softmax``, ``LogSoftmax`` and ``SoftmaxGrad``.

The formulas and their rounding are those of the Python backend
(:mod:`opweave_python.impls.special`):

* ``Softmax``: ``e = exp(x - m)``, ``e / sum(e)``; ``LogSoftmax``: ``(x - m) -
  log(sum(exp(x - m)))``, where ``m`` is the maximum along the axis, replaced by 0 when it
  is infinite (so a row of ``-inf`` gives NaN, a row holding ``+inf`` NaN where the others
  give 0 or ``-inf``, and a row holding NaN NaN everywhere, as NumPy computes them);
* ``SoftmaxGrad``: ``(dy - sum(dy * sm)) * sm``, broadcasting ``dy`` and ``sm`` as NumPy
  does, computed in the wider of their dtypes and cast to ``sm``'s;
* sums along a contiguous axis (the last, or every axis for ``axis=None``) use NumPy's
  pairwise summation (blocks of 128 with 8 accumulators), sums along another axis add
  the rows in order, as NumPy's reductions do on C-ordered data; division is a division;
* an empty input gives an empty output.

The work is done on a C-contiguous input (a non-contiguous one is copied first), seen as
``(outer, n, inner)`` with the normalized axis in the middle: when ``inner`` is 1 each row
is contiguous (``exp`` in one vectorisable loop, through libmvec where
:func:`~opweave_c.vector_math.vector_math_code` applies); otherwise the rows of ``inner``
columns are combined element by element. float32 values are computed in float32, as NumPy
does. float16 has no C code (``cvm`` runs such nodes in Python).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.special import LogSoftmax, Softmax, SoftmaxGrad
from opweave_c.impls.common import SHARED_SUPPORT, SnippetImpl
from opweave_c.impls.csource import render, snippet
from opweave_c.vector_math import vector_math_code

__all__ = ["C_OPS", "LogSoftmaxC", "SoftmaxC", "SoftmaxGradC"]

#: Bump when the generated C changes.
VERSION = (2,)

#: No floating-point contraction: products and sums are rounded as NumPy rounds them.
COMPILE_ARGS = ("-ffp-contract=off",)

#: dtype -> (C type, suffix of its ``<math.h>`` functions, NumPy type number).
_FLOATS: MappingProxyType[str, tuple[str, str, str]] = MappingProxyType(
    {"float32": ("float", "f", "NPY_FLOAT32"), "float64": ("double", "", "NPY_FLOAT64")}
)

#: Shared by the three Ops (identical text: one copy per module).
SOFTMAX_SUPPORT = snippet("special.c", "support")


def _kernels(dtype: str) -> str:
    """The C loops of the three Ops for one float dtype (``opw_sm_*_<dtype>``)."""
    t, f, _ = _FLOATS[dtype]
    return render("special.c", "kernels", dtype=dtype, t=t, f=f)


def _axis(op: Any, ndim: int) -> int:
    """The normalized axis, or -1 for all elements together (``None`` or a 0-d input)."""
    if op.axis is None or ndim == 0:
        return -1
    return int(op.axis) % ndim


class _SoftmaxBase(SnippetImpl):
    """The support code, flags and version shared by the three Ops."""

    version = VERSION

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """Vector math declarations, the shared helpers, the dtype's loops."""
        vec = vector_math_code()
        head = [vec.support_code] if vec else []
        return [*head, SHARED_SUPPORT, SOFTMAX_SUPPORT, _kernels(self.dtype)]

    def c_compile_args(self, c_compiler: Any = None) -> list[str]:
        """No floating-point contraction; the vector math flags where they apply."""
        vec = vector_math_code()
        return [*COMPILE_ARGS, *(vec.compile_args if vec else ())]

    def c_libraries(self, c_compiler: Any = None) -> list[str]:
        """libmvec where vector math applies."""
        vec = vector_math_code()
        return list(vec.libraries) if vec else []


class _SoftmaxLikeC(_SoftmaxBase):
    """``Softmax`` (``kind`` 0) or ``LogSoftmax`` (``kind`` 1) of one float tensor."""

    kind = 0
    rows = "softmax"

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Prepare the output, make the input contiguous, run the row or column loops."""
        (x,) = inputs
        (z,) = outputs
        fail = sub["fail"]
        dt = self.dtype
        t = _FLOATS[dt][0]
        axis = _axis(node.op, node.inputs[0].type.ndim)  # type: ignore[attr-defined]
        return render(
            "special.c",
            "softmax_like",
            z=z,
            x=x,
            fail=fail,
            axis=axis,
            rows=self.rows,
            dt=dt,
            t=t,
            kind=self.kind,
        )


class SoftmaxC(_SoftmaxLikeC):
    """``exp(x - m) / sum(exp(x - m))`` along the axis."""

    kind = 0
    rows = "softmax"


class LogSoftmaxC(_SoftmaxLikeC):
    """``(x - m) - log(sum(exp(x - m)))`` along the axis."""

    kind = 1
    rows = "logsoftmax"


class SoftmaxGradC(_SoftmaxBase):
    """``(dy - sum(dy * sm)) * sm``, in the wider dtype, cast to ``sm``'s."""

    def __init__(self, dtype: str, out_dtype: str) -> None:
        super().__init__(dtype)
        self.out_dtype = out_dtype

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Broadcast as NumPy does, bring both inputs to the work dtype, run the loops."""
        dy, sm = inputs
        (z,) = outputs
        fail = sub["fail"]
        label = f"opw_sm_fail_{sub['id']}"
        dt = self.dtype
        t, _, work = _FLOATS[dt]
        out = _FLOATS[self.out_dtype][2]
        nd = node.inputs[1].type.ndim  # type: ignore[attr-defined]
        axis = _axis(node.op, nd)
        return render(
            "special.c",
            "grad",
            ndims=max(nd, 1),
            nd=nd,
            dy=dy,
            sm=sm,
            fail=fail,
            z=z,
            out=out,
            work=work,
            label=label,
            axis=axis,
            dt=dt,
            t=t,
        )


def _float_dtype(var: Any) -> str | None:
    dtype = getattr(var.type, "dtype", None)
    return dtype if dtype in _FLOATS else None


def _softmax(op: Softmax, node: Apply) -> SoftmaxC | None:
    dtype = _float_dtype(node.inputs[0])
    return SoftmaxC(dtype) if dtype is not None else None


def _log_softmax(op: LogSoftmax, node: Apply) -> LogSoftmaxC | None:
    dtype = _float_dtype(node.inputs[0])
    return LogSoftmaxC(dtype) if dtype is not None else None


def _softmax_grad(op: SoftmaxGrad, node: Apply) -> SoftmaxGradC | None:
    dy, sm = (_float_dtype(v) for v in node.inputs)
    out = _float_dtype(node.outputs[0])
    if dy is None or sm is None or out is None:
        return None
    work = "float64" if "float64" in (dy, sm) else "float32"
    return SoftmaxGradC(work, out)


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {Softmax: _softmax, LogSoftmax: _log_softmax, SoftmaxGrad: _softmax_grad}
)
