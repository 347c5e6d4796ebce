"""Rebuilding graphs with some variables replaced: :func:`clone_replace`,
:func:`graph_replace` and :func:`vectorize_graph` (PyTensor's ``pytensor.graph.replace``).

:func:`vectorize_graph` asks :func:`_vectorize_node` how to give each node inputs with
extra leading (batch) dimensions. It is a :func:`functools.singledispatch` function on the
Op's class: a library registers its Ops' rules with ``@_vectorize_node.register(MyOp)``
(opweave's tensor library registers ``Elemwise``, ``DimShuffle`` and ``CAReduce``).
:mod:`opweave.tensor.blockwise` registers the rule of every other ``Op``, as PyTensor's: a
node whose tensor inputs gained batch dimensions is wrapped in a ``Blockwise`` of its Op.
Below it, the base rule (for objects that are not Ops, or before the tensor library is
imported) rebuilds a node whose inputs gained no batch dimension and refuses the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import singledispatch
from typing import Any

from opweave.graph.basic import (  # clone_replace: defined with the graph classes
    Apply,
    ReplaceTypes,
    Variable,
    _format_replace,
    clone_replace,
)
from opweave.graph.op import Op
from opweave.graph.traversal import ancestors, toposort, truncated_graph_inputs

__all__ = [
    "clone_replace",
    "graph_replace",
    "vectorize_graph",
    "vectorize_node",
]


def graph_replace(
    outputs: Variable | Sequence[Variable],
    replace: ReplaceTypes | None = None,
    *,
    strict: bool = True,
) -> Any:
    """Replace variables (inputs or intermediate results) in the graph of ``outputs``.

    Only the nodes that depend on a replaced variable are rebuilt: the rest of the graph
    is shared with the original, which is left untouched. The new variables are used as
    given (their own graphs are not searched for other replacements).

    Parameters
    ----------
    outputs
        One variable or a sequence of them.
    replace
        ``{old: new}`` (or pairs); each ``new`` is converted to its ``old``'s Type. As in
        PyTensor, ``new`` may be a number or a NumPy array: it becomes a constant.
    strict
        Raise if a replaced variable is not part of the graph of ``outputs``.

    Returns
    -------
    The new output, or list of outputs, matching the form of ``outputs``.

    Raises
    ------
    ValueError
        With ``strict``, for replacements of variables the outputs do not depend on.
    TypeError
        For malformed replacements or incompatible Types.
    """
    as_list = not isinstance(outputs, Variable)
    outs = [outputs] if isinstance(outputs, Variable) else list(outputs)
    items = _format_replace(replace, "graph_replace", values=True)
    given = {old: old.type.filter_variable(new) for old, new in items.items()}
    if strict:
        in_graph = set(ancestors(outs))
        unused = [old for old in given if old not in in_graph]
        if unused:
            names = ", ".join(str(v) for v in unused)
            raise ValueError(
                f"graph_replace: some replaced variables are not part of the graph: {names}"
            )
    # The part of the graph that depends on the replaced variables starts at ``boundary``.
    boundary = truncated_graph_inputs(outs, given)
    memo: dict[Variable, Variable] = {v: given.get(v, v) for v in boundary}
    for node in toposort(outs, blockers=boundary):
        new_inputs = [memo.get(i, i) for i in node.inputs]
        if all(n is o for n, o in zip(new_inputs, node.inputs, strict=True)):
            for out in node.outputs:
                memo.setdefault(out, out)
            continue
        new_node = node.clone_with_new_inputs(new_inputs, strict=True)
        for out, new_out in zip(node.outputs, new_node.outputs, strict=True):
            memo.setdefault(out, new_out)
    result = [memo.get(o, o) for o in outs]
    return result if as_list else result[0]


# ---------------------------------------------------------------------- vectorization


def _batch_ndim(old: Variable, new: Variable) -> int:
    """How many leading dimensions ``new`` has that ``old`` has not (0 without ``ndim``)."""
    old_ndim = getattr(old.type, "ndim", None)
    new_ndim = getattr(new.type, "ndim", None)
    if old_ndim is None or new_ndim is None:
        return 0
    return int(new_ndim) - int(old_ndim)


@singledispatch
def _vectorize_node(op: Op, node: Apply, *batched_inputs: Variable) -> Apply | Sequence[Variable]:
    """The node computing ``node``'s outputs from ``batched_inputs`` (batch axes first).

    The base rule handles nodes whose inputs gained no batch dimension: the Op is applied
    to the new inputs as it is (:mod:`opweave.tensor.blockwise` registers the rule of
    ``Op`` itself, which wraps the others in a ``Blockwise``). Register a rule for an Op
    class with ``@_vectorize_node.register(OpClass)``; it returns the new Apply node or its
    outputs.

    Raises
    ------
    NotImplementedError
        For an input with batch dimensions when no rule is registered for the Op's class.
    """
    batched = [
        i for i, (old, new) in enumerate(zip(node.inputs, batched_inputs)) if _batch_ndim(old, new)
    ]
    if batched:
        raise NotImplementedError(
            f"vectorize_graph: no vectorization rule for the Op {op} ({type(op).__name__}), "
            f"whose input(s) {batched} gained batch dimensions; register one with "
            f"opweave.graph.replace._vectorize_node.register({type(op).__name__})"
        )
    return _vectorize_not_needed(op, node, *batched_inputs)


def _vectorize_not_needed(op: Op, node: Apply, *batched_inputs: Variable) -> Sequence[Variable]:
    """A rule for Ops that broadcast over leading dimensions by themselves: ``make_node``."""
    return op.make_node(*batched_inputs).outputs


def vectorize_node(node: Apply, *batched_inputs: Variable) -> Apply | Sequence[Variable]:
    """``node`` applied to ``batched_inputs`` (which may have extra leading dimensions)."""
    return _vectorize_node(node.op, node, *batched_inputs)


def vectorize_graph(
    outputs: Variable | Sequence[Variable],
    replace: Mapping[Variable, Variable],
) -> Any:
    """Rebuild ``outputs`` for inputs that gained leading (batch) dimensions.

    ``replace`` maps variables of the graph to versions with extra dimensions on the
    left; the result computes, for each batch index, what the original graph computes
    from the corresponding slice (like :func:`numpy.vectorize`).

    Parameters
    ----------
    outputs
        One variable or a sequence of them.
    replace
        ``{variable: batched variable}``.

    Returns
    -------
    The new output, or list of outputs, matching the form of ``outputs``.

    Raises
    ------
    TypeError
        If ``replace`` maps something that is not a Variable.
    NotImplementedError
        If a node with a batched input has no vectorization rule that applies (e.g. an Op
        with a non-tensor input and no rule of its own).

    Examples
    --------
    >>> x = tensor.vector("x")
    >>> y = tensor.exp(x) / tensor.exp(x).sum()
    >>> xs = tensor.matrix("xs")
    >>> ys = vectorize_graph(y, {x: xs})  # a softmax of each row of xs
    """
    as_list = not isinstance(outputs, Variable)
    outs = [outputs] if isinstance(outputs, Variable) else list(outputs)
    if not isinstance(replace, Mapping):
        raise TypeError(
            f"vectorize_graph: replace must be a dict {{variable: batched variable}}, got "
            f"{type(replace).__name__}"
        )
    for old, new in replace.items():
        if not isinstance(old, Variable) or not isinstance(new, Variable):
            raise TypeError(
                f"vectorize_graph: replace must map Variables to Variables, got "
                f"{type(old).__name__} -> {type(new).__name__}"
            )
    inputs = truncated_graph_inputs(outs, replace.keys())
    vect: dict[Variable, Variable] = {inp: replace.get(inp, inp) for inp in inputs}
    for node in toposort(outs, blockers=inputs):
        new_inputs = [vect.get(i, i) for i in node.inputs]
        result = _vectorize_node(node.op, node, *new_inputs)
        new_outputs = result.outputs if isinstance(result, Apply) else list(result)
        for out, new_out in zip(node.outputs, new_outputs, strict=True):
            vect.setdefault(out, new_out)
    result_vars = [vect.get(o, o) for o in outs]
    return result_vars if as_list else result_vars[0]
