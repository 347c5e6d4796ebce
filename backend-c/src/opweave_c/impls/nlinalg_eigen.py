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

from importlib.util import find_spec
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.link.capabilities import CAPABILITY_ATTRIBUTE, FALLBACK
from opweave.tensor.linalg.decomposition.eigen import Eigvalsh
from opweave.tensor.nlinalg import Eigh
from opweave_c.impls.common import SnippetImpl, c_string, tensor_dtype, typenum
from opweave_c.impls.csource import render, snippet
from opweave_c.impls.lapack import SUPPORT as LAPACK_SUPPORT
from opweave_c.impls.lapack import lapack_exports

__all__ = ["EigenC", "eigvalsh_c", "generalized_eigh_c"]

#: Bump when the generated C changes.
VERSION = (1,)

#: The output dtypes with C code.
FLOATS = frozenset({"float32", "float64"})

#: The routines the kernels call, by name in ``scipy.linalg.cython_lapack``.
ROUTINES = ("dsyevd", "dsygvd")

#: The shared functions of ``nlinalg.c`` the kernels use, then the kernels.
NLINALG_SUPPORT = snippet("nlinalg.c", "support")
SUPPORT = snippet("nlinalg_eigen.c", "support")


class EigenC(SnippetImpl):
    """A node of ``Eigvalsh`` or of ``Eigh`` with ``b``: ``opw_eig_run`` with its kernel.

    Parameters
    ----------
    kind
        The C constant of the kernel: ``OPW_EIG_VALS`` (``dsyevd``), ``OPW_EIG_GVALS`` or
        ``OPW_EIG_GVECS`` (``dsygvd`` without or with the eigenvectors).
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
    """The outputs' dtype when every output is float32 or every one float64, the inputs
    have C code and cast to it as the Python kernels compute (no wider dtype among them),
    and SciPy's LAPACK has the routines; else ``None``."""
    dtypes = {tensor_dtype(v) for v in node.outputs}
    if len(dtypes) != 1 or not dtypes <= FLOATS:
        return None
    (dtype,) = dtypes
    ins = [tensor_dtype(v) for v in node.inputs]
    if None in ins or np.result_type(str(dtype), *[str(d) for d in ins]) != np.dtype(str(dtype)):
        return None
    return str(dtype) if lapack_exports(ROUTINES) else None


def eigvalsh_c(op: Eigvalsh, node: Apply) -> EigenC | None:
    """The C implementation of an ``Eigvalsh`` node (one or two inputs) with a float32 or
    float64 output.

    Parameters
    ----------
    op
        The node's Op.
    node
        The node.

    Returns
    -------
    EigenC or None
        ``None`` for complex values or without SciPy's LAPACK.
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
        The node's Op.
    node
        The node, of two inputs.

    Returns
    -------
    EigenC or None
        ``None`` for complex values or without SciPy's LAPACK.
    """
    dtype = _float_node(node)
    if dtype is None or len(node.inputs) != 2:
        return None
    return EigenC("OPW_EIG_GVECS", dtype)


if find_spec("scipy") is None:  # no SciPy: every node runs in Python
    setattr(eigvalsh_c, CAPABILITY_ATTRIBUTE, FALLBACK)
