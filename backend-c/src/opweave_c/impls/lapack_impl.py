"""What the implementations of :mod:`opweave_c.impls.nlinalg` and its companion modules
(``nlinalg_svd``, ``nlinalg_qr``, ``nlinalg_eigen``, ``nlinalg_lstsq``) share: the base
class of their nodes, the test of a node's dtypes and the capability mark of their
factories.

Every one of these implementations calls SciPy's LAPACK through ``opw_lapack_lookup``
(:data:`opweave_c.impls.lapack.SUPPORT`) and the shared functions of ``nlinalg.c``
(:data:`NLINALG_SUPPORT`: reading and writing float32/float64 values, the work arrays, the
outputs, the errors), then its own kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.util import find_spec
from typing import Any, TypeVar

import numpy as np

from opweave.graph.basic import Apply
from opweave.link.capabilities import CAPABILITY_ATTRIBUTE, FALLBACK
from opweave_c.impls.common import SnippetImpl, c_string, tensor_dtype, typenum
from opweave_c.impls.csource import render, snippet
from opweave_c.impls.lapack import SUPPORT as LAPACK_SUPPORT

__all__ = ["FLOATS", "NLINALG_SUPPORT", "LapackImpl", "MatrixImpl", "float_dtype", "scipy_factory"]

#: The output dtypes with C code.
FLOATS = frozenset({"float32", "float64"})

#: The shared functions of ``nlinalg.c`` (and the kernels of ``MatrixInverse``, ``Det``,
#: ``SLogDet`` and ``Eigh``).
NLINALG_SUPPORT = snippet("nlinalg.c", "support")

F = TypeVar("F", bound=Callable[..., Any])


class LapackImpl(SnippetImpl):
    """A node whose kernel calls SciPy's LAPACK: the lookup, the shared functions of
    ``nlinalg.c``, then the kernels of :attr:`support`.

    Subclasses set ``version`` and :attr:`support` and write ``c_code``.

    Parameters
    ----------
    kind
        The C constant of the node's kernel (``""`` where the module has one kernel).
    dtype
        The outputs' dtype, ``"float32"`` or ``"float64"``.
    """

    #: The module's own support snippets, after those of ``nlinalg.c``.
    support: tuple[str, ...] = ()

    def __init__(self, kind: str, dtype: str) -> None:
        self.kind = kind
        self.dtype = dtype

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The support snippets: the lookup, the shared functions of ``nlinalg.c`` and the
        module's kernels (:attr:`support`); ``kwargs`` (``c_compiler``...) are unused."""
        return [LAPACK_SUPPORT, NLINALG_SUPPORT, *self.support]


class MatrixImpl(LapackImpl):
    """A node of one matrix input and at most three outputs whose kernel is the C function
    :attr:`run` (``run(spec, typenum, x, &z0, z1, z2)``, NULL for a missing output): the
    ``matrix_node`` section of ``nlinalg.c``.

    Subclasses set ``version``, :attr:`support` and :attr:`run`.
    """

    #: The C function of the node.
    run: str = ""

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Fill in the ``matrix_node`` section of ``nlinalg.c``."""
        (x,) = inputs
        extra = [f"&{z}" for z in outputs[1:]] + ["NULL", "NULL"]
        return render(
            "nlinalg.c",
            "matrix_node",
            run=self.run,
            who=c_string(str(node.op)),
            kind=self.kind,
            typenum=typenum(self.dtype),
            x=x,
            z0=outputs[0],
            z1=extra[0],
            z2=extra[1],
            fail=sub["fail"],
        )


def float_dtype(node: Apply, *, widening: bool = False) -> str | None:
    """The outputs' dtype when every output is float32 or every one float64 and every
    input has C code; else ``None``. (Whether SciPy's LAPACK exports the routines is the
    factory's to ask, :func:`~opweave_c.impls.lapack.lapack_exports`.)

    Parameters
    ----------
    node
        The node.
    widening
        Also ``None`` where an input's dtype is wider than the outputs' (the Python
        kernels would compute in it).

    Returns
    -------
    str or None
        ``"float32"``, ``"float64"`` or ``None``.
    """
    dtypes = {tensor_dtype(v) for v in node.outputs}
    if len(dtypes) != 1 or not dtypes <= FLOATS:
        return None
    dtype = str(next(iter(dtypes)))
    ins = [tensor_dtype(v) for v in node.inputs]
    if None in ins:
        return None
    if widening and np.result_type(dtype, *[str(d) for d in ins]) != np.dtype(dtype):
        return None
    return dtype


def scipy_factory(factory: F) -> F:
    """Mark ``factory`` as leaving every node to the Python backend where SciPy (an
    optional extra) is not installed.

    Parameters
    ----------
    factory
        A ``factory(op, node)`` of C implementations.

    Returns
    -------
    callable
        ``factory`` itself.
    """
    if find_spec("scipy") is None:
        setattr(factory, CAPABILITY_ATTRIBUTE, FALLBACK)
    return factory
