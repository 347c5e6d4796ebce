"""C code for ``Lstsq`` of :mod:`opweave.tensor.nlinalg`, through the LAPACK that SciPy
ships (``dgelsd``, looked up in ``scipy.linalg.cython_lapack`` on first use, as for the
other kernels of :mod:`opweave_c.impls.nlinalg`).

The kernel (``impls/c/nlinalg_lstsq.c``) does what ``numpy.linalg.lstsq`` does, step by
step, and what the Python backend (:mod:`opweave_python.impls.nlinalg`) does with the same
routine: ``a`` and ``b`` are copied as double into Fortran-ordered work arrays (``b`` in
``max(m, n)`` rows, one zero column when it has none) and handed to ``dgelsd`` with the
workspace its query asks for and ``rcond`` (NumPy's default: float64's machine precision
times ``max(m, n)``). The residuals are the sums of the squares of the rows beyond ``n``
of each column, in order, kept only for a tall ``a`` of full rank; the results are
rounded to the outputs' dtypes. ``info`` other than 0 raises
``numpy.linalg.LinAlgError("SVD did not converge in Linear Least Squares")``, ``b`` with
another number of rows ``LinAlgError("Incompatible dimensions")``, as in NumPy.

The inputs are never written to; float32 and float64 values run in C, complex ones (and a
missing SciPy) leave the nodes to the Python backend.
"""

from __future__ import annotations

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.nlinalg import Lstsq
from opweave_c.impls.common import c_string, tensor_dtype, typenum
from opweave_c.impls.csource import render, snippet
from opweave_c.impls.lapack import lapack_exports
from opweave_c.impls.lapack_impl import FLOATS, LapackImpl, scipy_factory

__all__ = ["LstsqC", "lstsq_c"]

#: Bump when the generated C changes.
VERSION = (2,)

#: The routine the kernel calls, by name in ``scipy.linalg.cython_lapack``.
ROUTINES = ("dgelsd",)


class LstsqC(LapackImpl):
    """A node of ``Lstsq``: ``opw_ls_run``.

    Parameters
    ----------
    dtype
        The dtype of the solution, the residuals and the singular values (``"float32"``
        or ``"float64"``).
    """

    version = VERSION
    support = (snippet("nlinalg_lstsq.c", "support"),)

    def __init__(self, dtype: str) -> None:
        super().__init__("", dtype)

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Fill in the node's section of ``nlinalg_lstsq.c``."""
        zx, zr, zrank, zs = outputs
        return render(
            "nlinalg_lstsq.c",
            "node",
            who=c_string(str(node.op)),
            typenum=typenum(self.dtype),
            real_typenum=typenum(self.dtype),
            a=inputs[0],
            b=inputs[1],
            rcond=inputs[2] if len(inputs) > 2 else "NULL",
            zx=zx,
            zr=zr,
            zrank=zrank,
            zs=zs,
            fail=sub["fail"],
        )


@scipy_factory
def lstsq_c(op: Lstsq, node: Apply) -> LstsqC | None:
    """The C implementation of an ``Lstsq`` node with float32/float64 values.

    Parameters
    ----------
    op
        The ``Lstsq``.
    node
        Its node: ``a``, ``b`` and maybe ``rcond``; the solution, the residuals, the rank
        (int32) and the singular values.

    Returns
    -------
    LstsqC or None
        ``None`` for complex values, a dtype wider than the solution's among ``a`` and ``b``,
        or without SciPy's LAPACK.
    """
    x, residuals, rank, s = (tensor_dtype(v) for v in node.outputs)
    if x not in FLOATS or len({x, residuals, s}) != 1 or rank != "int32":
        return None
    ins = [tensor_dtype(v) for v in node.inputs]
    if None in ins or not lapack_exports(ROUTINES):
        return None
    if np.result_type(*[str(d) for d in ins[:2]], str(x)) != np.dtype(str(x)):
        return None
    return LstsqC(str(x))
