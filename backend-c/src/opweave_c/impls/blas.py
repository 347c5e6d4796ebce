"""C code for :class:`~opweave.tensor.blas.Dot` and :class:`~opweave.tensor.blas.MatMul`.

Both call NumPy's C API, so they use the BLAS NumPy was built with and give exactly
NumPy's values and errors, as the Python backend (:mod:`opweave_python.impls.math`) does:

* ``Dot`` is ``PyArray_MatrixProduct2`` (the function behind ``numpy.dot``), for every
  combination of vectors and matrices;
* ``MatMul`` calls ``numpy.matmul`` (a ufunc: batch axes broadcast, BLAS for the matrix
  products) after the Python backend's check that only the batch axes whose static
  length is 1 broadcast.

When both inputs already have the output's dtype, the product is written into the
previous output array if it has the right shape, is C-contiguous, writeable and shares no
memory with the inputs (no allocation in a loop); otherwise NumPy allocates the result,
which is then cast to the node's output dtype when NumPy's result dtype differs.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.blas import Dot, MatMul
from opweave_c.impls.common import typenum
from opweave_c.impls.csource import render, snippet
from opweave_c.impls.tensor_type import C_DTYPES

__all__ = ["C_OPS", "DotC", "MatMulC"]

#: Bump when the generated C changes.
VERSION = (3,)

SUPPORT = snippet("blas.c", "support")


class _ProductC:
    """What Dot and MatMul share: dtypes, ranks and the module's support code."""

    def __init__(self, node: Apply) -> None:
        x, y = node.inputs
        self.x_dt: str = x.type.dtype  # type: ignore[attr-defined]
        self.y_dt: str = y.type.dtype  # type: ignore[attr-defined]
        self.out_dt: str = node.outputs[0].type.dtype  # type: ignore[attr-defined]
        self.x_nd: int = x.type.ndim  # type: ignore[attr-defined]
        self.y_nd: int = y.type.ndim  # type: ignore[attr-defined]
        self.out_nd: int = node.outputs[0].type.ndim  # type: ignore[attr-defined]
        self.x_static: tuple[int | None, ...] = x.type.shape  # type: ignore[attr-defined]
        self.y_static: tuple[int | None, ...] = y.type.shape  # type: ignore[attr-defined]

    def supported(self) -> bool:
        """True when every dtype involved has C code."""
        return {self.x_dt, self.y_dt, self.out_dt} <= C_DTYPES

    @property
    def same_dtype(self) -> bool:
        """Both inputs have the output's dtype (NumPy's result has it too)."""
        return self.x_dt == self.y_dt == self.out_dt

    def c_support_code(self, **kwargs: Any) -> str:
        """The helpers (one copy per module)."""
        return SUPPORT

    def c_code_cache_version(self) -> tuple[int, ...]:
        """The version of this module's code."""
        return VERSION


class DotC(_ProductC):
    """``numpy.dot`` of vectors and matrices through ``PyArray_MatrixProduct2``."""

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """The product of ``inputs`` into ``outputs[0]``."""
        x, y = inputs
        (z,) = outputs
        fail = sub["fail"]
        type_num = typenum(self.out_dt)
        if not self.same_dtype:
            return render(
                "blas.c", "dot", x=x, y=y, z=z, out_nd=self.out_nd, typenum=type_num, fail=fail
            )
        dims = []
        if self.x_nd == 2:
            dims.append(f"PyArray_DIMS({x})[0]")
        if self.y_nd == 2:
            dims.append(f"PyArray_DIMS({y})[1]")
        dims_init = ", ".join(dims) if dims else "0"
        return render(
            "blas.c",
            "dot_same_dtype",
            dims_init=dims_init,
            x=x,
            x_last=self.x_nd - 1,
            y=y,
            z=z,
            out_nd=self.out_nd,
            typenum=type_num,
            fail=fail,
        )


class MatMulC(_ProductC):
    """``numpy.matmul`` of tensors of rank 2 or more (equal ranks: ``make_node`` pads)."""

    def _batch_check(self, x: str, y: str, fail: str) -> str:
        checks = []
        for axis in range(self.out_nd - 2):
            if self.x_static[axis] == 1 or self.y_static[axis] == 1:
                continue
            checks.append(f"PyArray_DIMS({x})[{axis}] != PyArray_DIMS({y})[{axis}]")
        if not checks:
            return ""
        cond = " || ".join(checks)
        nb = self.out_nd - 2
        return render(
            "blas.c",
            "matmul_batch_check",
            cond=cond,
            nb=nb,
            x=x,
            y=y,
            checked=self._checked(),
            nb1=nb - 1,
            fail=fail,
        )

    def _checked(self) -> str:
        return ", ".join(
            "0" if self.x_static[a] == 1 or self.y_static[a] == 1 else "1"
            for a in range(self.out_nd - 2)
        )

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """``numpy.matmul`` of ``inputs`` into ``outputs[0]``."""
        x, y = inputs
        (z,) = outputs
        fail = sub["fail"]
        nd = self.out_nd
        type_num = typenum(self.out_dt)
        check = self._batch_check(x, y, fail)
        fresh = render("blas.c", "matmul_fresh", x=x, y=y, z=z, nd=nd, typenum=type_num, fail=fail)
        if not self.same_dtype:
            body = fresh
        else:
            body = render(
                "blas.c",
                "matmul_same_dtype",
                nd=nd,
                x=x,
                nd1=nd - 1,
                y=y,
                nd2=nd - 2,
                fresh=fresh,
                z=z,
                typenum=type_num,
                fail=fail,
            )
        return render("blas.c", "matmul", check=check, fail=fail, body=body)


def _dot(op: Dot, node: Apply) -> DotC | None:
    impl = DotC(node)
    return impl if impl.supported() else None


def _matmul(op: MatMul, node: Apply) -> MatMulC | None:
    impl = MatMulC(node)
    return impl if impl.supported() else None


#: Op class -> ``fn(op, node)`` giving the node's C implementation (or ``None``).
C_OPS: MappingProxyType[type, Any] = MappingProxyType({Dot: _dot, MatMul: _matmul})
