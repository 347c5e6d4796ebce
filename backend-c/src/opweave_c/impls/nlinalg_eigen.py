"""C code for ``Eigvalsh`` (:mod:`opweave.tensor.linalg.decomposition.eigen`) and ``Eigh``
with a second matrix (the generalized problem ``a v = w b v``), through the LAPACK that
SciPy ships (``dsyevd`` and ``dsygvd``, looked up in ``scipy.linalg.cython_lapack`` on
first use, as for the other kernels of :mod:`opweave_c.impls.nlinalg`).

Each kernel (``impls/c/nlinalg_eigen.c``) does what NumPy or SciPy does, step by step, and
what the Python backend (:mod:`opweave_python.impls.eigen`,
:mod:`opweave_python.impls.nlinalg`) does with the same routines: every matrix (any
layout) is copied as double into Fortran-ordered work arrays, the results are rounded to
the output's dtype;

- the eigenvalues of one matrix are ``dsyevd``'s (``jobz='N'``, the workspace its query
  asks for: ``numpy.linalg.eigvalsh``);
- those of the generalized problem ``dsygvd``'s (``itype=1``, ``jobz`` ``'N'`` or ``'V'``,
  the workspace SciPy's wrapper sizes by default: ``scipy.linalg.eigh(a, b)``), the
  eigenvectors normalized so that ``V.T @ b @ V == I``.

Both read the triangle the Op names, of ``a`` and of ``b``. ``b`` not positive definite
raises ``numpy.linalg.LinAlgError("<Op>: b is not positive definite")``, a failure to
converge ``LinAlgError("Eigenvalues did not converge")``; shapes are checked with the
Python kernels' messages. The inputs are never written to; float32 and float64 outputs run
in C, complex values (and a missing SciPy) leave the nodes to the Python backend.
"""

from __future__ import annotations

from opweave.graph.basic import Apply
from opweave.tensor.linalg.decomposition.eigen import Eigvalsh
from opweave.tensor.nlinalg import Eigh
from opweave_c.impls.common import c_string, typenum
from opweave_c.impls.csource import render, snippet
from opweave_c.impls.lapack import lapack_exports
from opweave_c.impls.lapack_impl import LapackImpl, float_dtype, scipy_factory

__all__ = ["EigenC", "eigvalsh_c", "generalized_eigh_c"]

#: Bump when the generated C changes.
VERSION = (2,)

#: The routines the kernels call, by name in ``scipy.linalg.cython_lapack``.
ROUTINES = ("dsyevd", "dsygvd")


class EigenC(LapackImpl):
    """A node of ``Eigvalsh`` or of ``Eigh`` with ``b``: ``opw_eig_run`` with its kernel,
    ``kind`` (:class:`~opweave_c.impls.lapack_impl.LapackImpl`) ``OPW_EIG_VALS``
    (``dsyevd``), ``OPW_EIG_GVALS`` or ``OPW_EIG_GVECS`` (``dsygvd`` without or with the
    eigenvectors)."""

    version = VERSION
    support = (snippet("nlinalg_eigen.c", "support"),)

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Fill in the node's section of ``nlinalg_eigen.c``."""
        return render(
            "nlinalg_eigen.c",
            "node",
            who=c_string(str(node.op)),
            kind=self.kind,
            lower=int(getattr(node.op, "lower", True)),
            typenum=typenum(self.dtype),
            a=inputs[0],
            b=inputs[1] if len(inputs) > 1 else "NULL",
            z0=outputs[0],
            z1=f"&{outputs[1]}" if len(outputs) > 1 else "NULL",
            fail=sub["fail"],
        )


def _float_node(node: Apply) -> str | None:
    """The outputs' dtype when the inputs cast to it as the Python kernels compute (no
    wider dtype among them) (:func:`float_dtype`); else ``None``."""
    dtype = float_dtype(node, widening=True)
    return dtype if dtype is not None and lapack_exports(ROUTINES) else None


@scipy_factory
def eigvalsh_c(op: Eigvalsh, node: Apply) -> EigenC | None:
    """The C implementation of an ``Eigvalsh`` node (one or two inputs) with a float32 or
    float64 output.

    Parameters
    ----------
    op
        The ``Eigvalsh`` (``lower`` names the triangle read).
    node
        Its node: ``a``, or ``a`` and ``b`` (the generalized problem).

    Returns
    -------
    EigenC or None
        ``None`` for complex values, an input wider than the output, or without SciPy's
        LAPACK.
    """
    dtype = _float_node(node)
    if dtype is None:
        return None
    return EigenC("OPW_EIG_VALS" if len(node.inputs) == 1 else "OPW_EIG_GVALS", dtype)


def generalized_eigh_c(op: Eigh, node: Apply) -> EigenC | None:
    """The C implementation of an ``Eigh`` node with ``b`` and float32 or float64 outputs.

    Parameters
    ----------
    op
        The ``Eigh`` (``lower`` names the triangle read).
    node
        Its node, of the inputs ``a`` and ``b``.

    Returns
    -------
    EigenC or None
        ``None`` for complex values, an input wider than the outputs, one input only, or
        without SciPy's LAPACK.
    """
    dtype = _float_node(node)
    if dtype is None or len(node.inputs) != 2:
        return None
    return EigenC("OPW_EIG_GVECS", dtype)
