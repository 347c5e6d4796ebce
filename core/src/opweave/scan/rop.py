"""Forward-mode derivatives of a :class:`~opweave.scan.op.Scan` node (its ``R_op``).

As PyTensor does, the tangents are computed by a second loop that runs the primal loop
alongside its tangents: its body is the forward body plus, for each floating-point state
and per-step output, the body's Jacobian-vector product (:func:`opweave.gradient.Rop`)
with respect to the step's sequence entries, state taps and non-sequences, applied to
their tangents. A state's tangent is itself a state, with the same taps, whose initial
values are the tangent of the state's initial values (zero when none is given); a
sequence's tangent is a sequence and a non-sequence's tangent a non-sequence.

A while loop (``until``) gives a while loop with the same condition (on the primal
values), so the tangents hold the same steps as the outputs.

Not implemented (a ``NotImplementedError`` says so): loops with shared variables the body
updates, and loops rewritten by ``scan_save_mem``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opweave.gradient import Rop
from opweave.graph.replace import clone_replace
from opweave.scan.info import ScanInfo
from opweave.tensor.basic import cast, zeros_like

if TYPE_CHECKING:
    from opweave.scan.op import Scan

__all__ = ["scan_rop"]


def _is_float(v: Any) -> bool:
    return str(getattr(v.type, "dtype", "")).startswith(("float", "complex"))


def _as_dtype(ev: Any, x: Any) -> Any:
    return ev if ev.type.dtype == x.type.dtype else cast(ev, x.type.dtype)


def scan_rop(op: Scan, inputs: list[Any], eval_points: list[Any]) -> list[Any]:
    """The tangents of ``op``'s node outputs (``None`` where none flows); see the module
    docstring."""
    info = op.info
    if info.n_shared:
        raise NotImplementedError(
            f"{op}.R_op: forward-mode derivatives of a scan whose body updates shared "
            "variables are not implemented"
        )
    if any(info.keep):
        raise NotImplementedError(
            f"{op}.R_op: the loop keeps only its last steps (scan_save_mem); take derivatives "
            "of the graph before it is compiled"
        )
    n_out = info.n_states + info.n_nit
    outer = op.split_outer_inputs(inputs)
    evals = op.split_outer_inputs(eval_points)
    if all(ev is None for ev in eval_points[1:]):
        return [None] * n_out
    inner_in = op.split_inner_inputs(op.inner_inputs)
    inner_out = op.split_inner_outputs(op.inner_outputs)

    t_seqs = [
        i
        for i, (x, ev) in enumerate(zip(outer["seqs"], evals["seqs"]))
        if ev is not None and _is_float(x)
    ]
    t_non_seqs = [
        i
        for i, (x, ev) in enumerate(zip(outer["non_seqs"], evals["non_seqs"]))
        if ev is not None and _is_float(x)
    ]
    t_states = [j for j, x in enumerate(outer["states"]) if _is_float(x)]
    t_nits = [k for k, o in enumerate(inner_out["nits"]) if _is_float(o)]

    fresh = {v: v.type(name=v.name) for v in op.inner_inputs}
    taps_of = [[fresh[v] for v in taps] for taps in op.taps_per_state()]
    seq_vars = [fresh[v] for v in inner_in["seqs"]]
    non_seq_vars = [fresh[v] for v in inner_in["non_seqs"]]
    d_seqs = [seq_vars[i].type(name=f"d{seq_vars[i].name or 'seq'}") for i in t_seqs]
    d_taps = [[v.type(name=f"d{v.name or 'tap'}") for v in taps_of[j]] for j in t_states]
    d_non_seqs = [non_seq_vars[i].type() for i in t_non_seqs]

    primal = clone_replace(
        [*inner_out["states"], *inner_out["nits"], *inner_out["cond"]], replace=fresh
    )
    cond = primal[info.n_states + info.n_nit :]
    p_states, p_nits = primal[: info.n_states], primal[info.n_states : info.n_states + info.n_nit]
    wrt = [seq_vars[i] for i in t_seqs] + [v for j in t_states for v in taps_of[j]]
    wrt += [non_seq_vars[i] for i in t_non_seqs]
    points = [*d_seqs, *(v for taps in d_taps for v in taps), *d_non_seqs]
    targets = [p_states[j] for j in t_states] + [p_nits[k] for k in t_nits]
    tangents = (
        Rop(targets, wrt, points, disconnected_outputs="ignore", return_disconnected="zero")
        if targets
        else []
    )
    tangents = [t.type.filter_variable(_as_dtype(r, t)) for t, r in zip(targets, tangents)]
    d_state_outs, d_nit_outs = tangents[: len(t_states)], tangents[len(t_states) :]

    new_info = ScanInfo(
        n_seqs=info.n_seqs + len(t_seqs),
        state_taps=info.state_taps + tuple(info.state_taps[j] for j in t_states),
        n_nit=info.n_nit + len(t_nits),
        n_shared=0,
        n_non_seqs=info.n_non_seqs + len(t_non_seqs),
        as_while=info.as_while,
        truncate_gradient=info.truncate_gradient,
    )
    new_op = op.clone_with(
        [
            *seq_vars,
            *d_seqs,
            *(v for taps in taps_of for v in taps),
            *(v for taps in d_taps for v in taps),
            *non_seq_vars,
            *d_non_seqs,
        ],
        [*p_states, *d_state_outs, *p_nits, *d_nit_outs, *cond],
        new_info,
    )
    new_op.name = f"rop_of_{op.name}" if op.name else "rop_of_scan"
    d_inits = [
        zeros_like(outer["states"][j])
        if evals["states"][j] is None
        else _as_dtype(evals["states"][j], outer["states"][j])
        for j in t_states
    ]
    outs = new_op(
        inputs[0],
        *outer["seqs"],
        *(_as_dtype(evals["seqs"][i], outer["seqs"][i]) for i in t_seqs),
        *outer["states"],
        *d_inits,
        *outer["non_seqs"],
        *(_as_dtype(evals["non_seqs"][i], outer["non_seqs"][i]) for i in t_non_seqs),
        return_list=True,
    )
    n_st, n_t = info.n_states, len(t_states)
    result: list[Any] = [None] * n_out
    for pos, j in enumerate(t_states):
        result[j] = outs[n_st + pos]
    for pos, k in enumerate(t_nits):
        result[n_st + k] = outs[n_st + n_t + info.n_nit + pos]
    return result
