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

from types import MappingProxyType

from opweave.graph.basic import Apply
from opweave.tensor.nlinalg import QR
from opweave_c.impls.csource import snippet
from opweave_c.impls.lapack import lapack_exports
from opweave_c.impls.lapack_impl import MatrixImpl, float_dtype, scipy_factory

__all__ = ["QrC", "qr_c"]

#: Bump when the generated C changes.
VERSION = (2,)

#: The routines the kernel calls, by name in ``scipy.linalg.cython_lapack``.
ROUTINES = ("dgeqrf", "dorgqr")

#: QR's mode -> the C constant of its kernel.
KINDS: MappingProxyType[str, str] = MappingProxyType(
    {"full": "OPW_QR_FULL", "economic": "OPW_QR_ECONOMIC", "r": "OPW_QR_R", "raw": "OPW_QR_RAW"}
)


class QrC(MatrixImpl):
    """A node of ``QR``: ``opw_qr_run`` with its mode, ``kind``
    (:class:`~opweave_c.impls.lapack_impl.LapackImpl`) one of :data:`KINDS`."""

    version = VERSION
    support = (snippet("nlinalg_qr.c", "support"),)
    run = "opw_qr_run"


@scipy_factory
def qr_c(op: QR, node: Apply) -> QrC | None:
    """The C implementation of a ``QR`` node with float32/float64 outputs.

    Parameters
    ----------
    op
        The ``QR`` (its ``mode`` picks the kernel, :data:`KINDS`).
    node
        Its node, of one matrix input.

    Returns
    -------
    QrC or None
        ``None`` for complex values, an unknown mode, or without SciPy's LAPACK.
    """
    dtype = float_dtype(node) if op.mode in KINDS else None
    if dtype is None or not lapack_exports(ROUTINES):
        return None
    return QrC(KINDS[op.mode], dtype)
