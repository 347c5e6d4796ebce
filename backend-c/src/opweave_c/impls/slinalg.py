"""C code for :mod:`opweave.tensor.slinalg`: ``Cholesky``, ``Solve`` (and ``SolveBase``),
``SolveTriangular`` and ``CholeskySolve``, through the LAPACK that SciPy ships.

``scipy.linalg.cython_lapack`` exports LAPACK's routines as capsules of function pointers;
the generated code looks up ``potrf`` and ``gesv`` (``s``/``d``) there on first use, so
nothing is linked. Each kernel follows the Python backend's
(:mod:`opweave_python.impls.slinalg`) step by step, in the output's dtype:

- the matrix LAPACK is given is the one the Python kernel builds with NumPy: the triangle
  read with zeros elsewhere (ones on a unit diagonal), the symmetric matrix of one
  triangle (the triangle plus the mirrored strict triangle: ``-0.0`` becomes ``0.0`` as in
  NumPy's sum), the tridiagonal band;
- it goes, in a Fortran-ordered work array (any input layout or dtype is read), to the
  routine NumPy's function would call there: ``potrf('L')`` for ``numpy.linalg.cholesky`` (of
  ``a``, or of ``a``'s transpose for the upper factor), ``gesv`` for
  ``numpy.linalg.solve``. ``Solve(assume_a="pos")`` is ``potrf`` then two ``gesv`` on the
  factor's triangles; ``CholeskySolve`` and ``SolveTriangular`` are ``gesv`` on triangles,
  as in Python (``trtrs``/``potrs`` would differ: a singular lower-triangular system that
  ``gesv``'s pivoting does not find exactly singular gives finite values in Python);
- a matrix LAPACK fails on (not positive definite, exactly singular) gives NaN for that
  matrix of the batch, or ``numpy.linalg.LinAlgError`` naming it for
  ``Cholesky(on_error="raise")``; the shape errors have the Python kernel's messages, and
  batch shapes that do not broadcast raise the Python kernel's error by running it
  (:func:`raise_as_python`).

The Python backend calls the same routines of the same SciPy LAPACK (where SciPy is
installed), one matrix at a time, so both give the same values bit for bit.

The inputs are never written to (the Ops destroy nothing). float32 and float64 run in C;
other output dtypes (complex) and a missing SciPy (an optional extra) leave the nodes to
the Python backend (``cvm``). The other Ops of this module and of
:mod:`opweave.tensor.linalg` have no C code: ``cvm`` runs them in Python and the ``c``
linker raises ``MissingCCodeError``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib.util import find_spec
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.link.capabilities import CAPABILITY_ATTRIBUTE, FALLBACK
from opweave.link.perform import find_perform
from opweave.tensor.linalg.constructors import BlockDiagonal
from opweave.tensor.linalg.decomposition.lu import LU, LUFactor, PivotToPermutations
from opweave.tensor.linalg.decomposition.schur import QZ, Schur
from opweave.tensor.linalg.products import Expm
from opweave.tensor.linalg.solvers.linear_control import SolveSylvester
from opweave.tensor.linalg.solvers.riccati import SolveDiscreteARE
from opweave.tensor.slinalg import Cholesky, CholeskySolve, Solve, SolveBase, SolveTriangular
from opweave.tensor.type import TensorType
from opweave_c.impls.common import SnippetImpl, c_string, python_only, tensor_dtype, typenum
from opweave_c.impls.csource import render, snippet
from opweave_c.impls.lapack import SUPPORT as LAPACK_SUPPORT
from opweave_c.impls.lapack import lapack_exports

__all__ = ["C_OPS", "SlinalgC", "lapack_available", "raise_as_python"]

#: Bump when the generated C changes.
VERSION = (2,)

#: Output dtype -> C type.
_FLOATS: MappingProxyType[str, str] = MappingProxyType({"float32": "float", "float64": "double"})

#: The routines the kernels call, by name in ``scipy.linalg.cython_lapack``.
ROUTINES = ("spotrf", "sgesv", "dpotrf", "dgesv")

#: ``Solve.assume_a`` -> the kernel (``"her"`` is ``"sym"`` for real values; ``"banded"`` is
#: solved as ``"gen"``, as in Python).
_ASSUME_A: MappingProxyType[str, str] = MappingProxyType(
    {
        "gen": "OPW_SL_GEN",
        "banded": "OPW_SL_GEN",
        "sym": "OPW_SL_SYM",
        "her": "OPW_SL_SYM",
        "pos": "OPW_SL_POS",
        "tridiagonal": "OPW_SL_TRIDIAGONAL",
    }
)

#: The Op classes :func:`raise_as_python` rebuilds, by name.
_CLASSES: MappingProxyType[str, type] = MappingProxyType(
    {cls.__name__: cls for cls in (Cholesky, SolveBase, Solve, SolveTriangular, CholeskySolve)}
)

SUPPORT = snippet("slinalg.c", "support")


def lapack_available() -> bool:
    """Whether SciPy's LAPACK exports every routine of :data:`ROUTINES`
    (:func:`~opweave_c.impls.lapack.lapack_exports`).

    Returns
    -------
    bool
        False without SciPy, or where a routine is missing.
    """
    return lapack_exports(ROUTINES)


def _kernels(dtype: str) -> str:
    """The per-matrix C kernels for one float dtype (``opw_sl_*_<dtype>``)."""
    return render("slinalg.c", "kernels", dtype=dtype, t=_FLOATS[dtype])


def _node_json(node: Apply) -> str:
    """The Op (class name and props) and the input Types, for :func:`raise_as_python`."""
    op = node.op
    types = [[v.type.dtype, list(v.type.shape)] for v in node.inputs]  # type: ignore[attr-defined]
    return json.dumps({"op": type(op).__name__, "props": op._props_dict(), "inputs": types})


def raise_as_python(described: str, *inputs: np.ndarray) -> None:
    """Run the ``py`` kernel (found by the core's resolver) of the node ``described`` on ``inputs``.

    The generated code calls this for inputs whose batch shapes do not broadcast, so that
    the error is the Python kernel's (NumPy's, whose text depends on the step that first
    meets the shapes).

    Parameters
    ----------
    described
        The node as JSON: the Op's class name and props, and its input Types.
    *inputs
        The node's input values.

    Raises
    ------
    Exception
        Whatever the Python kernel raises on these inputs.
    """
    spec = json.loads(described)
    cls = _CLASSES[spec["op"]]
    op = cls(**spec["props"])
    variables = [TensorType(dtype, shape=tuple(shape))() for dtype, shape in spec["inputs"]]
    node = op.make_node(*variables)
    perform = find_perform(op, node)  # the ``py`` kernel, through the core's resolver
    if perform is None:
        raise NotImplementedError(f"no Python implementation of {op} to replay its error")
    perform(node, list(inputs), [[None]])


class SlinalgC(SnippetImpl):
    """A node of one of the Ops: ``opw_sl_run`` with the Op's solver and the dtype's kernel.

    Parameters
    ----------
    kind
        The C constant of the solver (``OPW_SL_GEN`` ...).
    dtype
        The output's dtype, ``"float32"`` or ``"float64"``.
    """

    version = VERSION

    def __init__(self, kind: str, dtype: str) -> None:
        self.kind = kind
        self.dtype = dtype

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The driver and lookups, then the dtype's kernels.

        Parameters
        ----------
        **kwargs
            Unused (the contract may pass ``c_compiler``).

        Returns
        -------
        list of str
            The support snippets.
        """
        return [LAPACK_SUPPORT, SUPPORT, _kernels(self.dtype)]

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Fill in the node's section of ``slinalg.c``."""
        op = node.op
        (z,) = outputs
        a, b = (inputs[0], "NULL") if len(inputs) == 1 else inputs
        nb = node.inputs[0].type.ndim - 2  # type: ignore[attr-defined]

        def ones(i: int) -> str:
            if len(node.inputs) <= i or nb == 0:
                return "0"
            shape = node.inputs[i].type.shape  # type: ignore[attr-defined]
            return ", ".join("1" if shape[axis] == 1 else "0" for axis in range(nb))

        return render(
            "slinalg.c",
            "node",
            a_one=ones(0),
            b_one=ones(1),
            who=c_string(str(op)),
            kind=self.kind,
            lower=int(op.lower),  # type: ignore[attr-defined]
            unit=int(getattr(op, "unit_diagonal", False)),
            b_ndim=int(getattr(op, "b_ndim", 0)),
            raise_on_error=int(getattr(op, "on_error", "nan") == "raise"),
            node=c_string(_node_json(node)),
            dtype=self.dtype,
            typenum=typenum(self.dtype),
            a=a,
            b=b,
            z=z,
            fail=sub["fail"],
        )


def _kind(op: Any) -> str:
    if isinstance(op, Cholesky):
        return "OPW_SL_CHOLESKY"
    if isinstance(op, SolveTriangular):
        return "OPW_SL_TRIANGULAR"
    if isinstance(op, CholeskySolve):
        return "OPW_SL_CHO_SOLVE"
    if isinstance(op, Solve):
        return _ASSUME_A[op.assume_a]
    return "OPW_SL_GEN"  # SolveBase itself: LU with all of a


def _same_batch_rank(node: Apply, core: Sequence[int]) -> bool:
    ranks = {v.type.ndim - k for v, k in zip(node.inputs, core, strict=True)}  # type: ignore[attr-defined]
    return len(ranks) == 1


def _slinalg(op: Any, node: Apply) -> SlinalgC | None:
    """The C implementation for float32/float64 outputs when SciPy's LAPACK loads."""
    dtype = tensor_dtype(node.outputs[0])
    if dtype is None or dtype not in _FLOATS or any(tensor_dtype(v) is None for v in node.inputs):
        return None
    core = [2] if isinstance(op, Cholesky) else [2, op.b_ndim]
    if len(node.inputs) != len(core) or not _same_batch_rank(node, core):
        return None
    if not lapack_available():
        return None
    return SlinalgC(_kind(op), dtype)


if find_spec("scipy") is None:  # no SciPy: every node runs in Python
    setattr(_slinalg, CAPABILITY_ATTRIBUTE, FALLBACK)


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        **dict.fromkeys((Cholesky, CholeskySolve, Solve, SolveBase, SolveTriangular), _slinalg),
        **{
            cls: python_only
            for cls in (
                Expm,
                BlockDiagonal,
                LU,
                LUFactor,
                PivotToPermutations,
                Schur,
                QZ,
                SolveSylvester,
                SolveDiscreteARE,
            )
        },
    }
)
