"""Shape rewrites: answer ``Shape`` and ``Shape_i`` from ``infer_shape``, not by computing.

``Shape_i(i)(v)`` and ``Shape()(v)``, where ``v = node.outputs[k]`` of any Op implementing
``infer_shape`` (the Op contract), are replaced by what ``node.op.infer_shape(fgraph, node,
input_shapes)`` says, where each input's shape is a tuple of its static lengths (as int64
constants) or, where they are not known, ``Shape_i(j)(input)``. Those are in turn
answered from the inputs' own Ops, until the graph's inputs are reached, so that a
function asking for the shape of a result does not compute the result. Lengths known
statically become constants.

Registered in ``canonicalize`` (tags ``fast_run``, ``shape``):

* ``local_shape_i_from_infer_shape``: ``Shape_i(i)(v)`` -> the inferred length;
* ``local_shape_from_infer_shape``: ``Shape()(v)`` -> a ``MakeVector`` of the inferred
  lengths (a constant vector when they are all static);
* ``local_subtensor_of_shape``: ``v.shape[k]`` (a constant ``k``) -> ``Shape_i(k)(v)``
  (itself answered as above), and ``MakeVector(a, b, ...)[k]`` -> the ``k``-th entry.

Where ``infer_shape`` is not defined, raises, or returns something that is not an
integer scalar, the node is left alone. As in PyTensor, a shape answered this way does
not check at run time that the result could have been computed (e.g. that the inputs of
an ``Elemwise`` have compatible lengths).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.rewriting import node_rewriter
from opweave.scalar import ScalarType
from opweave.tensor._typing import tensor_out, tensor_type_of
from opweave.tensor.basic import MakeVector, cast, tensor_from_scalar
from opweave.tensor.constructors import constant
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.shape import Shape, Shape_i
from opweave.tensor.subtensor import Subtensor
from opweave.tensor.type import TensorType

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = [
    "infer_dim",
    "local_shape_from_infer_shape",
    "local_shape_i_from_infer_shape",
    "local_subtensor_of_shape",
    "register_shape",
    "symbolic_shape",
]


def _int64_constant(value: Any) -> Variable:
    return constant(int(value), dtype="int64")


def symbolic_shape(var: Variable) -> tuple[Variable, ...] | None:
    """The shape of ``var`` as a tuple of int64 scalars: constants where the static shape
    knows the length, ``Shape_i(j)(var)`` elsewhere.

    Parameters
    ----------
    var
        A variable.

    Returns
    -------
    tuple or None
        ``None`` when ``var``'s Type has no shape (``()`` for rank-0 Types).
    """
    static = getattr(var.type, "shape", None)
    if static is None:
        return () if getattr(var.type, "ndim", None) == 0 else None
    return tuple(
        _int64_constant(n) if n is not None else Shape_i(j)(var) for j, n in enumerate(static)
    )


def _as_int64_scalar(entry: Any) -> Variable | None:
    """``entry`` (an int or an integer scalar variable) as a 0-d int64 tensor, or ``None``."""
    if isinstance(entry, bool | np.bool_):
        return None
    if isinstance(entry, int | np.integer):
        return _int64_constant(entry)
    if not isinstance(entry, Variable):
        return None
    var: Variable = tensor_from_scalar(entry) if isinstance(entry.type, ScalarType) else entry
    typ = var.type
    if not isinstance(typ, TensorType) or typ.ndim != 0 or typ.dtype[:3] not in ("int", "uin"):
        return None
    if typ.dtype != "int64":
        var = cast(var, "int64")
    return var


def _depends_on(var: Variable, targets: set[Variable], known: set[Variable]) -> bool:
    """True if the new graph computing ``var`` reads one of ``targets``.

    The walk does not enter variables already in the graph (``known``): they cannot
    depend on ``targets``, which are outputs of the node whose shape is inferred.
    """
    stack = [var]
    seen: set[Variable] = set()
    while stack:
        v = stack.pop()
        if v in targets:
            return True
        if v in seen or v in known:
            continue
        seen.add(v)
        if v.owner is not None:
            stack.extend(v.owner.inputs)
    return False


def _inferred_shapes(fgraph: FunctionGraph | None, node: Apply) -> list[Any] | None:
    """``node.op.infer_shape`` on the symbolic shapes of its inputs, or ``None``."""
    infer = getattr(node.op, "infer_shape", None)
    if infer is None:
        return None
    shapes = [symbolic_shape(inp) for inp in node.inputs]
    try:
        out_shapes = infer(fgraph, node, shapes)
    except Exception:  # not defined (MethodNotDefined), or not for these inputs
        return None
    if not isinstance(out_shapes, list | tuple) or len(out_shapes) != len(node.outputs):
        return None
    return list(out_shapes)


def _elemwise_dim(node: Apply, i: int) -> Variable:
    """Axis ``i`` of an ``Elemwise`` node's outputs, as ``Elemwise.infer_shape`` answers it
    (the first input not broadcast on the axis gives it), without building the shapes of
    all the inputs first: a chain of elementwise nodes is walked once per length asked."""
    source = Elemwise.axis_source(node, i)
    if source is None:
        return _int64_constant(1)
    inp = node.inputs[source]
    length = tensor_type_of(inp).shape[i]
    return _int64_constant(length) if length is not None else Shape_i(i)(inp)


def infer_dim(fgraph: FunctionGraph | None, var: Variable, i: int) -> Variable | None:
    """The length of dimension ``i`` of ``var`` without computing ``var``, or ``None``.

    Parameters
    ----------
    fgraph
        The graph ``var`` belongs to (given to ``infer_shape``), or ``None``.
    var
        A tensor variable.
    i
        A dimension of ``var``.

    Returns
    -------
    Variable or None
        An int64 constant when the static shape knows the length; else the entry of the
        owner's ``infer_shape`` as a 0-d int64 tensor; ``None`` when neither is available.
    """
    static = getattr(var.type, "shape", None)
    if static is None or not 0 <= i < len(static):
        return None
    if static[i] is not None:
        return _int64_constant(static[i])
    node = var.owner
    if node is None:
        return None
    if type(node.op).infer_shape is Elemwise.infer_shape:
        entry: Any = _elemwise_dim(node, i)
    else:
        out_shapes = _inferred_shapes(fgraph, node)
        if out_shapes is None:
            return None
        assert var.index is not None  # an output of ``node``
        out_shape = out_shapes[var.index]
        try:
            entry = out_shape[i]
        except (TypeError, IndexError, KeyError):
            return None
    dim = _as_int64_scalar(entry)
    if dim is None:
        return None
    known = fgraph.variables if fgraph is not None else set()
    if _depends_on(dim, set(node.outputs), known):
        return None
    return dim


@node_rewriter([Shape_i])
def local_shape_i_from_infer_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``Shape_i(i)(v)`` -> the static length, or the entry of ``v.owner``'s ``infer_shape``."""
    op = node.op
    if not isinstance(op, Shape_i):  # the rewriter tracks Shape_i nodes only
        return False
    (var,) = node.inputs
    if not isinstance(var.type, TensorType):
        return False
    dim = infer_dim(fgraph, var, op.i)
    if dim is None or dim is node.outputs[0]:
        return False
    return [_follow_shape_i(fgraph, dim)]


#: The attribute of a graph holding where :func:`_follow_shape_i` ended for each
#: ``(variable, axis)`` (the lengths do not change as the graph is rewritten).
_SHAPE_I_ENDS = "_opweave_shape_i_ends"


def _follow_shape_i(fgraph: FunctionGraph, dim: Variable) -> Variable:
    """Follow a length that is itself ``Shape_i`` of an inferable variable to its end.

    In a chain ``e_k = f(e_{k-1})`` each step of ``infer_shape`` moves ``Shape_i(e_k)``
    back by one variable; taking every step in one rewrite makes ``n`` graph changes where
    one step at a time made about ``n**2 / 2`` (and hit the equilibrium limit). Where each
    ``(variable, axis)`` ends is remembered on the graph, so the walks of all ``n`` lengths
    together take ``n`` steps.
    """
    ends: dict[tuple[Variable, int], Variable] = fgraph.__dict__.setdefault(_SHAPE_I_ENDS, {})
    visited: list[tuple[Variable, int]] = []
    # Each step moves to an ancestor, so the graph's size bounds the walk.
    for _ in range(len(fgraph.apply_nodes) + 1):
        owner = dim.owner
        if owner is None or not isinstance(owner.op, Shape_i):
            break
        (inner,) = owner.inputs
        key = (inner, owner.op.i)
        if key in ends:
            dim = ends[key]
            break
        if not isinstance(inner.type, TensorType):
            break
        step = infer_dim(fgraph, inner, owner.op.i)
        if step is None or step is dim or key in visited:
            break
        visited.append(key)
        dim = step
    for key in visited:
        ends[key] = dim
    return dim


@node_rewriter([Shape])
def local_shape_from_infer_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``Shape()(v)`` -> a constant vector (static shape) or a ``MakeVector`` of the lengths
    inferred from ``v.owner``'s ``infer_shape``; left alone for graph inputs."""
    (var,) = node.inputs
    typ = var.type
    if not isinstance(typ, TensorType):
        return False
    if None not in typ.shape:
        return [constant(np.array(typ.shape, dtype="int64"))]
    if var.owner is None:
        return False
    dims = [infer_dim(fgraph, var, i) for i in range(typ.ndim)]
    if any(d is None for d in dims):
        return False
    return [tensor_out(MakeVector("int64")(*dims))]


def _constant_index(op: Subtensor, node: Apply) -> int | None:
    """The index of a ``Subtensor`` taking one constant integer entry, else ``None``."""
    (entry,) = op.idx_list
    if isinstance(entry, int | np.integer) and not isinstance(entry, bool):
        return int(entry)
    if isinstance(entry, TensorType) and len(node.inputs) == 2:
        index = node.inputs[1]
        if isinstance(index, Constant):
            return int(np.asarray(index.data))
    return None


@node_rewriter([Subtensor])
def local_subtensor_of_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``v.shape[k] -> Shape_i(k)(v)`` and ``MakeVector(a, b, ...)[k] -> a``, ``b``, ...

    Only for a constant index within bounds (a negative one counts from the end).
    """
    op = node.op
    # The rewriter tracks Subtensor nodes only.
    if not isinstance(op, Subtensor) or len(op.idx_list) != 1:
        return False
    vector = node.inputs[0].owner
    if vector is None:
        return False
    k = _constant_index(op, node)
    if k is None:
        return False
    out = node.outputs[0]
    if isinstance(vector.op, Shape):
        (var,) = vector.inputs
        ndim = getattr(var.type, "ndim", None)
        if not isinstance(var.type, TensorType) or ndim is None or not -ndim <= k < ndim:
            return False
        new = infer_dim(fgraph, var, k % ndim)
        if new is None:
            new = Shape_i(k % ndim)(var)
    elif isinstance(vector.op, MakeVector):
        n = len(vector.inputs)
        if not -n <= k < n:
            return False
        new = vector.inputs[k % n]
    else:
        return False
    return [new] if new.type == out.type else False


def register_shape(db: RewriteDatabase) -> None:
    """Register the shape rewrites in the ``canonicalize`` phase of ``db``.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    canonicalize = db["canonicalize"]
    canonicalize.register(
        "local_shape_i_from_infer_shape",
        local_shape_i_from_infer_shape,
        "fast_run",
        "shape",
    )
    canonicalize.register(
        "local_shape_from_infer_shape",
        local_shape_from_infer_shape,
        "fast_run",
        "shape",
    )
    canonicalize.register(
        "local_subtensor_of_shape",
        local_subtensor_of_shape,
        "fast_run",
        "shape",
    )
