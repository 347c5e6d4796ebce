"""Rewrites that move matrix products out of a :class:`~opweave.scan.op.Scan` body.

A product per step of small matrices runs far below what the BLAS reaches on one large
product of the same total size. Two shapes of body are common enough to earn a rewrite:

* ``scan_push_out_seq_dot``: ``dot(x_t, W)``, a sequence's step times a non-sequence (the
  input projection of a recurrent network), is one product of the whole sequence, computed
  before the loop: ``dot(x.reshape(T * a, b), W).reshape(T, a, m)`` enters as a new
  sequence;
* ``scan_push_out_dot_accumulators``: a state that only accumulates, ``acc + dot(u_t.T,
  v_t)`` or ``acc + sum(v_t, axis=0)``, and of which only the last value is read (what the
  gradient of a non-sequence looks like in a backward loop), is computed after the loop
  from the stacked steps: ``acc_0 + dot(U.reshape(T * a, m).T, V.reshape(T * a, n))``.
  PyTensor's ``scan_pushout_dot1`` does the same for its gradient loops. A ``v_t`` the body
  computes becomes a per-step output (stacked once, however many accumulators read it);
  a sequence is read as it is.

Neither applies to a while loop (its number of steps is known only when it ends). The sums
are taken in another order than step by step, so results agree to rounding, not bit for
bit.
"""

from __future__ import annotations

from dataclasses import replace as dc_replace
from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.replace import clone_replace
from opweave.graph.rewriting import node_rewriter
from opweave.graph.traversal import ancestors, io_toposort
from opweave.scalar.basic import Add
from opweave.scan.op import Scan
from opweave.scan.save_mem import from_end, tail_start
from opweave.tensor._typing import tensor_type_of, tensor_var
from opweave.tensor.basic import alloc
from opweave.tensor.blas import Dot, dot
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.math import minimum
from opweave.tensor.reductions import Sum
from opweave.tensor.shape import reshape, specify_shape
from opweave.tensor.variable import TensorVariable

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph

__all__ = ["scan_push_out_dot_accumulators", "scan_push_out_seq_dot"]


def _fresh(v: Variable) -> Variable:
    return v.type(name=v.name)


def _clients(op: Scan) -> dict[Variable, list[Apply]]:
    found: dict[Variable, list[Apply]] = {}
    for n in io_toposort(op.inner_inputs, op.inner_outputs):
        for i in n.inputs:
            found.setdefault(i, []).append(n)
    return found


# ---------------------------------------------------------------------- sequence products


@node_rewriter([Scan])
def scan_push_out_seq_dot(fgraph: FunctionGraph, node: Apply) -> Any:
    """Compute ``dot(x_t, W)`` (``x`` a sequence, ``W`` a non-sequence) for every step at
    once, before the loop."""
    op: Scan = node.op  # type: ignore[assignment]
    if op.info.as_while:
        return None
    inner = op.split_inner_inputs(op.inner_inputs)
    outer = op.split_outer_inputs(node.inputs)
    seq_at = {v: i for i, v in enumerate(inner["seqs"])}
    non_seq_at = {v: i for i, v in enumerate(inner["non_seqs"])}
    products = [
        n
        for n in io_toposort(op.inner_inputs, op.inner_outputs)
        if isinstance(n.op, Dot)
        and n.inputs[0] in seq_at
        and n.inputs[1] in non_seq_at
        and tensor_type_of(n.inputs[1]).ndim == 2
    ]
    if not products:
        return None
    new_inner, new_outer = [], []
    for n in products:
        xs = outer["seqs"][seq_at[n.inputs[0]]]
        w = outer["non_seqs"][non_seq_at[n.inputs[1]]]
        if xs.type.ndim == 2:  # vector steps: (T, b) . (b, m)
            stacked = dot(xs, w)
        else:  # matrix steps: one (T * a, b) . (b, m) product
            steps, rows, cols = xs.shape[0], xs.shape[1], xs.shape[2]
            flat = dot(reshape(xs, (steps * rows, cols)), w)
            stacked = reshape(flat, (steps, rows, w.shape[1]))
        new_inner.append(_fresh(n.outputs[0]))
        new_outer.append(stacked.astype(tensor_type_of(n.outputs[0]).dtype))
    inner_outputs = clone_replace(
        op.inner_outputs, replace={n.outputs[0]: v for n, v in zip(products, new_inner)}
    )
    n_seqs = op.info.n_seqs
    info = dc_replace(op.info, n_seqs=n_seqs + len(products))
    new_op = op.clone_with(
        [*inner["seqs"], *new_inner, *op.inner_inputs[n_seqs:]], inner_outputs, info
    )
    return new_op(
        node.inputs[0], *outer["seqs"], *new_outer, *node.inputs[1 + n_seqs :], return_list=True
    )


# ---------------------------------------------------------------------- accumulators


def _through_identity_shuffles(v: Variable) -> Variable:
    """``v`` without the DimShuffles above it whose composition is the identity (an
    ``expand_dims`` undone by a ``squeeze``, say)."""
    found, core = v, v
    order: list[Any] = list(range(tensor_type_of(v).ndim))
    while core.owner is not None and isinstance(core.owner.op, DimShuffle):
        inner_order: list[Any] = list(core.owner.op.new_order)
        order = [a if a == "x" else inner_order[a] for a in order]
        core = core.owner.inputs[0]
        if order == list(range(tensor_type_of(core).ndim)):
            found = core
    return found


def _is_transpose(v: Variable) -> bool:
    return v.owner is not None and (
        isinstance(v.owner.op, DimShuffle) and tuple(v.owner.op.new_order) == (1, 0)
    )


class _Accumulation:
    """One state of the body that is ``tap + term`` (see the module docstring)."""

    def __init__(self, index: int, term: Variable, kind: str, factors: list[Variable]) -> None:
        self.index = index  # the state's position
        self.term = term  # what is added per step
        self.kind = kind  # "dot": dot(u.T, v); "sum": sum(v, axis=0)
        self.factors = factors  # [u, v] or [v]


def _accumulation(
    op: Scan, index: int, tap: Variable, new: Variable, clients: dict[Variable, list[Apply]]
) -> _Accumulation | None:
    if new.owner is None or tap in op.inner_outputs or len(clients.get(tap, ())) != 1:
        return None
    add = new.owner
    if not isinstance(getattr(add.op, "scalar_op", None), Add):
        return None
    if len(add.inputs) != 2 or tap not in add.inputs:
        return None
    term = add.inputs[1] if add.inputs[0] is tap else add.inputs[0]
    term_type, tap_type = tensor_type_of(term), tensor_type_of(tap)
    if term is tap or term_type.dtype != tap_type.dtype or term_type.ndim != tap_type.ndim:
        return None
    if any(a == 1 and b != 1 for a, b in zip(term_type.shape, tap_type.shape, strict=True)):
        return None  # the term broadcasts: its steps do not stack to the state's shape
    core = _through_identity_shuffles(term)
    if core.owner is None:
        return None
    if isinstance(core.owner.op, Dot):
        left, right = core.owner.inputs
        if left.owner is not None and _is_transpose(left) and tensor_type_of(right).ndim == 2:
            return _Accumulation(index, term, "dot", [left.owner.inputs[0], right])
    if isinstance(core.owner.op, Sum) and core.owner.op.axis == (0,):
        (summed,) = core.owner.inputs
        if tensor_type_of(summed).ndim >= 1:
            return _Accumulation(index, term, "sum", [summed])
    return None


def _stacked_total(acc: _Accumulation, stacks: list[Any], initial: Any) -> TensorVariable:
    """The sum over the steps of the accumulation's term, from its factors' stacks (the
    state's ``initial`` buffer gives the shape, which a stack of no steps does not have)."""
    rows = stacks[0].shape[0] * stacks[0].shape[1]
    if acc.kind == "sum":
        (vs,) = stacks
        shape = [initial.shape[i] for i in range(1, initial.type.ndim)]
        total = reshape(vs, (rows, *shape)).sum(axis=0)
    else:
        us, vs = stacks
        total = dot(reshape(us, (rows, initial.shape[1])).T, reshape(vs, (rows, initial.shape[2])))
    return tensor_var(total.astype(tensor_type_of(acc.term).dtype))


@node_rewriter([Scan])
def scan_push_out_dot_accumulators(fgraph: FunctionGraph, node: Apply) -> Any:
    """Compute the accumulating states of which only the last value is read after the loop,
    from the stacked steps (one product instead of one per step)."""
    op: Scan = node.op  # type: ignore[assignment]
    info = op.info
    if info.as_while:
        return None
    inner_in = op.split_inner_inputs(op.inner_inputs)
    inner_out = op.split_inner_outputs(op.inner_outputs)
    clients = _clients(op)
    taps_of = op.taps_per_state()
    found: list[_Accumulation] = []
    for j, taps in enumerate(info.state_taps):
        if taps != (-1,) or info.kept(j) < 1 or not _reads_only_the_last(fgraph, node.outputs[j]):
            continue
        acc = _accumulation(op, j, taps_of[j][0], inner_out["states"][j], clients)
        if acc is not None:
            found.append(acc)
    if not found:
        return None
    dropped = {acc.index for acc in found}
    dropped_taps = {taps_of[j][0] for j in dropped}
    seq_at = {v: i for i, v in enumerate(inner_in["seqs"])}
    # every factor is a sequence's step or a body value that needs none of the dropped taps
    kept_outs = [o for j, o in enumerate(inner_out["states"]) if j not in dropped]
    new_nits: list[Variable] = []
    for acc in found:
        for f in acc.factors:
            if f not in seq_at and f not in new_nits:
                if f.owner is None:
                    return None  # a tap, a non-sequence or a constant: not per-step data
                new_nits.append(f)
    if dropped_taps & set(ancestors([*kept_outs, *new_nits, *inner_out["nits"]])):
        return None
    states = [j for j in range(info.n_states) if j not in dropped]
    new_outs = op.keeping(node, states, list(range(info.n_nit)), new_nits)
    outer = op.split_outer_inputs(node.inputs)
    n_steps = node.inputs[0]
    n_kept = len(states)
    n_nit = info.n_nit
    stack_of = {f: new_outs[n_kept + n_nit + k] for k, f in enumerate(new_nits)}
    for v, i in seq_at.items():
        # the loop refused a sequence shorter than n_steps (or a negative n_steps); so does
        # its slice, also where nothing is left to loop over
        seq = outer["seqs"][i]
        steps = specify_shape(seq[:n_steps], (n_steps, *([None] * (seq.type.ndim - 1))))
        stack_of.setdefault(v, steps)
    replacements: dict[Variable, Variable] = {}
    for j, out in zip(states, new_outs[:n_kept], strict=True):
        replacements[node.outputs[j]] = out
    for k in range(n_nit):
        replacements[node.outputs[info.n_states + k]] = new_outs[n_kept + k]
    for k in range(info.n_shared):
        replacements[node.outputs[info.n_states + n_nit + k]] = new_outs[
            n_kept + n_nit + len(new_nits) + k
        ]
    for acc in found:
        initial = outer["states"][acc.index]
        total = _stacked_total(acc, [stack_of[f] for f in acc.factors], initial)
        last = initial[-1] + total
        # the entries the node returned (only the last is read): as many, all the last
        rows = minimum(n_steps + 1, info.kept(acc.index))
        shape = [last.shape[i] for i in range(tensor_type_of(last).ndim)]
        old = node.outputs[acc.index]
        replacements[old] = old.type.filter_variable(alloc(last, rows, *shape))
    return replacements


def _reads_only_the_last(fgraph: FunctionGraph, out: Variable) -> bool:
    """Whether every reader of ``out`` reads its last entry only: ``out[-1]``, or
    ``out[s:][-1]`` (a state's entries after its initial ones, say)."""
    clients = fgraph.clients.get(out, [])
    if not clients:
        return False
    for client, idx in clients:
        if from_end(client, idx) == 1:
            continue
        if tail_start(client, idx) is None:
            return False
        inner = fgraph.clients.get(client.outputs[0], [])
        if not inner or any(from_end(c, i) != 1 for c, i in inner):
            return False
    return True
