"""C code for :mod:`opweave.tensor.nlinalg`: ``MatrixInverse``, ``Det``, ``SLogDet`` and
``Eigh`` of one input, through the LAPACK that SciPy ships.

``scipy.linalg.cython_lapack`` exports LAPACK's routines as capsules of function pointers;
the generated code (``impls/c/nlinalg.c``) looks up ``dgetrf``, ``dgesv`` and ``dsyevd``
there on first use, so nothing is linked. Each kernel does what ``numpy.linalg`` does, step
by step, and what the Python backend (:mod:`opweave_python.impls.nlinalg`) does with the
same routines:

- the input is cast to the output's dtype, and every matrix (any layout) is copied as
  double into a Fortran-ordered work array: NumPy computes float32 in double too, then
  rounds the results;
- the inverse is ``dgesv`` with the identity as right-hand side (``numpy.linalg.inv``); an
  exactly singular matrix raises ``numpy.linalg.LinAlgError`` naming its batch index, with
  the Python kernel's message;
- the sign and the log of the absolute determinant come from ``dgetrf``: the parity of
  the row swaps, then the diagonal in order, each negative entry flipping the sign and the
  logs of the absolute values summed; an exactly singular matrix gives ``(0, -inf)``. The
  determinant is ``sign * exp(logdet)`` (``numpy.linalg.det`` computes it so), 0 for a
  singular matrix. An empty matrix has the determinant 1 and ``(1, 0)``;
- the eigenvalues and eigenvectors are ``dsyevd``'s (``jobz='V'``, the triangle ``lower``
  names, the workspace its query asks for, as ``numpy.linalg.eigh`` sizes it); a failure to
  converge raises ``numpy.linalg.LinAlgError("Eigenvalues did not converge")``.

The Python backend calls the same routines of the same SciPy LAPACK (where SciPy is
installed), one matrix at a time, with the C library's ``log`` and ``exp``, so both give
the same values bit for bit.

``SVD`` and ``MatrixPinv`` have their C code in :mod:`opweave_c.impls.nlinalg_svd`,
``QR`` in :mod:`opweave_c.impls.nlinalg_qr`, ``Lstsq`` in
:mod:`opweave_c.impls.nlinalg_lstsq`;
``Eigh`` with a second input (the generalized problem) and ``Eigvalsh``
(:mod:`opweave.tensor.linalg.decomposition.eigen`) theirs in
:mod:`opweave_c.impls.nlinalg_eigen`. ``Eigvalsh`` is listed here; the table of
:mod:`opweave_c.impls.slinalg` must not list it too (it comes later and would win).

The inputs are never written to. float32 and float64 outputs run in C; complex ones and a
missing SciPy (an optional extra) leave the nodes to the Python backend (``cvm``). The
other Ops of the module have no C code: ``cvm`` runs them in Python and the ``c`` linker
raises ``MissingCCodeError``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.linalg.decomposition.eigen import Eigvalsh
from opweave.tensor.nlinalg import (
    QR,
    SVD,
    Det,
    Eig,
    Eigh,
    Lstsq,
    MatrixInverse,
    MatrixPinv,
    SLogDet,
    TensorInv,
    TensorSolve,
)
from opweave_c.impls.common import SnippetImpl, c_string, python_only, typenum
from opweave_c.impls.csource import render
from opweave_c.impls.lapack import lapack_exports
from opweave_c.impls.lapack_impl import LapackImpl, float_dtype, scipy_factory
from opweave_c.impls.nlinalg_eigen import eigvalsh_c, generalized_eigh_c
from opweave_c.impls.nlinalg_lstsq import lstsq_c
from opweave_c.impls.nlinalg_qr import qr_c
from opweave_c.impls.nlinalg_svd import pinv_c, svd_c

__all__ = ["C_OPS", "NlinalgC", "lapack_available"]

#: Bump when the generated C changes.
VERSION = (4,)

#: The routines the kernels call, by name in ``scipy.linalg.cython_lapack``.
ROUTINES = ("dgetrf", "dgesv", "dsyevd")

#: Op class -> the C constant of its kernel.
_KINDS: MappingProxyType[type, str] = MappingProxyType(
    {
        MatrixInverse: "OPW_NL_INV",
        Det: "OPW_NL_DET",
        SLogDet: "OPW_NL_SLOGDET",
        Eigh: "OPW_NL_EIGH",
    }
)


def lapack_available() -> bool:
    """Whether SciPy's LAPACK exports every routine of :data:`ROUTINES`
    (:func:`~opweave_c.impls.lapack.lapack_exports`).

    Returns
    -------
    bool
        False without SciPy, or where a routine is missing.
    """
    return lapack_exports(ROUTINES)


class NlinalgC(LapackImpl):
    """A node of ``MatrixInverse``, ``Det``, ``SLogDet`` or ``Eigh``: ``opw_nl_run`` with its
    kernel (its driver and kernels are the shared support code of ``nlinalg.c``), ``kind``
    (:class:`~opweave_c.impls.lapack_impl.LapackImpl`) ``OPW_NL_INV``, ``OPW_NL_DET``,
    ``OPW_NL_SLOGDET`` or ``OPW_NL_EIGH``."""

    version = VERSION

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Fill in the node's section of ``nlinalg.c``."""
        (x,) = inputs
        z1 = f"&{outputs[1]}" if len(outputs) > 1 else "NULL"
        return render(
            "nlinalg.c",
            "node",
            who=c_string(str(node.op)),
            kind=self.kind,
            lower=int(getattr(node.op, "lower", False)),
            typenum=typenum(self.dtype),
            x=x,
            z0=outputs[0],
            z1=z1,
            fail=sub["fail"],
        )


@scipy_factory
def _nlinalg(op: Any, node: Apply) -> NlinalgC | None:
    """The C implementation for float32/float64 outputs when SciPy's LAPACK loads."""
    dtype = float_dtype(node) if len(node.inputs) == 1 else None
    if dtype is None or not lapack_available():
        return None
    kind = next(k for cls, k in _KINDS.items() if isinstance(op, cls))
    return NlinalgC(kind, dtype)


@scipy_factory
def _eigh(op: Any, node: Apply) -> SnippetImpl | None:
    """:func:`_nlinalg` for the eigenproblem of one matrix, the generalized problem (two
    inputs) in :mod:`opweave_c.impls.nlinalg_eigen`."""
    if len(node.inputs) == 2:
        return generalized_eigh_c(op, node)
    return _nlinalg(op, node)


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        **dict.fromkeys((MatrixInverse, Det, SLogDet), _nlinalg),
        Eigh: _eigh,
        Eigvalsh: eigvalsh_c,
        SVD: svd_c,
        MatrixPinv: pinv_c,
        QR: qr_c,
        Lstsq: lstsq_c,
        **{cls: python_only for cls in (Eig, TensorInv, TensorSolve)},
    }
)
