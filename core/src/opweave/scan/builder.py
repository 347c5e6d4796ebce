"""Building a loop node: what :func:`opweave.scan.scan` does.

:func:`build_scan` calls the user's ``fn`` once on placeholder variables to build the body, finds
what else the body reads (shared variables, other outer variables: its implicit
non-sequences) and builds one :class:`~opweave.scan.op.Scan` node.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from opweave.compile.sharedvalue import SharedVariable
from opweave.graph.basic import Constant, Variable
from opweave.graph.replace import clone_replace
from opweave.graph.traversal import graph_inputs
from opweave.scan.info import ScanInfo
from opweave.scan.utils import get_updates_and_outputs
from opweave.tensor.basic import cast
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.math import minimum
from opweave.tensor.shape import shape_padleft
from opweave.tensor.type import TensorType

__all__ = ["build_scan"]


@dataclass
class _State:
    """One entry of ``outputs_info``: an initial value and taps, or ``None`` (not fed back)."""

    initial: Any | None
    taps: list[int] = field(default_factory=lambda: [-1])


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _as_var(x: Any) -> Any:
    return x if isinstance(x, Variable) else as_tensor_variable(x)


def _inner_like(x: Any, drop_first: bool, name: str | None) -> Any:
    """A fresh variable of ``x``'s Type, less its first dimension when ``drop_first``."""
    if drop_first:
        return TensorType(x.type.dtype, shape=x.type.shape[1:])(name=name)
    return x.type(name=name)


def _normalize_sequences(sequences: Any) -> list[tuple[Any, list[int]]]:
    result = []
    for i, seq in enumerate(_as_list(sequences)):
        if isinstance(seq, Mapping):
            if "input" not in seq:
                raise ValueError(f"scan: sequences[{i}] is a dict without an 'input' key")
            x, taps = _as_var(seq["input"]), list(_as_list(seq.get("taps", [0])))
        else:
            x, taps = _as_var(seq), [0]
        if x.type.ndim < 1:
            raise ValueError(
                f"scan: sequences[{i}] ({x}) must have at least one dimension to iterate over, "
                f"got {x.type}"
            )
        if not taps or not all(isinstance(k, int) for k in taps):
            raise ValueError(f"scan: the taps of sequences[{i}] must be integers, got {taps}")
        result.append((x, taps))
    return result


def _normalize_outputs_info(outputs_info: Any) -> list[_State]:
    states = []
    for i, info in enumerate(_as_list(outputs_info)):
        if isinstance(info, Mapping):
            initial = info.get("initial")
            taps = list(_as_list(info.get("taps", [-1])))
            if initial is None:
                states.append(_State(None, []))
                continue
            if not taps or not all(isinstance(k, int) and k < 0 for k in taps):
                raise ValueError(
                    f"scan: the taps of outputs_info[{i}] must be negative integers, got {taps}"
                )
            states.append(_State(_as_var(initial), taps))
        elif info is None:
            states.append(_State(None, []))
        else:
            states.append(_State(_as_var(info), [-1]))
    return states


def _sequence_slices(
    seqs: list[tuple[Any, list[int]]],
) -> list[tuple[Any, int, Any]]:
    """For each sequence and tap: ``(slice, tap, length of the slice)``; step ``t`` of the
    slice is entry ``t + tap`` of the sequence relative to the first step."""
    out = []
    for x, taps in seqs:
        lo, hi = min(min(taps), 0), max(max(taps), 0)
        length = x.shape[0] - (hi - lo)
        for k in taps:
            start = k - lo
            out.append((x[start : start + length], k, length))
    return out


def build_scan(
    op_class: type,
    fn: Callable[..., Any],
    sequences: Any = None,
    outputs_info: Any = None,
    non_sequences: Any = None,
    n_steps: Any = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
    profile: bool = False,
    allow_gc: bool | None = None,
    strict: bool = False,
    return_list: bool = False,
) -> tuple[Any, OrderedDict[Variable, Variable]]:
    """Build a loop node of ``op_class`` (:class:`~opweave.scan.op.Scan`); the other
    parameters, the result and the errors are those of :func:`opweave.scan.scan`."""
    if not callable(fn):
        raise TypeError(f"scan: fn must be callable, got {type(fn).__name__}")
    if not isinstance(truncate_gradient, int) or truncate_gradient == 0:
        raise ValueError(
            f"scan: truncate_gradient must be -1 or a positive integer, got {truncate_gradient!r}"
        )
    seqs = _normalize_sequences(sequences)
    states_info = _normalize_outputs_info(outputs_info)
    non_seqs = [_as_var(x) for x in _as_list(non_sequences)]

    slices = _sequence_slices(seqs)
    if n_steps is None:
        if not slices:
            raise ValueError("scan: n_steps must be given when there are no sequences")
        steps = slices[0][2]
        for _, _, length in slices[1:]:
            steps = minimum(steps, length)
    else:
        steps = _as_var(n_steps)
        if steps.type.ndim != 0 or not str(steps.type.dtype).startswith(("int", "uint")):
            raise TypeError(f"scan: n_steps must be an integer scalar, got {steps.type}")
        if isinstance(steps, Constant) and int(steps.data) < 0:
            raise ValueError(f"scan: n_steps must not be negative, got {int(steps.data)}")
    steps = cast(steps, "int64")

    outer_seqs, inner_seqs = [], []
    for i, (sl, k, _) in enumerate(slices):
        sl = sl[:steps]
        outer_seqs.append(sl[::-1] if go_backwards else sl)
        base = sl.name or f"seq{i}"
        inner_seqs.append(_inner_like(sl, True, f"{base}[t{k:+d}]"))

    state_args: list[Any] = []
    fed_back = [s for s in states_info if s.initial is not None]
    for j, st in enumerate(fed_back):
        assert st.initial is not None
        single = st.taps == [-1]
        for k in st.taps:
            state_args.append(_inner_like(st.initial, not single, f"state{j}[t{k:+d}]"))

    raw = fn(*inner_seqs, *state_args, *non_seqs)
    cond, outputs, updates = get_updates_and_outputs(raw)
    if outputs_info is None:
        states_info = [_State(None, []) for _ in outputs]
    if len(outputs) != len(states_info):
        raise ValueError(
            f"scan: fn returned {len(outputs)} outputs but outputs_info has "
            f"{len(states_info)} entries (use None for an output that is not fed back)"
        )
    updates = _with_default_updates(outputs, updates, cond)

    # which user output is which state / per-step output
    state_outs: list[Any] = []
    nit_outs: list[Any] = []
    kinds: list[tuple[str, int]] = []
    for out, st in zip(outputs, states_info, strict=True):
        if st.initial is None:
            kinds.append(("nit", len(nit_outs)))
            nit_outs.append(out)
        else:
            kinds.append(("state", len(state_outs)))
            state_outs.append(_check_state_output(len(kinds) - 1, out, st))

    shared_vars = list(updates)
    shared_inner = [sv.type(name=sv.name) for sv in shared_vars]
    upd_values = [_as_update(sv, updates[sv]) for sv in shared_vars]
    explicit = [x for x in non_seqs if x not in updates]
    explicit_inner = [x.type(name=x.name) for x in explicit]
    replace = dict(zip(shared_vars, shared_inner, strict=True))
    replace.update(zip(explicit, explicit_inner, strict=True))
    inner_outs = [*state_outs, *nit_outs, *upd_values, *([cond] if cond is not None else [])]
    inner_outs = clone_replace(inner_outs, replace=replace) if inner_outs else []

    own = {*inner_seqs, *state_args, *shared_inner, *explicit_inner}
    implicit = [
        v for v in _unique(graph_inputs(inner_outs)) if v not in own and not isinstance(v, Constant)
    ]
    if strict and implicit:
        raise ValueError(
            f"scan: with strict=True every variable the body reads must be passed in "
            f"non_sequences, but {implicit[0]} (Type {implicit[0].type}) is not"
        )
    implicit_inner = [v.type(name=v.name) for v in implicit]
    if implicit:
        inner_outs = clone_replace(inner_outs, replace=dict(zip(implicit, implicit_inner)))

    info = ScanInfo(
        n_seqs=len(outer_seqs),
        state_taps=tuple(tuple(st.taps) for st in fed_back),
        n_nit=len(nit_outs),
        n_shared=len(shared_vars),
        n_non_seqs=len(explicit) + len(implicit),
        as_while=cond is not None,
        truncate_gradient=truncate_gradient,
    )
    op = op_class(
        [*inner_seqs, *state_args, *shared_inner, *explicit_inner, *implicit_inner],
        inner_outs,
        info,
        mode=mode,
        name=name,
        profile=profile,
        allow_gc=allow_gc,
    )
    buffers = [
        shape_padleft(st.initial) if st.taps == [-1] else st.initial[: -min(st.taps)]  # type: ignore[index]
        for st in fed_back
    ]
    node_outs = op(steps, *outer_seqs, *buffers, *shared_vars, *explicit, *implicit)
    node_outs = node_outs if isinstance(node_outs, list) else [node_outs]
    n_st = info.n_states
    results = []
    for kind, idx in kinds:
        if kind == "state":
            results.append(node_outs[idx][info.depths[idx] :])
        else:
            results.append(node_outs[n_st + idx])
    new_updates: OrderedDict[Variable, Variable] = OrderedDict(
        (sv, node_outs[n_st + info.n_nit + i]) for i, sv in enumerate(shared_vars)
    )
    if not results:
        return ([] if return_list else None), new_updates
    if len(results) == 1 and not return_list:
        return results[0], new_updates
    return results, new_updates


def _unique(items: Any) -> list[Any]:
    seen: dict[Any, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def _check_state_output(i: int, out: Any, st: _State) -> Any:
    assert st.initial is not None
    want_ndim = st.initial.type.ndim - (0 if st.taps == [-1] else 1)
    want_dtype = st.initial.type.dtype
    if out.type.ndim != want_ndim:
        raise ValueError(
            f"scan: output {i} of fn has {out.type.ndim} dimensions but its initial state "
            f"(outputs_info[{i}], {st.initial.type}) gives steps of {want_ndim} dimensions"
        )
    if out.type.dtype != want_dtype:
        raise ValueError(
            f"scan: the initial state (outputs_info[{i}]) has dtype {want_dtype}, while "
            f"output {i} of fn has dtype {out.type.dtype}; this happens when the body "
            "upcasts or downcasts: cast the initial state or the output"
        )
    return out


def _as_update(sv: Any, value: Any) -> Any:
    if not isinstance(sv, SharedVariable):
        raise TypeError(f"scan: updates must be keyed by shared variables, got {sv}")
    new = value if isinstance(value, Variable) else as_tensor_variable(value)
    return sv.type.filter_variable(new)


def _with_default_updates(
    outputs: Sequence[Any], updates: dict[Any, Any], cond: Any | None
) -> dict[Any, Any]:
    """Add the ``default_update`` of the shared variables the body reads (random streams'
    generators), unless ``updates`` already updates them."""
    result = dict(updates)
    roots = [*outputs, *updates.values(), *([cond] if cond is not None else [])]
    pending = list(_unique(graph_inputs(roots)))
    while pending:
        v = pending.pop()
        default = getattr(v, "default_update", None)
        if isinstance(v, SharedVariable) and default is not None and v not in result:
            result[v] = default
            pending.extend(graph_inputs([default]))
    return result
