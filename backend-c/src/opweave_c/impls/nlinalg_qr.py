"""C code for ``QR`` of :mod:`opweave.tensor.nlinalg`, through the LAPACK that SciPy ships
(``dgeqrf`` and ``dorgqr``, looked up in ``scipy.linalg.cython_lapack`` on first use, as
for the other kernels of :mod:`opweave_c.impls.nlinalg`).

The kernel (``impls/c/nlinalg_qr.c``) does what ``numpy.linalg.qr`` does, step by step, and
what the Python backend (:mod:`opweave_python.impls.nlinalg`) does with the same routines:
every matrix (any layout) is copied as double into a Fortran-ordered work array and
handed to ``dgeqrf``; for ``"full"`` and ``"economic"`` the first ``k = min(m, n)``
columns of the reflectors go to ``dorgqr`` for the ``m`` or ``k`` columns of ``Q``. Both
routines take NumPy's workspace (their query, at least ``max(1, n)``). ``R`` is the upper
triangle of ``dgeqrf``'s result, ``"r"`` gives all ``m`` rows of it, ``"raw"`` the
reflectors, their scales and ``R``. The results are rounded to the output's dtype; a
matrix without entries has the identity as ``Q`` (``"full"``).

The inputs are never written to; float32 and float64 outputs run in C, complex ones (and
a missing SciPy) leave the nodes to the Python backend.
"""

from __future__ import annotations

from importlib.util import find_spec
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.link.capabilities import CAPABILITY_ATTRIBUTE, FALLBACK
from opweave.tensor.nlinalg import QR
from opweave_c.impls.common import SnippetImpl, c_string, tensor_dtype, typenum
from opweave_c.impls.csource import render, snippet
from opweave_c.impls.lapack import SUPPORT as LAPACK_SUPPORT
from opweave_c.impls.lapack import lapack_exports

__all__ = ["QrC", "qr_c"]

#: Bump when the generated C changes.
VERSION = (1,)

#: The output dtypes with C code.
FLOATS = frozenset({"float32", "float64"})

#: The routines the kernel calls, by name in ``scipy.linalg.cython_lapack``.
ROUTINES = ("dgeqrf", "dorgqr")

#: QR's mode -> the C constant of its kernel.
KINDS: MappingProxyType[str, str] = MappingProxyType(
    {"full": "OPW_QR_FULL", "economic": "OPW_QR_ECONOMIC", "r": "OPW_QR_R", "raw": "OPW_QR_RAW"}
)

#: The shared functions of ``nlinalg.c`` the kernel uses, then the kernel.
NLINALG_SUPPORT = snippet("nlinalg.c", "support")
SUPPORT = snippet("nlinalg_qr.c", "support")


class QrC(SnippetImpl):
    """A node of ``QR``: ``opw_qr_run`` with its mode.

    Parameters
    ----------
    kind
        The C constant of the mode (:data:`KINDS`).
    dtype
        The outputs' dtype, ``"float32"`` or ``"float64"``.
    """

    version = VERSION

    def __init__(self, kind: str, dtype: str) -> None:
        self.kind = kind
        self.dtype = dtype

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The lookup, the shared functions of ``nlinalg.c`` and the kernel.

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
        """Fill in the node's section of ``nlinalg_qr.c``."""
        (x,) = inputs
        extra = [f"&{z}" for z in outputs[1:]] + ["NULL", "NULL"]
        return render(
            "nlinalg_qr.c",
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


def qr_c(op: QR, node: Apply) -> QrC | None:
    """The C implementation of a ``QR`` node with float32/float64 outputs.

    Parameters
    ----------
    op
        The node's Op.
    node
        The node.

    Returns
    -------
    QrC or None
        ``None`` for complex values, an unknown mode, or without SciPy's LAPACK.
    """
    dtypes = {tensor_dtype(v) for v in node.outputs}
    if len(dtypes) != 1 or not dtypes <= FLOATS or op.mode not in KINDS:
        return None
    if tensor_dtype(node.inputs[0]) is None or not lapack_exports(ROUTINES):
        return None
    (dtype,) = dtypes
    return QrC(KINDS[op.mode], str(dtype))


if find_spec("scipy") is None:  # no SciPy: every node runs in Python
    setattr(qr_c, CAPABILITY_ATTRIBUTE, FALLBACK)
