"""Lazy conditional evaluation: ``ifelse(condition, then_branch, else_branch)``.

:func:`ifelse` picks, with one scalar condition, either all the variables of its
``then`` branch or all those of its ``else`` branch. Unlike ``opweave.tensor.switch``
(elementwise, both sides computed), :class:`IfElse` is lazy: the linkers that run a thunk
loop (``vm``, ``cvm``, ``py``) compute the condition first, then only the branch it
selects (see :mod:`opweave.link.lazy`). The whole-graph ``c`` linker has no C code for it
and refuses such graphs (use ``cvm``).

The Op declares which inputs it needs through :meth:`IfElse.needed_inputs` (the lazy
protocol of :mod:`opweave.link.lazy`); the value it returns (a copy of the selected
branch, or the branch itself with ``as_view``) is the backends' implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.type import DisconnectedType
from opweave.tensor._typing import tensor_var
from opweave.tensor.basic import cast, zeros_like
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.type import ShapedType

__all__ = ["IfElse", "ifelse"]

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
