"""A batched product without batch dimensions is a plain :class:`~opweave.tensor.blas.Dot`.

``matmul`` (the ``@`` operator) builds :class:`~opweave.tensor.blas.MatMul`, the
``Blockwise`` of ``Dot``, for every rank, as PyTensor does: a vector operand becomes a
one-row or one-column matrix and the added axis is dropped from the result. Code that
works on graphs before they are compiled (PyMC derives the density of ``A @ x`` from the
``Blockwise`` node) expects that form; compiled functions want ``Dot``, whose products the
backends and the later rewrites (transposes, scaling) know.

* ``local_eager_useless_unbatched_blockwise`` (``canonicalize``; tags fast_run,
  fast_compile, canonicalize; PyTensor's name, which code excludes by name to keep the
  ``Blockwise``): a ``Blockwise`` of ``Dot`` whose output has no batch dimensions becomes
  ``Dot``. An operand that is a vector given a length-1 axis by a ``DimShuffle`` enters
  the ``Dot`` as the vector, and the result gets the axis back, so that with the
  ``squeeze`` that ``matmul`` added the graph is ``Dot(matrix, vector)`` again; the
  transposed matrix times a column that ``matmul`` builds for ``vector @ matrix`` is
  computed as ``Dot(vector, matrix)``, without the transpose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import node_rewriter
from opweave.tensor._typing import tensor_out, tensor_type_of
from opweave.tensor.blas import Dot
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.rewriting.math import Replacement, _replacement

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = ["local_eager_useless_unbatched_blockwise", "register_blockwise"]


def _shuffled_from(x: Variable, new_order: tuple[int | str, ...]) -> Variable | None:
    """The input of ``x``'s ``DimShuffle`` if its order is ``new_order`` (``("x", 0)``: a
    vector as a one-row matrix, ``(0, "x")``: as a one-column matrix, ``(1, 0)``: a
    transposed matrix), else ``None``."""
    owner = x.owner
    if owner is None or not isinstance(owner.op, DimShuffle):
        return None
    return owner.inputs[0] if tuple(owner.op.new_order) == new_order else None


@node_rewriter([Blockwise])
def local_eager_useless_unbatched_blockwise(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``Blockwise(Dot)`` whose inputs have no batch dimensions -> ``Dot``."""
    op = node.op
    if not isinstance(op, Blockwise) or not isinstance(op.core_op, Dot):
        return False
    (out,) = node.outputs
    core_ndims = [len(sig) for sig in op.inputs_sig]
    if [tensor_type_of(x).ndim for x in node.inputs] != core_ndims:
        return False
    left, right = node.inputs
    matrices = core_ndims == [2, 2]
    row = _shuffled_from(left, ("x", 0)) if matrices else None
    column = _shuffled_from(right, (0, "x")) if matrices else None
    transposed = _shuffled_from(left, (1, 0)) if row is None and column is not None else None
    if transposed is not None and column is not None:
        # PyTensor's vecmat builds A.T @ v[:, None]: computed as v @ A, without a transpose
        product = tensor_out(op.core_op(column, transposed))
    else:
        product = tensor_out(
            op.core_op(left if row is None else row, right if column is None else column)
        )
    if row is not None and column is not None:
        product = tensor_out(DimShuffle(0, ("x", "x"))(product))
    elif row is not None:
        product = tensor_out(DimShuffle(1, ("x", 0))(product))
    elif column is not None:
        product = tensor_out(DimShuffle(1, (0, "x"))(product))
    return _replacement(out, [product])


def register_blockwise(db: RewriteDatabase) -> None:
    """Register ``local_eager_useless_unbatched_blockwise`` in the ``canonicalize`` phase.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    db["canonicalize"].register(
        "local_eager_useless_unbatched_blockwise",
        local_eager_useless_unbatched_blockwise,
        "fast_run",
        "fast_compile",
        "canonicalize",
    )
