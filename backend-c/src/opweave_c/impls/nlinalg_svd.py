"""C code for ``SVD`` and ``MatrixPinv`` of :mod:`opweave.tensor.nlinalg`, through the
LAPACK that SciPy ships (``dgesdd``, looked up in ``scipy.linalg.cython_lapack`` on first
use, as for the other kernels of :mod:`opweave_c.impls.nlinalg`).

Each kernel (``impls/c/nlinalg_svd.c``) does what ``numpy.linalg`` does, step by step, and
what the Python backend (:mod:`opweave_python.impls.nlinalg`) does with the same routine:

- every matrix (any layout) is copied as double into a Fortran-ordered work array and
  handed to ``dgesdd`` with ``jobz`` ``'A'`` (``full_matrices``), ``'S'`` (the thin
  factors) or ``'N'`` (``compute_uv=False``) and the workspace its query asks for; the
  results are rounded to the output's dtype. ``info`` other than 0 (a matrix holding NaN
  gives -4) raises ``numpy.linalg.LinAlgError("SVD did not converge")``. A matrix without
  entries has the identities as ``U`` and ``VT`` with ``full_matrices``, as in NumPy;
- the pseudo-inverse is ``numpy.linalg.pinv``'s: the thin factors rounded to the output's
  dtype, the singular values above ``1e-15 * max(s)`` inverted in that dtype and the others
  0, then ``VT.T @ (s_inv[:, None] * U.T)`` in the dtype, each entry summed over ``k`` in
  order from ``+0``. For ``hermitian=True`` the factors are NumPy's
  ``svd(hermitian=True)``: ``dsyevd`` of the lower triangle (``jobz='V'``, the workspace
  its query asks for) rounded to the dtype, the absolute eigenvalues in descending order
  (a stable ascending sort, NaN last, reversed) with their eigenvectors as ``U``, and
  ``VT`` the transpose of ``U`` times the signs; a failure to converge raises
  ``LinAlgError("Eigenvalues did not converge")``, a matrix that is not square
  ``ValueError``.

The inputs are never written to; float32 and float64 outputs run in C, complex ones (and
a missing SciPy) leave the nodes to the Python backend.
"""

from __future__ import annotations

from opweave.graph.basic import Apply
from opweave.tensor.nlinalg import SVD, MatrixPinv
from opweave_c.impls.csource import snippet
from opweave_c.impls.lapack import lapack_exports
from opweave_c.impls.lapack_impl import MatrixImpl, float_dtype, scipy_factory

__all__ = ["SvdC", "pinv_c", "svd_c"]

#: Bump when the generated C changes.
VERSION = (2,)

#: The routines the kernels call, by name in ``scipy.linalg.cython_lapack``.
ROUTINES = ("dgesdd", "dsyevd")


class SvdC(MatrixImpl):
    """A node of ``SVD`` or ``MatrixPinv``: ``opw_svd_run`` with its kernel, ``kind``
    (:class:`~opweave_c.impls.lapack_impl.LapackImpl`) ``OPW_SVD_FULL``, ``OPW_SVD_THIN``,
    ``OPW_SVD_S`` (singular values only), ``OPW_SVD_PINV`` or ``OPW_SVD_PINVH``
    (Hermitian)."""

    version = VERSION
    support = (snippet("nlinalg_svd.c", "support"),)
    run = "opw_svd_run"


def _float_node(node: Apply) -> str | None:
    """The outputs' dtype for a node of one input (:func:`float_dtype`) when SciPy's LAPACK
    has the routines; else ``None``."""
    dtype = float_dtype(node) if len(node.inputs) == 1 else None
    return dtype if dtype is not None and lapack_exports(ROUTINES) else None


def _kind(op: SVD | MatrixPinv) -> str:
    """The C constant of the node's kernel."""
    if isinstance(op, MatrixPinv):
        return "OPW_SVD_PINVH" if op.hermitian else "OPW_SVD_PINV"
    if not op.compute_uv:
        return "OPW_SVD_S"
    return "OPW_SVD_FULL" if op.full_matrices else "OPW_SVD_THIN"


@scipy_factory
def svd_c(op: SVD | MatrixPinv, node: Apply) -> SvdC | None:
    """The C implementation of an ``SVD`` or ``MatrixPinv`` node with float32/float64
    outputs.

    Parameters
    ----------
    op
        The ``SVD`` (``compute_uv`` and ``full_matrices`` pick the factors) or the
        ``MatrixPinv`` (``hermitian`` picks the factorization).
    node
        Its node, of one matrix input.

    Returns
    -------
    SvdC or None
        ``None`` for complex values or without SciPy's LAPACK.
    """
    dtype = _float_node(node)
    return None if dtype is None else SvdC(_kind(op), dtype)


#: ``MatrixPinv``'s factory: :func:`svd_c`.
pinv_c = svd_c
