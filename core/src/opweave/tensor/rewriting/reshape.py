"""``JoinDims`` and ``SplitDims`` as ``Reshape``: PyTensor's
``pytensor.tensor.rewriting.reshape``.

:func:`~opweave.tensor.reshape.join_dims` and :func:`~opweave.tensor.reshape.split_dims`
(and ``pack``/``unpack``, built on them) are reshapes; turning them into ``Reshape`` lets
every backend run them with its own ``Reshape`` kernel and lets the ``Reshape`` rewrites
reason about them.

Registered in ``canonicalize`` (tags ``fast_run``, ``fast_compile``, as PyTensor's
``register_canonicalize``), by :func:`register_reshape`:

* ``local_join_dims_to_reshape``: ``join_dims(x, start_axis, n_axes)`` ->
  ``x.reshape((*x.shape[:start_axis], prod(x.shape[start_axis:start_axis + n_axes]),
  *x.shape[start_axis + n_axes:]))``;
* ``local_split_dims_to_reshape``: ``split_dims(x, shape, axis)`` ->
  ``x.reshape((*x.shape[:axis], *shape, *x.shape[axis + 1:]))``.

Unlike PyTensor, the joined length is the product of the joined lengths, not ``-1``:
NumPy cannot infer a ``-1`` length when another length is 0, so a ``-1`` would fail for
inputs with an empty dimension (``(0, 3, 4)`` joined from axis 1 is ``(0, 12)``). Every
length known statically enters the new shape as a constant, so the ``Reshape`` has the
static shape of the Op it replaces (a less specific one goes through ``specify_shape``;
a ``Reshape`` can know more, e.g. the last length of a split of a static length).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.rewriting import copy_stack_trace, node_rewriter
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_type_of, tensor_var
from opweave.tensor.basic import MakeVector
from opweave.tensor.reshape import JoinDims, SplitDims
from opweave.tensor.shape import Shape_i, reshape, specify_shape

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = ["local_join_dims_to_reshape", "local_split_dims_to_reshape", "register_reshape"]


def _length(x: Variable, i: int) -> int | Variable:
    """The length of dimension ``i`` of ``x``: an int when it is static, else
    ``Shape_i(i)(x)``."""
    static = tensor_type_of(x).shape[i]
    return static if static is not None else Shape_i(i)(x)


def _product(lengths: list[int | Variable]) -> int | Variable:
    """The product of ``lengths``: an int when they are all ints."""
    static = int(np.prod([n for n in lengths if isinstance(n, int)], dtype=np.int64))
    symbolic = [n for n in lengths if not isinstance(n, int)]
    if not symbolic:
        return static
    if static == 1 and len(symbolic) == 1:
        return symbolic[0]
    return tensor_out(tm.mul(*symbolic, static) if static != 1 else tm.mul(*symbolic))


def _entries(shape: Variable, n: int) -> list[int | Variable]:
    """The ``n`` entries of the integer vector ``shape``: ints where it is a constant,
    the inputs of a ``MakeVector``, else ``shape[i]``."""
    if isinstance(shape, Constant):
        return [int(v) for v in np.asarray(shape.data).reshape(-1)]
    if shape.owner is not None and isinstance(shape.owner.op, MakeVector):
        return list(shape.owner.inputs)
    vector = tensor_var(shape)
    return [vector[i] for i in range(n)]


def _as_replacement(old: Variable, new: Variable) -> Variable:
    """``new`` with at least ``old``'s static shape (through ``specify_shape`` where
    ``new`` knows less)."""
    old_shape = tensor_type_of(old).shape
    new_shape = tensor_type_of(new).shape
    if any(o is not None and n is None for o, n in zip(old_shape, new_shape, strict=True)):
        new = specify_shape(new, old_shape)
    return new


@node_rewriter([JoinDims])
def local_join_dims_to_reshape(fgraph: FunctionGraph | None, node: Apply) -> list[Any] | None:
    """``join_dims(x, start_axis, n_axes)`` -> ``x.reshape(...)`` with the joined lengths'
    product at ``start_axis`` (``n_axes=0`` inserts a length 1).

    Parameters
    ----------
    fgraph
        The graph being rewritten.
    node
        A ``JoinDims`` node.

    Returns
    -------
    list or None
        The ``Reshape`` output replacing the node's output.
    """
    op = node.op
    if not isinstance(op, JoinDims):
        return None
    (x,) = node.inputs
    ndim = tensor_type_of(x).ndim
    stop = op.start_axis + op.n_axes
    new_shape = [
        *(_length(x, i) for i in range(op.start_axis)),
        _product([_length(x, i) for i in range(op.start_axis, stop)]),
        *(_length(x, i) for i in range(stop, ndim)),
    ]
    new_x = _as_replacement(node.outputs[0], reshape(x, new_shape))
    copy_stack_trace(node.outputs[0], new_x)
    return [new_x]


@node_rewriter([SplitDims])
def local_split_dims_to_reshape(fgraph: FunctionGraph | None, node: Apply) -> list[Any] | None:
    """``split_dims(x, shape, axis)`` -> ``x.reshape((*x.shape[:axis], *shape,
    *x.shape[axis + 1:]))`` (an empty ``shape`` drops the axis).

    Parameters
    ----------
    fgraph
        The graph being rewritten.
    node
        A ``SplitDims`` node.

    Returns
    -------
    list or None
        The ``Reshape`` output replacing the node's output.
    """
    op = node.op
    if not isinstance(op, SplitDims):
        return None
    x, shape = node.inputs
    ndim = tensor_type_of(x).ndim
    n_split = tensor_type_of(node.outputs[0]).ndim - ndim + 1
    new_shape = [
        *(_length(x, i) for i in range(op.axis)),
        *_entries(shape, n_split),
        *(_length(x, i) for i in range(op.axis + 1, ndim)),
    ]
    new_x = _as_replacement(node.outputs[0], reshape(x, new_shape, ndim=len(new_shape)))
    copy_stack_trace(node.outputs[0], new_x)
    return [new_x]


def register_reshape(db: RewriteDatabase) -> None:
    """Register :func:`local_join_dims_to_reshape` and :func:`local_split_dims_to_reshape`
    in the ``canonicalize`` phase of ``db`` (tags ``fast_run``, ``fast_compile``).

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    canonicalize = db["canonicalize"]
    for name, rewriter in (
        ("local_join_dims_to_reshape", local_join_dims_to_reshape),
        ("local_split_dims_to_reshape", local_split_dims_to_reshape),
    ):
        canonicalize.register(name, rewriter, "fast_run", "fast_compile")
