"""Rewrites of :class:`~opweave.scan.op.Scan` nodes, as PyTensor's ``pytensor.scan.rewriting``.

* ``scan_push_out_non_seq``: a computation of the body that depends only on non-sequences
  (and constants) runs once, before the loop, and enters it as a new non-sequence;
* ``remove_constants_and_unused_inputs_scan``: sequences and non-sequences the body does not
  read are dropped, constant non-sequences are put into the body, and an outer variable
  given twice (as two sequences or two non-sequences) enters once;
* ``scan_remove_unused_outputs``: per-step outputs nobody reads, and states nobody reads
  whose values no other kept output needs, are no longer computed;
* ``scan_merge``: two loops over the same number of steps (same direction, truncation and
  mode, no ``until``, no shared state), neither reading the other's outputs, become one;
* ``scan_save_mem`` (:mod:`opweave.scan.save_mem`): an output of which only the last
  entries are read keeps only those;
* ``scan_push_out_seq_dot`` and ``scan_push_out_dot_accumulators``
  (:mod:`opweave.scan.push_out_dot`): a sequence's step times a non-sequence is one
  product before the loop, and a state that only accumulates products (or sums) of
  per-step values, read at its end, is one product after it.

Where they run (see :func:`register_scan_rewrites`), each an entry of its own: before
canonicalization ``scan_push_out_non_seq`` (position 0.05), ``scan_push_out_seq_dot``
(0.055) then ``remove_constants_and_unused_inputs_scan`` (0.06); after stabilization
``scan_merge`` (1.6), the unused inputs again (1.601, also tagged
``remove_constants_and_unused_inputs_scan``), ``scan_remove_unused_outputs`` (1.602),
``scan_save_mem`` (1.61), ``scan_push_out_dot_accumulators`` (1.62) and the unused inputs
a last time (1.63). Every entry carries the tags ``fast_run`` and ``scan`` and its
own name, so ``mode.excluding("scan_merge")`` turns one off and ``mode.excluding("scan")``
all of them.

``scan_inner_mode`` (position 0.01, tags ``fast_run``, ``fast_compile``, ``scan``) gives a
Scan built without a ``mode`` the mode of the function being compiled (when that mode names
its linker: ``"vm"``, ``"cvm"``, ...): the body is then compiled, once per Scan Op, the first
time the loop runs, with the same linker (C nodes in the body of a ``cvm`` function, Python
in a ``vm`` one) and rewritten with the same rewrite database and query as the outer graph.
``scan_initial_buffer`` (0.02, same tags) gives a loop its initial states directly when
their buffers (``set_subtensor(AllocEmpty(...)[:taps], init)``, PyTensor's layout, which
code inspecting Scan nodes reads) are written whole, so that no buffer is allocated and
copied.

``scan_eqopt1`` and ``scan_eqopt2`` (PyTensor's names) are databases of the Scan rewrites
of the two groups (before canonicalization, after stabilization), each entry tagged
``fast_run``, ``scan`` and its name, for registering into a database of one's own
(``my_db.register("scan_eqopt1", scan_eqopt1, "fast_run", "scan")``). Each access
builds a new database: registering into one changes nothing elsewhere.
"""

from __future__ import annotations

from dataclasses import replace as dc_replace
from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.replace import clone_replace
from opweave.graph.rewriting import node_rewriter
from opweave.graph.rewriting.db import EquilibriumDB
from opweave.graph.traversal import ancestors, io_toposort
from opweave.scan.initial_buffer import scan_initial_buffer
from opweave.scan.op import Scan
from opweave.scan.push_out_dot import scan_push_out_dot_accumulators, scan_push_out_seq_dot
from opweave.scan.save_mem import scan_save_mem

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = [
    "register_scan_rewrites",
    "remove_constants_and_unused_inputs_scan",
    "scan_inner_mode",
    "scan_merge",
    "scan_push_out_dot_accumulators",
    "scan_push_out_non_seq",
    "scan_push_out_seq_dot",
    "scan_remove_unused_outputs",
    "scan_save_mem",
]


def _fresh(v: Variable) -> Variable:
    return v.type(name=v.name)


def _used_inner(outputs: list[Variable]) -> set[Variable]:
    return set(ancestors(outputs)) if outputs else set()


# ---------------------------------------------------------------------- inner mode


@node_rewriter([Scan])
def scan_inner_mode(fgraph: FunctionGraph, node: Apply) -> Any:
    """Give a Scan made without a ``mode`` the mode of the function being compiled (when
    it names its linker), so that its inner function uses the same linker and rewrites."""
    op: Scan = node.op  # type: ignore[assignment]
    mode = getattr(fgraph, "compile_mode", None)
    if op.mode is not None or mode is None or not isinstance(getattr(mode, "linker", None), str):
        return None
    new_op = op.clone_with(op.inner_inputs, op.inner_outputs, op.info)
    new_op.mode = mode
    return new_op(*node.inputs, return_list=True)


# ---------------------------------------------------------------------- push out


@node_rewriter([Scan])
def scan_push_out_non_seq(fgraph: FunctionGraph, node: Apply) -> Any:
    """Move the body's computations that depend only on non-sequences out of the loop."""
    op: Scan = node.op  # type: ignore[assignment]
    inner_non_seqs = op.split_inner_inputs(op.inner_inputs)["non_seqs"]
    outer_non_seqs = op.split_outer_inputs(node.inputs)["non_seqs"]
    invariant: set[Variable] = set(inner_non_seqs)  # computed from non-sequences only
    order = io_toposort(op.inner_inputs, op.inner_outputs)
    clients: dict[Variable, list[Apply]] = {}
    inv_nodes: list[Apply] = []
    for n in order:
        for i in n.inputs:
            clients.setdefault(i, []).append(n)
        if getattr(n.op, "destroy_map", None):
            continue
        # (a node of constants only is left to constant folding)
        if all(i in invariant or isinstance(i, Constant) for i in n.inputs) and any(
            i in invariant for i in n.inputs
        ):
            invariant.update(n.outputs)
            inv_nodes.append(n)
    if not inv_nodes:
        return None
    outputs = set(op.inner_outputs)
    boundary = [
        o
        for n in inv_nodes
        for o in n.outputs
        if o in outputs or any(x not in invariant for c in clients.get(o, ()) for x in c.outputs)
    ]
    if not boundary:
        return None
    outer_values = clone_replace(boundary, replace=dict(zip(inner_non_seqs, outer_non_seqs)))
    new_inner = [_fresh(v) for v in boundary]
    inner_outputs = clone_replace(op.inner_outputs, replace=dict(zip(boundary, new_inner)))
    info = dc_replace(op.info, n_non_seqs=op.info.n_non_seqs + len(boundary))
    new_op = op.clone_with([*op.inner_inputs, *new_inner], inner_outputs, info)
    extra = [v.type.filter_variable(o) for v, o in zip(boundary, outer_values, strict=True)]
    return new_op(*node.inputs, *extra, return_list=True)


# ---------------------------------------------------------------------- unused inputs


@node_rewriter([Scan])
def remove_constants_and_unused_inputs_scan(fgraph: FunctionGraph, node: Apply) -> Any:
    """Drop unread sequences and non-sequences, put constant non-sequences into the body
    and give an outer variable passed twice to the loop once."""
    op: Scan = node.op  # type: ignore[assignment]
    info = op.info
    inner = op.split_inner_inputs(op.inner_inputs)
    outer = op.split_outer_inputs(node.inputs)
    used = _used_inner(op.inner_outputs)
    replace: dict[Variable, Variable] = {}

    def keep_of(kind: str) -> list[int]:
        kept: list[int] = []
        first: dict[Variable, Variable] = {}
        for i, (v, x) in enumerate(zip(inner[kind], outer[kind], strict=True)):
            if v not in used:
                continue
            if kind == "non_seqs" and isinstance(x, Constant):
                replace[v] = v.type.filter_variable(x)
            elif x in first and first[x].type == v.type:
                replace[v] = first[x]
            else:
                first[x] = v
                kept.append(i)
        return kept

    seqs, non_seqs = keep_of("seqs"), keep_of("non_seqs")
    if len(seqs) == info.n_seqs and len(non_seqs) == info.n_non_seqs:
        return None
    inner_outputs = op.inner_outputs
    if replace:
        inner_outputs = clone_replace(op.inner_outputs, replace=replace)
    new_info = dc_replace(info, n_seqs=len(seqs), n_non_seqs=len(non_seqs))
    new_op = op.clone_with(
        [
            *(inner["seqs"][i] for i in seqs),
            *inner["taps"],
            *inner["shared"],
            *(inner["non_seqs"][i] for i in non_seqs),
        ],
        list(inner_outputs),
        new_info,
    )
    return new_op(
        node.inputs[0],
        *(outer["seqs"][i] for i in seqs),
        *outer["states"],
        *outer["shared"],
        *(outer["non_seqs"][i] for i in non_seqs),
        return_list=True,
    )


# ---------------------------------------------------------------------- unused outputs


@node_rewriter([Scan])
def scan_remove_unused_outputs(fgraph: FunctionGraph, node: Apply) -> Any:
    """Stop computing per-step outputs nobody reads, and states nobody reads that no kept
    output of the body depends on."""
    op: Scan = node.op  # type: ignore[assignment]
    info = op.info
    n_st, n_nit = info.n_states, info.n_nit
    unread = [not fgraph.clients.get(o) for o in node.outputs]
    if not any(unread[: n_st + n_nit]):
        return None
    inner_out = op.split_inner_outputs(op.inner_outputs)
    taps_of = op.taps_per_state()
    drop_states = {j for j in range(n_st) if unread[j]}
    drop_nits = {k for k in range(n_nit) if unread[n_st + k]}
    while True:
        kept_outs = [o for j, o in enumerate(inner_out["states"]) if j not in drop_states]
        kept_outs += [o for k, o in enumerate(inner_out["nits"]) if k not in drop_nits]
        kept_outs += [*inner_out["shared"], *inner_out["cond"]]
        used = _used_inner(kept_outs)
        needed = {j for j in drop_states if any(v in used for v in taps_of[j])}
        if not needed:
            break
        drop_states -= needed
    if not drop_states and not drop_nits:
        return None
    states = [j for j in range(n_st) if j not in drop_states]
    nits = [k for k in range(n_nit) if k not in drop_nits]
    new_outs = op.keeping(node, states, nits)
    old = [node.outputs[j] for j in states] + [node.outputs[n_st + k] for k in nits]
    old += node.outputs[n_st + n_nit :]
    return dict(zip(old, new_outs, strict=True))


# ---------------------------------------------------------------------- merge


def _same_steps(a: Variable, b: Variable) -> bool:
    if a is b:
        return True
    return isinstance(a, Constant) and isinstance(b, Constant) and a.equals(b)


def _mergeable(a: Apply, b: Apply) -> bool:
    ia, ib = a.op.info, b.op.info  # type: ignore[attr-defined]
    return (
        a is not b
        and _same_steps(a.inputs[0], b.inputs[0])
        and not ia.as_while
        and not ib.as_while
        and not ia.n_shared
        and not ib.n_shared
        and not any(ia.keep)
        and not any(ib.keep)
        and ia.truncate_gradient == ib.truncate_gradient
        and a.op.mode is b.op.mode  # type: ignore[attr-defined]
    )


def _depends_on(node: Apply, other: Apply) -> bool:
    outs = set(other.outputs)
    return any(v in outs for v in ancestors(node.inputs))


@node_rewriter([Scan])
def scan_merge(fgraph: FunctionGraph, node: Apply) -> Any:
    """Merge ``node`` with another Scan node of the graph over the same number of steps."""
    partner = next(
        (
            n
            for n in fgraph.toposort()
            if isinstance(n.op, Scan)
            and _mergeable(node, n)
            and not _depends_on(node, n)
            and not _depends_on(n, node)
        ),
        None,
    )
    if partner is None:
        return None
    a, b = node.op, partner.op
    # the partner's body on fresh inputs, so the two bodies share no variable
    b_inputs = [_fresh(v) for v in b.inner_inputs]
    b_outputs = clone_replace(b.inner_outputs, replace=dict(zip(b.inner_inputs, b_inputs)))
    b_op = b.clone_with(b_inputs, b_outputs, b.info)
    ia, ib = a.split_inner_inputs(a.inner_inputs), b_op.split_inner_inputs(b_inputs)
    oa, ob = a.split_inner_outputs(a.inner_outputs), b_op.split_inner_outputs(b_outputs)
    xa, xb = a.split_outer_inputs(node.inputs), b.split_outer_inputs(partner.inputs)
    info = dc_replace(
        a.info,
        n_seqs=a.info.n_seqs + b.info.n_seqs,
        state_taps=a.info.state_taps + b.info.state_taps,
        n_nit=a.info.n_nit + b.info.n_nit,
        n_non_seqs=a.info.n_non_seqs + b.info.n_non_seqs,
    )
    merged = a.clone_with(
        [
            *ia["seqs"],
            *ib["seqs"],
            *ia["taps"],
            *ib["taps"],
            *ia["non_seqs"],
            *ib["non_seqs"],
        ],
        [*oa["states"], *ob["states"], *oa["nits"], *ob["nits"]],
        info,
    )
    if a.name and b.name and a.name != b.name:
        merged.name = f"{a.name}&{b.name}"
    outs = merged(
        node.inputs[0],
        *xa["seqs"],
        *xb["seqs"],
        *xa["states"],
        *xb["states"],
        *xa["non_seqs"],
        *xb["non_seqs"],
        return_list=True,
    )
    sa, sb, na = a.info.n_states, b.info.n_states, a.info.n_nit
    new_a = outs[:sa] + outs[sa + sb : sa + sb + na]
    new_b = outs[sa : sa + sb] + outs[sa + sb + na :]
    pairs = dict(zip(node.outputs, new_a, strict=True))
    pairs.update(zip(partner.outputs, new_b, strict=True))
    return pairs


# ---------------------------------------------------------------------- registration


def register_scan_rewrites(db: RewriteDatabase) -> None:
    """Register the Scan rewrites into ``db`` (see the module docstring for where).

    Each is an entry of its own (walking the graph once, and the nodes it creates), so
    that the standard phases stay the only nested databases.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    unused_inputs = "remove_constants_and_unused_inputs_scan"
    entries = [
        ("scan_inner_mode", scan_inner_mode, 0.01, ("fast_compile",)),
        ("scan_initial_buffer", scan_initial_buffer, 0.02, ("fast_compile",)),
        ("scan_push_out_non_seq", scan_push_out_non_seq, 0.05, ()),
        ("scan_push_out_seq_dot", scan_push_out_seq_dot, 0.055, ()),
        (unused_inputs, remove_constants_and_unused_inputs_scan, 0.06, ()),
        ("scan_merge", scan_merge, 1.6, ()),
        (
            f"{unused_inputs}_after_merge",
            remove_constants_and_unused_inputs_scan,
            1.601,
            (unused_inputs,),
        ),
        ("scan_remove_unused_outputs", scan_remove_unused_outputs, 1.602, ()),
        ("scan_save_mem", scan_save_mem, 1.61, ()),
        ("scan_push_out_dot_accumulators", scan_push_out_dot_accumulators, 1.62, ()),
        (
            f"{unused_inputs}_after_push_out",
            remove_constants_and_unused_inputs_scan,
            1.63,
            (unused_inputs,),
        ),
    ]
    for name, rewriter, position, tags in entries:
        db.register(name, rewriter, "fast_run", "scan", *tags, position=position)


def _scan_eqopt(name: str) -> EquilibriumDB:
    """A fresh database holding the Scan rewrites of one group (see the module
    docstring): ``scan_eqopt1`` those run before canonicalization, ``scan_eqopt2`` those
    run after stabilization."""
    unused_inputs = "remove_constants_and_unused_inputs_scan"
    groups = {
        "scan_eqopt1": [
            ("scan_push_out_non_seq", scan_push_out_non_seq),
            ("scan_push_out_seq_dot", scan_push_out_seq_dot),
            (unused_inputs, remove_constants_and_unused_inputs_scan),
        ],
        "scan_eqopt2": [
            ("scan_merge", scan_merge),
            (unused_inputs, remove_constants_and_unused_inputs_scan),
            ("scan_remove_unused_outputs", scan_remove_unused_outputs),
            ("scan_save_mem", scan_save_mem),
            ("scan_push_out_dot_accumulators", scan_push_out_dot_accumulators),
        ],
    }
    db = EquilibriumDB(name=name)
    for entry, rewriter in groups[name]:
        db.register(entry, rewriter, "fast_run", "scan")
    return db


def __getattr__(name: str) -> EquilibriumDB:
    # ``scan_eqopt1``/``scan_eqopt2``: a new database on each access, so that nothing
    # registered into one is shared (there is no module-level registry).
    if name in ("scan_eqopt1", "scan_eqopt2"):
        return _scan_eqopt(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
