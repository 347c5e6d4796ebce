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

from importlib.util import find_spec
from typing import Any

from opweave.graph.basic import Apply
from opweave.link.capabilities import CAPABILITY_ATTRIBUTE, FALLBACK
from opweave.tensor.nlinalg import SVD, MatrixPinv
from opweave_c.impls.common import SnippetImpl, c_string, tensor_dtype, typenum
from opweave_c.impls.csource import render, snippet
from opweave_c.impls.lapack import SUPPORT as LAPACK_SUPPORT
from opweave_c.impls.lapack import lapack_exports

__all__ = ["SvdC", "pinv_c", "svd_c"]

#: Bump when the generated C changes.
VERSION = (1,)

#: The output dtypes with C code.
FLOATS = frozenset({"float32", "float64"})

#: The routines the kernels call, by name in ``scipy.linalg.cython_lapack``.
ROUTINES = ("dgesdd", "dsyevd")

#: The shared functions of ``nlinalg.c`` the kernels use, then the kernels.
NLINALG_SUPPORT = snippet("nlinalg.c", "support")
SUPPORT = snippet("nlinalg_svd.c", "support")


class SvdC(SnippetImpl):
    """A node of ``SVD`` or ``MatrixPinv``: ``opw_svd_run`` with its kernel.

    Parameters
    ----------
    kind
        The C constant of the kernel: ``OPW_SVD_FULL``, ``OPW_SVD_THIN``, ``OPW_SVD_S``
        (singular values only), ``OPW_SVD_PINV`` or ``OPW_SVD_PINVH`` (Hermitian).
    dtype
        The outputs' dtype, ``"float32"`` or ``"float64"``.
    """

    version = VERSION

    def __init__(self, kind: str, dtype: str) -> None:
        self.kind = kind
        self.dtype = dtype

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The lookup, the shared functions of ``nlinalg.c`` and the kernels.

        Parameters
        ----------
        **kwargs
            Unused (the contract may pass ``c_compiler``).

        Returns
        -------
        list of str
            The support snippets.
        """
        return [LAPACK_SUPPORT, NLINALG_SUPPORT, SUPPORT]

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Fill in the node's section of ``nlinalg_svd.c``."""
        (x,) = inputs
        extra = [f"&{z}" for z in outputs[1:]] + ["NULL", "NULL"]
        return render(
            "nlinalg_svd.c",
            "node",
            who=c_string(str(node.op)),
            kind=self.kind,
            typenum=typenum(self.dtype),
            x=x,
            z0=outputs[0],
            z1=extra[0],
            z2=extra[1],
            fail=sub["fail"],
        )


def _float_node(node: Apply) -> str | None:
    """The outputs' dtype when every output is float32 or every one float64, the input has
    C code and SciPy's LAPACK has the routines; else ``None``."""
    dtypes = {tensor_dtype(v) for v in node.outputs}
    if len(dtypes) != 1 or not dtypes <= FLOATS or len(node.inputs) != 1:
        return None
    if tensor_dtype(node.inputs[0]) is None or not lapack_exports(ROUTINES):
        return None
    (dtype,) = dtypes
    return str(dtype)


def svd_c(op: SVD, node: Apply) -> SvdC | None:
    """The C implementation of an ``SVD`` node with float32/float64 outputs.

    Parameters
    ----------
    op
        The node's Op.
    node
        The node.

    Returns
    -------
    SvdC or None
        ``None`` for complex values or without SciPy's LAPACK.
    """
    dtype = _float_node(node)
    if dtype is None:
        return None
    if not op.compute_uv:
        return SvdC("OPW_SVD_S", dtype)
    return SvdC("OPW_SVD_FULL" if op.full_matrices else "OPW_SVD_THIN", dtype)


def pinv_c(op: MatrixPinv, node: Apply) -> SvdC | None:
    """The C implementation of a ``MatrixPinv`` node with float32/float64 output.

    Parameters
    ----------
    op
        The node's Op.
    node
        The node.

    Returns
    -------
    SvdC or None
        ``None`` for complex values or without SciPy's LAPACK.
    """
    dtype = _float_node(node)
    if dtype is None:
        return None
    return SvdC("OPW_SVD_PINVH" if op.hermitian else "OPW_SVD_PINV", dtype)


if find_spec("scipy") is None:  # no SciPy: every node runs in Python
    setattr(svd_c, CAPABILITY_ATTRIBUTE, FALLBACK)
    setattr(pinv_c, CAPABILITY_ATTRIBUTE, FALLBACK)
