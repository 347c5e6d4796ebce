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

``FAST_COMPILE`` runs the same three, once over the graph, in their own phase
``fast_compile_shape`` (position 0.1, tags ``fast_compile``, ``shape``), as PyTensor's
``FAST_COMPILE`` answers shapes through its ``ShapeFeature``: ``x.shape`` of a statically
shaped ``x`` is then a constant there too, which also fixes the order in which
:func:`~opweave.graph.traversal.graph_inputs` meets the random generators of a graph
such as ``uniform(size=x.shape, rng=r) + x`` (PyMC sets their states in that order).

Where ``infer_shape`` is not defined, raises, or returns something that is not an
integer scalar, the node is left alone. As in PyTensor, a shape answered this way does
not check at run time that the result could have been computed (e.g. that the inputs of
an ``Elemwise`` have compatible lengths).

:class:`ShapeFeature` (with :class:`ShapeOptimizer`, which attaches it) keeps the
symbolic shape of every variable of a graph in ``fgraph.shape_feature.shape_of``, for
rewrites that ask for shapes (PyTensor's feature and attributes).

Two ``Reshape`` rewrites under PyTensor's names, not held by the standard databases:
``local_useless_expand_dims_in_reshape`` (``reshape(expand_dims(x), s) -> reshape(x, s)``,
keeping a transposition) and ``local_fuse_squeeze_reshape``
(``reshape(squeeze(x), s) -> reshape(x, s)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable, equal_computations
from opweave.graph.features import Feature
from opweave.graph.fg import AlreadyThere
from opweave.graph.rewriting import GraphRewriter, copy_stack_trace, in2out, node_rewriter
from opweave.scalar import ScalarType
from opweave.tensor._typing import tensor_out, tensor_type_of, tensor_var
from opweave.tensor.basic import MakeVector, cast, tensor_from_scalar
from opweave.tensor.constructors import constant
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.shape import Reshape, Shape, Shape_i
from opweave.tensor.subtensor import Subtensor
from opweave.tensor.type import ShapedType, TensorType

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = [
    "ShapeFeature",
    "ShapeOptimizer",
    "UnShapeOptimizer",
    "infer_dim",
    "local_fuse_squeeze_reshape",
    "local_shape_from_infer_shape",
    "local_shape_i_from_infer_shape",
    "local_subtensor_of_shape",
    "local_useless_expand_dims_in_reshape",
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
    var: Variable = (
        tensor_out(tensor_from_scalar(entry)) if isinstance(entry.type, ScalarType) else entry
    )
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
    if not isinstance(var.type, ShapedType):
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
        if not isinstance(inner.type, ShapedType):
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
    if not isinstance(typ, ShapedType):
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
        if not isinstance(var.type, ShapedType) or ndim is None or not -ndim <= k < ndim:
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


@node_rewriter([Reshape])
def local_useless_expand_dims_in_reshape(
    fgraph: FunctionGraph, node: Apply
) -> list[Variable] | bool:
    """``reshape(x.dimshuffle(order with "x" entries), s) -> reshape(x.dimshuffle(order
    without them), s)`` (PyTensor's name): a reshape does not need the new length-1
    dimensions; a transposition of the kept ones stays."""
    if not isinstance(node.op, Reshape):
        return False
    expanded, new_shape = node.inputs
    owner = expanded.owner
    if owner is None or not isinstance(owner.op, DimShuffle) or not owner.op.augment:
        return False
    x = tensor_var(owner.inputs[0])
    kept = tuple(k for k in owner.op.new_order if k != "x")
    if kept != tuple(range(x.type.ndim)):
        x = x.dimshuffle(kept)
    out = x.reshape(new_shape)
    copy_stack_trace(node.outputs[0], out)
    return [out]


@node_rewriter([Reshape])
def local_fuse_squeeze_reshape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``reshape(squeeze(x), s) -> reshape(x, s)`` (PyTensor's name): a reshape subsumes a
    DimShuffle that only drops dimensions of length 1, in order."""
    if not isinstance(node.op, Reshape):
        return False
    squeezed, new_shape = node.inputs
    owner = squeezed.owner
    if owner is None or not isinstance(owner.op, DimShuffle) or not owner.op.is_squeeze:
        return False
    out = tensor_var(owner.inputs[0]).reshape(new_shape)
    copy_stack_trace(node.outputs[0], out)
    return [out]


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
    db.register(
        "fast_compile_shape",
        in2out(
            local_shape_from_infer_shape,
            local_shape_i_from_infer_shape,
            local_subtensor_of_shape,
            name="fast_compile_shape",
        ),
        "fast_compile",
        "shape",
        position=0.1,
    )


# ---------------------------------------------------------------------- ShapeFeature


#: A symbolic shape: one 0-d int64 tensor per dimension, or ``None`` (no shape).
SymbolicShape = tuple[Variable, ...] | None


class ShapeFeature(Feature):
    """Keeps the symbolic shape of every variable of a graph (PyTensor's feature).

    Attached to a :class:`~opweave.graph.fg.FunctionGraph` (``features=[ShapeFeature()]``
    or by :class:`ShapeOptimizer`), it sets ``fgraph.shape_feature`` to itself and fills
    :attr:`shape_of`: for each variable, a tuple of 0-d int64 tensors (an int64
    constant where the length is known statically or inferred as constant, the entry of
    its Op's ``infer_shape`` where it can be computed from the inputs' shapes, else
    ``Shape_i(i)(var)``). Nodes imported later are added, and a replaced variable's
    known shape carries over to its replacement. The shape graphs are not part of the
    function graph.

    Attributes
    ----------
    shape_of
        ``{variable: tuple of 0-d int64 tensors, or None for variables without a shape}``.
    shape_of_reverse_index
        ``{variable: set of variables whose shape reads Shape_i of it}``.
    scheduled
        Kept for PyTensor's attribute (always empty).
    lscalar_one
        The int64 constant 1.
    """

    def __init__(self) -> None:
        self.fgraph: FunctionGraph | None = None
        self.shape_of: dict[Variable, SymbolicShape] = {}
        self.shape_of_reverse_index: dict[Variable, set[Variable]] = {}
        self.scheduled: dict[Apply, Variable] = {}
        self.lscalar_one = _int64_constant(1)

    # ------------------------------------------------------------------ feature protocol

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Become ``fgraph.shape_feature`` and record the shapes of the whole graph."""
        if getattr(fgraph, "shape_feature", None) is not None:
            raise AlreadyThere("the graph already has a ShapeFeature")
        fgraph.shape_feature = self  # type: ignore[attr-defined]
        self.fgraph = fgraph
        self.shape_of = {}
        self.shape_of_reverse_index = {}
        self.scheduled = {}
        for var in fgraph.inputs:
            self.init_r(var)
        for node in fgraph.toposort():
            self.on_import(fgraph, node, "on_attach")

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Forget the shapes and leave ``fgraph``."""
        self.shape_of = {}
        self.shape_of_reverse_index = {}
        self.scheduled = {}
        self.fgraph = None
        if getattr(fgraph, "shape_feature", None) is self:
            del fgraph.shape_feature  # type: ignore[attr-defined]

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Record the shapes of ``node``'s outputs from its Op's ``infer_shape``."""
        if all(out in self.shape_of for out in node.outputs):
            return
        for inp in node.inputs:
            self.init_r(inp)
        shapes = self.get_node_infer_shape(node)
        for out, shape in zip(node.outputs, shapes, strict=True):
            if out not in self.shape_of:
                self.set_shape(out, shape)

    def on_change_input(
        self,
        fgraph: FunctionGraph,
        node: Apply | str,
        i: int,
        r: Variable,
        new_r: Variable,
        reason: str | None = None,
    ) -> None:
        """Give ``new_r`` what is known of ``r``'s shape, and point shapes reading
        ``Shape_i(r)`` to ``new_r``'s shape."""
        self.init_r(new_r)
        self.init_r(r)
        self.update_shape(new_r, r)
        for var in list(self.shape_of_reverse_index.pop(r, ())):
            shape = self.shape_of.get(var)
            if shape is None:
                continue
            self.set_shape(var, [self._redirect(entry, r, new_r) for entry in shape], True)

    def clone(self) -> ShapeFeature:
        """A new, unattached ShapeFeature."""
        return type(self)()

    # ------------------------------------------------------------------ shapes

    def shape_ir(self, i: int, r: Variable) -> Variable:
        """The length of dimension ``i`` of ``r``: a constant when static, else
        ``Shape_i(i)(r)``."""
        length = tensor_type_of(r).shape[i]
        return _int64_constant(length) if length is not None else Shape_i(i)(r)

    def shape_tuple(self, r: Variable) -> SymbolicShape:
        """The shape of ``r`` from its Type alone (``None`` for variables of a Type without
        a shape: tensors, sparse matrices and device arrays have one)."""
        if not isinstance(r.type, ShapedType):
            return None
        return tuple(self.shape_ir(i, r) for i in range(r.type.ndim))

    def default_infer_shape(
        self, fgraph: FunctionGraph | None, node: Apply, i_shapes: Sequence[SymbolicShape]
    ) -> list[SymbolicShape]:
        """The outputs' shapes from their Types alone."""
        return [self.shape_tuple(out) for out in node.outputs]

    def get_node_infer_shape(self, node: Apply) -> list[SymbolicShape]:
        """The outputs' shapes from ``node.op.infer_shape``; those from their Types where
        it is not defined or fails."""
        i_shapes = [self.shape_of.get(inp) for inp in node.inputs]
        infer = getattr(node.op, "infer_shape", None)
        fallback = self.default_infer_shape(self.fgraph, node, i_shapes)
        if infer is None:
            return fallback
        try:
            shapes = infer(self.fgraph, node, i_shapes)
        except Exception:  # not defined (MethodNotDefined) or not for these inputs
            return fallback
        if not isinstance(shapes, list | tuple) or len(shapes) != len(node.outputs):
            return fallback
        known = self.fgraph.variables if self.fgraph is not None else set()
        result: list[SymbolicShape] = []
        for out, shape, default in zip(node.outputs, shapes, fallback, strict=True):
            result.append(self._checked_shape(out, shape, default, set(node.outputs), known))
        return result

    def _checked_shape(
        self,
        out: Variable,
        shape: Any,
        default: SymbolicShape,
        outputs: set[Variable],
        known: set[Variable],
    ) -> SymbolicShape:
        """``shape`` with each entry an int64 scalar not computed from ``outputs``; the
        entry of ``default`` where it is not."""
        if default is None or not isinstance(shape, list | tuple) or len(shape) != len(default):
            return default
        entries: list[Variable] = []
        for entry, fallback in zip(shape, default, strict=True):
            dim = _as_int64_scalar(entry)
            if dim is None or isinstance(fallback, Constant) or _depends_on(dim, outputs, known):
                dim = fallback
            entries.append(dim)
        return tuple(entries)

    def unpack(self, s_i: Any, var: Variable) -> Variable:
        """``s_i`` (an int or an integer scalar) as a 0-d int64 tensor.

        Raises
        ------
        TypeError
            If ``s_i`` is not an integer or an integer scalar variable.
        """
        dim = _as_int64_scalar(s_i)
        if dim is None:
            raise TypeError(
                f"a shape entry of {var} must be an int or an integer scalar, got {s_i!r}"
            )
        return dim

    def set_shape(self, r: Variable, s: Sequence[Any] | None, override: bool = False) -> None:
        """Record ``s`` as the shape of ``r`` (merged with what is known unless
        ``override``).

        Raises
        ------
        ValueError
            If ``s`` does not have one entry per dimension of ``r``.
        """
        if r in self.shape_of and not override:
            self.update_shape(r, r, s)
            return
        if s is None:
            self.shape_of[r] = None
            return
        ndim = getattr(r.type, "ndim", None)
        if ndim is not None and len(s) != ndim:
            raise ValueError(f"the shape of {r} needs {ndim} entries, got {len(s)}")
        static = getattr(r.type, "shape", (None,) * len(s))
        entries = tuple(
            _int64_constant(static[i]) if static[i] is not None else self.unpack(entry, r)
            for i, entry in enumerate(s)
        )
        self.shape_of[r] = entries
        for entry in entries:
            source = _shape_i_source(entry)
            if source is not None:
                self.shape_of_reverse_index.setdefault(source, set()).add(r)

    def update_shape(
        self, r: Variable, other_r: Variable, other: Sequence[Any] | None = None
    ) -> None:
        """Merge into ``r``'s shape what ``other`` (default: ``other_r``'s recorded shape)
        says of it, as PyTensor does: per dimension, ``r``'s entry is kept where it is a
        constant or already computed in the graph, or where ``other`` only says
        ``Shape_i`` of ``r`` or ``other_r``; ``other``'s entry is taken elsewhere."""
        other = self.shape_of.get(other_r) if other is None else other
        mine = self.shape_of.get(r)
        if other is None or mine is None or len(other) != len(mine):
            return
        known = self.fgraph.variables if self.fgraph is not None else set()
        merged = []
        for own, theirs in zip(mine, other, strict=True):
            theirs = self.unpack(theirs, r)
            keep = (
                isinstance(own, Constant) or own in known or _shape_i_source(theirs) in (r, other_r)
            )
            merged.append(own if keep else theirs)
        self.set_shape(r, merged, override=True)

    def set_shape_i(self, r: Variable, i: int, s_i: Any) -> None:
        """Record ``s_i`` as the length of dimension ``i`` of ``r``."""
        self.init_r(r)
        shape = list(self.shape_of[r] or ())
        shape[i] = self.unpack(s_i, r)
        self.set_shape(r, shape, override=True)

    def init_r(self, r: Variable) -> None:
        """Record the Type's shape of ``r`` if nothing is known of it yet."""
        if r not in self.shape_of:
            self.set_shape(r, self.shape_tuple(r))

    def get_shape(self, var: Variable, idx: int) -> Variable:
        """The length of dimension ``idx`` of ``var`` (a 0-d int64 tensor)."""
        self.init_r(var)
        shape = self.shape_of[var]
        if shape is None:
            raise TypeError(f"{var} (type {var.type}) has no shape")
        return shape[idx]

    def make_vector_shape(self, r: Variable) -> Variable:
        """The shape of ``r`` as one int64 vector."""
        self.init_r(r)
        shape = self.shape_of[r]
        if shape is None:
            raise TypeError(f"{r} (type {r.type}) has no shape")
        return tensor_out(MakeVector("int64")(*shape))

    def same_shape(
        self, x: Variable, y: Variable, dim_x: int | None = None, dim_y: int | None = None
    ) -> bool:
        """True if the recorded shapes of ``x`` and ``y`` (or of one dimension of each)
        are computed the same way (equal constants, or the same graph)."""
        self.init_r(x)
        self.init_r(y)
        sx, sy = self.shape_of[x], self.shape_of[y]
        if sx is None or sy is None:
            return False
        if dim_x is not None:
            sx = (sx[dim_x],)
        if dim_y is not None:
            sy = (sy[dim_y],)
        if len(sx) != len(sy):
            return False
        for a, b in zip(sx, sy, strict=True):
            if a is b:
                continue
            if isinstance(a, Constant) and isinstance(b, Constant):
                if int(a.data) != int(b.data):
                    return False
            elif not equal_computations([a], [b]):
                return False
        return True

    @staticmethod
    def _redirect(entry: Variable, old: Variable, new: Variable) -> Variable:
        """``entry``, with ``Shape_i(i)(old)`` read as ``Shape_i(i)(new)``."""
        if _shape_i_source(entry) is not old:
            return entry
        assert entry.owner is not None and isinstance(entry.owner.op, Shape_i)  # a Shape_i output
        return Shape_i(entry.owner.op.i)(new)


def _shape_i_source(entry: Variable) -> Variable | None:
    """The variable ``entry`` is ``Shape_i(i)`` of, or ``None``."""
    owner = entry.owner
    if owner is not None and isinstance(owner.op, Shape_i):
        return owner.inputs[0]
    return None


class ShapeOptimizer(GraphRewriter):
    """A graph rewriter that only attaches a :class:`ShapeFeature` (PyTensor's)."""

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach a :class:`ShapeFeature`."""
        fgraph.attach_feature(ShapeFeature())

    def apply(self, fgraph: FunctionGraph) -> None:
        """Nothing more: the feature keeps the shapes."""


class UnShapeOptimizer(GraphRewriter):
    """A graph rewriter that removes the :class:`ShapeFeature` of a graph (PyTensor's)."""

    def apply(self, fgraph: FunctionGraph) -> None:
        """Detach ``fgraph.shape_feature`` if there is one."""
        feature = getattr(fgraph, "shape_feature", None)
        if feature is not None:
            fgraph.remove_feature(feature)
