"""Lazy conditional evaluation: ``ifelse(condition, then_branch, else_branch)``.

:func:`ifelse` picks, with one scalar condition, either all the variables of its
``then`` branch or all those of its ``else`` branch. Unlike ``opweave.tensor.switch``
(elementwise, both sides computed), :class:`IfElse` is lazy: the linkers that run a thunk
loop (``vm``, ``cvm``, ``py``) compute the condition first, then only the branch it
selects (see :mod:`opweave.link.lazy`). The whole-graph ``c`` linker has no C code for it
and refuses such graphs (use ``cvm``).

The rewrites of ``IfElse`` nodes keep PyTensor's names: :data:`cond_make_inplace` (run by
default, in the ``inplace`` phase) and, not registered by default,
:data:`cond_merge_ifs_true`, :data:`cond_merge_ifs_false`, :data:`cond_remove_identical`,
:data:`cond_merge_random_op`, :data:`ifelse_lift_single_if_through_acceptable_ops` and
the graph rewriter :class:`CondMerge`.

The Op declares which inputs it needs through :meth:`IfElse.needed_inputs` (the lazy
protocol of :mod:`opweave.link.lazy`); the value it returns (a copy of the selected
branch, or the branch itself with ``as_view``) is the backends' implementation.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.features import ReplaceValidate
from opweave.graph.op import Op
from opweave.graph.replace import clone_replace
from opweave.graph.rewriting.graph import GraphRewriter
from opweave.graph.rewriting.node import node_rewriter
from opweave.graph.traversal import apply_depends_on
from opweave.graph.type import DisconnectedType
from opweave.tensor._typing import tensor_outs, tensor_var
from opweave.tensor.basic import Alloc, cast, zeros_like
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.math import Argmax, Dot, Max
from opweave.tensor.shape import Reshape, Shape, SpecifyShape
from opweave.tensor.subtensor import IncSubtensor, Subtensor
from opweave.tensor.type import ShapedType

__all__ = [
    "CondMerge",
    "IfElse",
    "acceptable_ops",
    "cond_make_inplace",
    "cond_merge_ifs_false",
    "cond_merge_ifs_true",
    "cond_merge_random_op",
    "cond_remove_identical",
    "ifelse",
    "ifelse_lift_single_if_through_acceptable_ops",
]

_CONTINUOUS = ("float16", "float32", "float64", "complex64", "complex128")


def _as_variable(x: Any) -> Variable:
    return x if isinstance(x, Variable) else as_tensor_variable(x)


def _same_value(a: Any, b: Any) -> bool:
    """Whether two shape entries are certainly equal (same variable or equal constants)."""
    if a is b:
        return True
    if isinstance(a, Constant) and isinstance(b, Constant):
        try:
            return bool(a.data == b.data)
        except (TypeError, ValueError):
            return False
    return False


class IfElse(Op):
    r"""Evaluate and return the ``then`` outputs or the ``else`` outputs, by a condition.

    The node's inputs are ``[condition, *then_branch, *else_branch]``, each branch
    ``n_outs`` variables long, and it has ``n_outs`` outputs. Corresponding ``then`` and
    ``else`` variables must have the same Type class, dtype and rank; an output keeps the
    static lengths on which the two branches agree.

    A condition equal to ``0`` selects the ``else`` branch, anything else the ``then``
    branch. Only the selected branch is computed by the thunk-loop linkers.

    Parameters
    ----------
    n_outs
        The number of variables in each branch.
    as_view
        Return the ``then`` values themselves (a view, ``view_map``) instead of copies;
        ``else`` values are always copied.
    name
        Shown when printing the Op.
    """

    __props__ = ("as_view", "n_outs")

    def __init__(self, n_outs: int, as_view: bool = False, name: str | None = None) -> None:
        if isinstance(n_outs, bool) or not isinstance(n_outs, int) or n_outs < 0:
            raise TypeError(f"IfElse: n_outs must be a non-negative int, got {n_outs!r}")
        if as_view:
            self.view_map = {idx: [idx + 1] for idx in range(n_outs)}
        self.as_view = bool(as_view)
        self.n_outs = n_outs
        self.name = name

    if TYPE_CHECKING:
        # Declarations only (the inherited ``Op.__call__`` runs): with ``return_list=True``
        # calling the Op gives the list of its outputs.
        @overload
        def __call__(
            self, *inputs: Any, return_list: Literal[True], **kwargs: Any
        ) -> list[Variable]: ...
        @overload
        def __call__(self, *inputs: Any, **kwargs: Any) -> Variable | list[Variable]: ...
        def __call__(self, *inputs: Any, **kwargs: Any) -> Variable | list[Variable]: ...

    def __str__(self) -> str:
        args = []
        if self.name is not None:
            args.append(self.name)
        if self.as_view:
            args.append("inplace")
        return f"if{{{','.join(args)}}}"

    # ------------------------------------------------------------------ graph

    def make_node(self, condition: Any, *true_false_branches: Any) -> Apply:
        """Check the condition (a scalar) and the branches (pairwise compatible).

        Raises
        ------
        ValueError
            If the number of branch variables is not ``2 * n_outs``.
        TypeError
            If the condition is not a scalar, or a ``then``/``else`` pair differs in Type
            class, dtype or rank.
        """
        if len(true_false_branches) != 2 * self.n_outs:
            raise ValueError(
                f"Wrong number of arguments: expected {2 * self.n_outs}, got "
                f"{len(true_false_branches)}"
            )
        condition = as_tensor_variable(condition)
        if condition.type.ndim > 0:
            raise TypeError(
                "The condition argument must be a truthy scalar value; got a "
                f"{condition.type.ndim}-d tensor {condition} of type {condition.type}"
            )
        then_branch = true_false_branches[: self.n_outs]
        else_branch = true_false_branches[self.n_outs :]
        outputs: list[Variable] = []
        new_then: list[Variable] = []
        new_else: list[Variable] = []
        for input_t, input_f in zip(then_branch, else_branch, strict=True):
            input_t = _as_variable(input_t)
            input_f = _as_variable(input_f)
            type_t, type_f = input_t.type, input_f.type
            if type(type_t) is not type(type_f):
                raise TypeError(f"Input types {type(type_t)} and {type(type_f)} do not match.")
            dtype_t, dtype_f = getattr(type_t, "dtype", None), getattr(type_f, "dtype", None)
            if dtype_t != dtype_f:
                raise TypeError(
                    "IfElse requires compatible dtypes for both branches: got "
                    f"true_branch={dtype_t}, false_branch={dtype_f}"
                )
            shape_t, shape_f = getattr(type_t, "shape", None), getattr(type_f, "shape", None)
            if shape_t is not None and shape_f is not None:
                if len(shape_t) != len(shape_f):
                    raise TypeError(
                        "IfElse requires compatible ndim values for both branches: got "
                        f"true_branch={len(shape_t)}, false_branch={len(shape_f)}"
                    )
                # Only the static lengths both branches agree on hold for the output.
                shape = tuple(t if t == f else None for t, f in zip(shape_t, shape_f, strict=True))
                # A non-array Type with a ``shape`` (a scalar's ``()``) keeps its Type.
                out_type = type_t.clone(shape=shape) if isinstance(type_t, ShapedType) else type_t
            else:
                out_type = type_t
            new_then.append(out_type.filter_variable(input_t))
            new_else.append(out_type.filter_variable(input_f))
            outputs.append(out_type())
        return Apply(self, [condition, *new_then, *new_else], outputs)

    def needed_inputs(
        self, node: Apply, inputs: Sequence[list[Any]], computed: Sequence[list[int]]
    ) -> list[int]:
        """The inputs the node needs now: the condition, then the branch it selects.

        This is the lazy protocol of :mod:`opweave.link.lazy`: the thunk-loop linkers ask
        it before running the node, compute just the inputs it names, and run the
        backend's implementation once they are all computed.

        Parameters
        ----------
        node
            The node.
        inputs, computed
            The storage cells and compute-map cells of the node's inputs.
        """
        if not computed[0][0]:
            return [0]
        n = self.n_outs
        if inputs[0][0] != 0:
            return list(range(1, 1 + n))
        return list(range(1 + n, 1 + 2 * n))

    # ------------------------------------------------------------------ shapes

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The shapes of the outputs: one lazy ``IfElse`` of the branches' lengths.

        Lengths the two branches certainly share are passed through; an output whose
        branches have no shape (a non-tensor Type) gets ``None``.
        """
        n = self.n_outs
        then_shapes, else_shapes = shapes[1 : 1 + n], shapes[1 + n :]
        if any(not isinstance(s, list | tuple) for s in (*then_shapes, *else_shapes)):
            return [None] * n
        pending_t: list[Variable] = []
        pending_f: list[Variable] = []
        plan: list[list[Any]] = []
        for ts, fs in zip(then_shapes, else_shapes, strict=True):
            entries: list[Any] = []
            for t, f in zip(ts, fs, strict=True):
                if _same_value(t, f):
                    entries.append(t)
                else:
                    entries.append(len(pending_t))
                    pending_t.append(cast(as_tensor_variable(t), "int64"))
                    pending_f.append(cast(as_tensor_variable(f), "int64"))
            plan.append(entries)
        chosen: list[Variable] = []
        if pending_t:
            name = "shape" if self.name is None else f"shape_{self.name}"
            chosen = IfElse(len(pending_t), name=name)(
                node.inputs[0], *pending_t, *pending_f, return_list=True
            )
        return [tuple(chosen[e] if isinstance(e, int) else e for e in entries) for entries in plan]

    # ------------------------------------------------------------------ derivatives

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:
        """Gradients flow into the branch the condition selects; zeros into the other.

        ``then`` inputs get ``ifelse(c, g, zeros)``, ``else`` inputs
        ``ifelse(c, zeros, g)``; the condition gets zeros (``condition + epsilon`` is
        taken to select the same branch).
        """
        condition = inputs[0]
        n = self.n_outs
        then_branch, else_branch = list(inputs[1 : 1 + n]), list(inputs[1 + n :])
        grads: list[Variable] = []
        for out_var, g in zip(then_branch, output_grads, strict=True):
            if isinstance(g.type, DisconnectedType):
                dtype = (
                    tensor_var(out_var).dtype
                    if tensor_var(out_var).dtype in _CONTINUOUS
                    else config.floatX
                )
                g = zeros_like(out_var, dtype=dtype)
            grads.append(g)
        name_t = None if self.name is None else f"{self.name}_grad_t"
        name_f = None if self.name is None else f"{self.name}_grad_f"
        zeros_t = [
            zeros_like(t, dtype=tensor_var(g).dtype)
            for t, g in zip(then_branch, grads, strict=True)
        ]
        zeros_f = [
            zeros_like(f, dtype=tensor_var(g).dtype)
            for f, g in zip(else_branch, grads, strict=True)
        ]
        then_grads: list[Variable] = IfElse(n, as_view=self.as_view, name=name_t)(
            condition, *grads, *zeros_t, return_list=True
        )
        else_grads: list[Variable] = IfElse(n, as_view=self.as_view, name=name_f)(
            condition, *zeros_f, *grads, return_list=True
        )
        condition_grad = zeros_like(condition, dtype=config.floatX)
        return [condition_grad, *then_grads, *else_grads]

    def R_op(
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[Variable | None]:
        """``ifelse(condition, then eval points, else eval points)``; a missing eval point
        of a branch input counts as zeros."""
        n = self.n_outs
        points = list(eval_points[1:])
        if all(p is None for p in points):
            return [None] * n
        filled = [
            zeros_like(x) if p is None else p for x, p in zip(inputs[1:], points, strict=True)
        ]
        op = IfElse(n, as_view=self.as_view, name=self.name)
        return list(op(inputs[0], *filled, return_list=True))


def ifelse(
    condition: Any,
    then_branch: Any | Sequence[Any],
    else_branch: Any | Sequence[Any],
    name: str | None = None,
) -> Variable | list[Variable] | tuple[Variable, ...]:
    """Build a lazy ``if``: the ``then`` values when ``condition`` is nonzero, else the
    ``else`` values.

    Parameters
    ----------
    condition
        A scalar (0-d tensor); ``0`` means false, anything else true.
    then_branch
        A variable, or a list or tuple of variables, returned when the condition is true.
    else_branch
        As many variables as ``then_branch``, each with the same dtype and rank as its
        ``then`` counterpart, returned when the condition is false.
    name
        The name of the Op (shown when printing).

    Returns
    -------
    Variable, list or tuple
        One variable when ``then_branch`` is one variable; otherwise a list or tuple
        (as ``then_branch`` is) of the selected values.

    Raises
    ------
    ValueError
        If the branches have different lengths.
    TypeError
        If the condition is not a scalar or a pair of branch variables is incompatible.
    """
    rval_type: type | None = None
    if isinstance(then_branch, list | tuple):
        rval_type = type(then_branch)
    else:
        then_branch = [then_branch]
    if not isinstance(else_branch, list | tuple):
        else_branch = [else_branch]
    if len(then_branch) != len(else_branch):
        raise ValueError(
            "The number of values on the `then` branch must match the `else` branch: got "
            f"{len(then_branch)} for `then`, and {len(else_branch)} for `else`."
        )
    op = IfElse(n_outs=len(then_branch), as_view=False, name=name)
    rval = op(condition, *then_branch, *else_branch, return_list=True)
    if rval_type is None:
        return rval[0]
    if rval_type is list:
        return list(rval)
    return tuple(rval)


# ====================================================================== rewrites


def _ifelse_op(node: Apply) -> IfElse:
    """The Op of ``node``, an ``IfElse`` node (the rewrites below track ``IfElse``)."""
    return typing.cast(IfElse, node.op)


def _branches(node: Apply) -> tuple[list[Variable], list[Variable]]:
    """The ``then`` and ``else`` inputs of an ``IfElse`` node."""
    n = _ifelse_op(node).n_outs
    return list(node.inputs[1 : 1 + n]), list(node.inputs[1 + n :])


@node_rewriter([IfElse])
def cond_make_inplace(fgraph: Any, node: Apply) -> Any:
    """``IfElse`` -> ``IfElse(as_view=True)``: the ``then`` values are returned without a
    copy (skipped for all-scalar outputs in graphs of 500 nodes or more)."""
    op = _ifelse_op(node)
    if op.as_view:
        return False
    if len(fgraph.apply_nodes) >= 500 and all(
        getattr(o.type, "ndim", -1) == 0 for o in node.outputs
    ):
        return False
    return IfElse(n_outs=op.n_outs, as_view=True, name=op.name)(*node.inputs, return_list=True)


#: The Op classes :data:`ifelse_lift_single_if_through_acceptable_ops` lifts ``IfElse``
#: through.
acceptable_ops = (
    Shape,
    SpecifyShape,
    Reshape,
    Dot,
    Max,
    Argmax,
    Subtensor,
    IncSubtensor,
    Alloc,
    Elemwise,
    DimShuffle,
    Blockwise,
)


@node_rewriter(list(acceptable_ops))
def ifelse_lift_single_if_through_acceptable_ops(fgraph: Any, main_node: Apply) -> Any:
    """``op(ifelse(c, x, y)) -> ifelse(c, op(x), op(y))`` for ``op`` in
    :data:`acceptable_ops`, when exactly one ``IfElse`` node feeds ``op``."""
    if not isinstance(main_node.op, acceptable_ops):
        return False
    if_nodes = {
        inp.owner
        for inp in main_node.inputs
        if inp.owner is not None and isinstance(inp.owner.op, IfElse)
    }
    if len(if_nodes) != 1:
        return False
    (node,) = if_nodes
    thens, elses = _branches(node)
    true_ins, false_ins = [], []
    for x in main_node.inputs:
        if x in node.outputs:
            idx = node.outputs.index(x)
            true_ins.append(thens[idx])
            false_ins.append(elses[idx])
        else:
            true_ins.append(x)
            false_ins.append(x)
    true_eval = tensor_outs(main_node.op(*true_ins, return_list=True))
    false_eval = tensor_outs(main_node.op(*false_ins, return_list=True))
    return ifelse(node.inputs[0], list(true_eval), list(false_eval))


def _merge_nested(node: Apply, take_then: bool) -> Any:
    """Replace the ``then`` (or ``else``) inputs that are outputs of an ``IfElse`` on the
    same condition by that node's ``then`` (or ``else``) input."""
    op = _ifelse_op(node)
    offset = 1 if take_then else 1 + op.n_outs
    branch = _branches(node)[0 if take_then else 1]
    new_inputs = list(node.inputs)
    changed = False
    for idx, value in enumerate(branch):
        inner = value.owner
        if inner is not None and isinstance(inner.op, IfElse) and inner.inputs[0] == node.inputs[0]:
            inner_branch = _branches(inner)[0 if take_then else 1]
            new_inputs[offset + idx] = inner_branch[inner.outputs.index(value)]
            changed = True
    if not changed:
        return False
    return op(*new_inputs, return_list=True)


@node_rewriter([IfElse])
def cond_merge_ifs_true(fgraph: Any, node: Apply) -> Any:
    """``ifelse(c, ifelse(c, a, b), y) -> ifelse(c, a, y)``."""
    return _merge_nested(node, take_then=True)


@node_rewriter([IfElse])
def cond_merge_ifs_false(fgraph: Any, node: Apply) -> Any:
    """``ifelse(c, x, ifelse(c, a, b)) -> ifelse(c, x, b)``."""
    return _merge_nested(node, take_then=False)


def _merged_ifelse(first: Apply, second: Apply) -> list[Variable]:
    """One ``IfElse`` computing the outputs of ``first`` then those of ``second``."""
    t1, f1 = _branches(first)
    t2, f2 = _branches(second)
    name = f"{_ifelse_op(first).name or '?'}&{_ifelse_op(second).name or '?'}"
    op = IfElse(n_outs=len(t1) + len(t2), as_view=False, name=name)
    return op(first.inputs[0], *t1, *t2, *f1, *f2, return_list=True)


class CondMerge(GraphRewriter):
    """Merges ``IfElse`` nodes on the same condition (the first one in topological order
    with each later one that does not depend on it) into one."""

    def add_requirements(self, fgraph: Any) -> None:
        """Attach a ReplaceValidate."""
        fgraph.attach_feature(ReplaceValidate())

    def apply(self, fgraph: Any) -> bool:
        """Merge; return whether a merge was made."""
        cond_nodes = [n for n in fgraph.toposort() if isinstance(n.op, IfElse)]
        if len(cond_nodes) < 2:
            return False
        merging = cond_nodes[0]
        merged = False
        for proposal in cond_nodes[1:]:
            if merging not in fgraph.apply_nodes or proposal not in fgraph.apply_nodes:
                continue
            if proposal.inputs[0] != merging.inputs[0] or apply_depends_on(proposal, merging):
                continue
            new_outs = _merged_ifelse(merging, proposal)
            old_outs = [*merging.outputs, *proposal.outputs]
            fgraph.replace_all_validate(
                list(zip(old_outs, new_outs, strict=True)), reason="cond_merge"
            )
            merged = True
            merging = new_outs[0].owner
        return merged


@node_rewriter([IfElse])
def cond_remove_identical(fgraph: Any, node: Apply) -> Any:
    """Outputs of an ``IfElse`` with the same ``then`` and ``else`` inputs as an earlier
    output are computed once."""
    thens, elses = _branches(node)
    first_of: dict[int, int] = {}
    for j in range(len(thens)):
        for i in range(j):
            if i not in first_of and thens[i] == thens[j] and elses[i] == elses[j]:
                first_of[j] = i
                break
    if not first_of:
        return False
    kept = [i for i in range(len(thens)) if i not in first_of]
    position = {i: k for k, i in enumerate(kept)}
    old_op = _ifelse_op(node)
    op = IfElse(n_outs=len(kept), as_view=old_op.as_view, name=old_op.name)
    new_outs = op(
        node.inputs[0], *[thens[i] for i in kept], *[elses[i] for i in kept], return_list=True
    )
    return [new_outs[position[first_of.get(i, i)]] for i in range(len(thens))]


@node_rewriter(None)
def cond_merge_random_op(fgraph: Any, main_node: Apply) -> Any:
    """A node fed by two independent ``IfElse`` nodes on the same condition is rebuilt
    on one merged ``IfElse``."""
    if isinstance(main_node.op, IfElse):
        return False
    cond_nodes = list(
        dict.fromkeys(
            inp.owner
            for inp in main_node.inputs
            if inp.owner is not None and isinstance(inp.owner.op, IfElse)
        )
    )
    if len(cond_nodes) < 2:
        return False
    merging = cond_nodes[0]
    for proposal in cond_nodes[1:]:
        if (
            proposal.inputs[0] == merging.inputs[0]
            and not apply_depends_on(proposal, merging)
            and not apply_depends_on(merging, proposal)
        ):
            new_outs = _merged_ifelse(merging, proposal)
            pairs = list(zip([*merging.outputs, *proposal.outputs], new_outs, strict=True))
            return clone_replace(main_node.outputs, replace=pairs)
    return False
