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

import numpy as np

from opweave.compile.sharedvalue import SharedVariable
from opweave.graph.basic import Constant, Variable
from opweave.graph.replace import clone_replace
from opweave.graph.traversal import graph_inputs
from opweave.graph.utils import MissingInputError
from opweave.scan.info import ScanInfo
from opweave.scan.utils import get_updates_and_outputs
from opweave.tensor.basic import AllocEmpty, cast
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.math import minimum
from opweave.tensor.shape import shape_padleft
from opweave.tensor.subtensor import set_subtensor
from opweave.tensor.type import TensorType

__all__ = ["StrictScanInputError", "build_scan"]


class StrictScanInputError(MissingInputError, ValueError):
    """``scan(..., strict=True)`` met a shared variable its body reads that was not passed
    in ``sequences`` or ``non_sequences`` (PyTensor raises ``MissingInputError`` there)."""


@dataclass
class _State:
    """One entry of ``outputs_info``.

    ``kind`` is ``"nit"`` (``None``: not fed back), ``"sit"`` (a tensor fed back through
    the single tap ``-1``; ``initial`` is one step), ``"mit"`` (a tensor fed back through
    ``taps``; ``initial`` stacks the ``-min(taps)`` values before the first step) or
    ``"untraced"`` (a value without a shape, such as a random generator, carried from
    step to step through the single tap ``-1``; only its last value is returned).
    """

    initial: Any | None
    taps: list[int] = field(default_factory=lambda: [-1])
    kind: str = "nit"


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


def _is_single_previous_tap(taps: Any) -> bool:
    """Whether ``taps`` asks for the previous step only with a one-step initial value: the
    list ``[-1]``, the integer ``-1`` or an integer array equal to ``[-1]``, as PyTensor's
    ``scan`` reads it. Other
    sequences of taps, ``(-1,)`` and ``range(-1, 0)`` included, take an initial value that
    stacks the values before the first step."""
    if isinstance(taps, np.ndarray):
        return taps.shape == (1,) and int(taps[0]) == -1
    if isinstance(taps, (int, np.integer)):
        return int(taps) == -1
    return isinstance(taps, list) and taps == [-1]


def _state_taps(i: int, taps: Any) -> list[int]:
    """The taps of ``outputs_info[i]`` as a list of distinct negative integers."""
    found = [taps] if isinstance(taps, (int, np.integer)) else list(taps)
    if not found or not all(isinstance(k, (int, np.integer)) and k < 0 for k in found):
        raise ValueError(
            f"scan: the taps of outputs_info[{i}] must be negative integers, got {found}"
        )
    if len(set(found)) != len(found):
        raise ValueError(f"scan: the taps of outputs_info[{i}] must be distinct, got {found}")
    return [int(k) for k in found]


def _normalize_outputs_info(outputs_info: Any) -> list[_State]:
    states = []
    for i, info in enumerate(_as_list(outputs_info)):
        if isinstance(info, Mapping):
            initial = info.get("initial")
            raw_taps = info.get("taps")
            if initial is None:
                states.append(_State(None, [], "nit"))
                continue
            single = raw_taps is None or _is_single_previous_tap(raw_taps)
            taps = [-1] if single else _state_taps(i, raw_taps)
        elif info is None:
            states.append(_State(None, [], "nit"))
            continue
        else:
            initial, single, taps = info, True, [-1]
        initial = _as_var(initial)
        if isinstance(initial.type, TensorType):
            kind = "sit" if single else "mit"
        elif single:
            kind = "untraced"
        else:
            raise ValueError(
                f"scan: outputs_info[{i}] ({initial}, Type {initial.type}) has no shape, so it "
                f"can only be carried through the single tap -1, got taps {taps}"
            )
        if kind == "mit" and initial.type.ndim < 1:
            raise ValueError(
                f"scan: the initial value of outputs_info[{i}] (taps {taps}) must stack the "
                f"{-min(taps)} values before the first step along a first dimension, got "
                f"{initial.type}"
            )
        states.append(_State(initial, taps, kind))
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

    # the body's arguments, outputs_info in the user's order
    tap_args: dict[int, list[Any]] = {}
    for i, st in enumerate(states_info):
        if st.kind in ("sit", "untraced"):
            tap_args[i] = [_inner_like(st.initial, False, f"state{i}[t-1]")]
        elif st.kind == "mit":
            tap_args[i] = [_inner_like(st.initial, True, f"state{i}[t{k:+d}]") for k in st.taps]
    state_args = [v for i in sorted(tap_args) for v in tap_args[i]]

    if _one_step(n_steps):
        return _single_step(fn, outer_seqs, states_info, non_seqs, return_list)
    raw = fn(*inner_seqs, *state_args, *non_seqs)
    cond, outputs, updates = get_updates_and_outputs(raw)
    if outputs_info is None or (isinstance(outputs_info, list | tuple) and not outputs_info):
        # None or an empty list: no output is fed back (PyTensor reads [] so too)
        states_info = [_State(None, [], "nit") for _ in outputs]
    _check_output_count(outputs, states_info)
    updates = _with_default_updates(outputs, updates, cond)

    # the node's layout: states with other taps than (-1,) (mit-sot), then those with the
    # single tap -1 (sit-sot, and mit-sot given as (-1,)), then per-step outputs, then the
    # untraced states and the shared variables the body updates (each in the user's order)
    by_kind = {
        kind: [i for i, st in enumerate(states_info) if st.kind == kind]
        for kind in ("nit", "untraced")
    }
    traced = [i for i, st in enumerate(states_info) if st.kind in ("mit", "sit")]
    state_order = [i for i in traced if states_info[i].taps != [-1]]
    state_order += [i for i in traced if states_info[i].taps == [-1]]
    state_outs = [_check_state_output(i, outputs[i], states_info[i]) for i in state_order]
    nit_outs = [outputs[i] for i in by_kind["nit"]]
    untraced_outs = [
        _check_untraced_output(i, outputs[i], states_info[i]) for i in by_kind["untraced"]
    ]
    untraced_initials = [states_info[i].initial for i in by_kind["untraced"]]
    untraced_inner = [tap_args[i][0] for i in by_kind["untraced"]]
    taps_inner = [v for i in state_order for v in tap_args[i]]

    shared_vars = list(updates)
    shared_inner = [sv.type(name=sv.name) for sv in shared_vars]
    upd_values = [_as_update(sv, updates[sv]) for sv in shared_vars]
    explicit = [x for x in non_seqs if x not in updates]
    explicit_inner = [x.type(name=x.name) for x in explicit]
    replace = dict(zip(shared_vars, shared_inner, strict=True))
    replace.update(zip(explicit, explicit_inner, strict=True))
    inner_outs = [
        *state_outs,
        *nit_outs,
        *untraced_outs,
        *upd_values,
        *([cond] if cond is not None else []),
    ]
    inner_outs = clone_replace(inner_outs, replace=replace) if inner_outs else []

    own = {*inner_seqs, *state_args, *shared_inner, *explicit_inner}
    implicit = [
        v for v in _unique(graph_inputs(inner_outs)) if v not in own and not isinstance(v, Constant)
    ]
    unpassed = [v for v in implicit if isinstance(v, SharedVariable)]
    if strict and unpassed:
        raise StrictScanInputError(
            f"scan: with strict=True every shared variable the body reads must be passed "
            f"in sequences or non_sequences, but {unpassed[0]} (Type {unpassed[0].type}) "
            "is not",
            unpassed[0],
        )
    implicit_inner = [v.type(name=v.name) for v in implicit]
    if implicit:
        inner_outs = clone_replace(inner_outs, replace=dict(zip(implicit, implicit_inner)))

    info = ScanInfo(
        n_seqs=len(outer_seqs),
        state_taps=tuple(tuple(states_info[i].taps) for i in state_order),
        n_nit=len(nit_outs),
        n_shared=len(untraced_outs) + len(shared_vars),
        n_non_seqs=len(explicit) + len(implicit),
        as_while=cond is not None,
        truncate_gradient=truncate_gradient,
    )
    op = op_class(
        [
            *inner_seqs,
            *taps_inner,
            *untraced_inner,
            *shared_inner,
            *explicit_inner,
            *implicit_inner,
        ],
        inner_outs,
        info,
        mode=mode,
        name=name,
        profile=profile,
        allow_gc=allow_gc,
    )
    buffers = [_initial_buffer(states_info[i]) for i in state_order]
    node_outs = op(
        steps, *outer_seqs, *buffers, *untraced_initials, *shared_vars, *explicit, *implicit
    )
    node_outs = node_outs if isinstance(node_outs, list) else [node_outs]
    n_st, n_nit, n_untraced = info.n_states, info.n_nit, len(untraced_outs)
    results: list[Any] = [None] * len(states_info)
    for p, i in enumerate(state_order):
        results[i] = node_outs[p][info.depths[p] :]
    for k, i in enumerate(by_kind["nit"]):
        results[i] = node_outs[n_st + k]
    for u, i in enumerate(by_kind["untraced"]):
        results[i] = node_outs[n_st + n_nit + u]
    new_updates: OrderedDict[Variable, Variable] = OrderedDict(
        (sv, node_outs[n_st + n_nit + n_untraced + k]) for k, sv in enumerate(shared_vars)
    )
    return _packed(results, return_list), new_updates


def _check_output_count(outputs: Sequence[Any], states_info: Sequence[_State]) -> None:
    """Raise unless ``fn`` returned one output per entry of ``outputs_info``."""
    if len(outputs) != len(states_info):
        raise ValueError(
            f"scan: fn returned {len(outputs)} outputs but outputs_info has "
            f"{len(states_info)} entries (use None for an output that is not fed back)"
        )


def _packed(results: list[Any], return_list: bool) -> Any:
    """``scan``'s outputs as it returns them: a list, the one output alone (unless
    ``return_list``), or ``None`` for none."""
    if not results:
        return [] if return_list else None
    if len(results) == 1 and not return_list:
        return results[0]
    return results


def _one_step(n_steps: Any) -> bool:
    """Whether ``n_steps`` is the constant 1 (a Python int or a constant variable)."""
    if isinstance(n_steps, int | np.integer):
        return int(n_steps) == 1
    if isinstance(n_steps, Constant):
        data = np.asarray(n_steps.data)
        return data.ndim == 0 and data.dtype.kind in "iu" and int(data) == 1
    return False


def _single_step(
    fn: Callable[..., Any],
    outer_seqs: list[Any],
    states_info: list[_State],
    non_seqs: list[Any],
    return_list: bool,
) -> tuple[Any, OrderedDict[Variable, Variable]]:
    """``scan`` of one step, as PyTensor builds it: no loop, ``fn`` applied to the first
    entry of each sequence and to the initial values, each output given a first
    dimension of length 1 (a value carried without a shape, such as a generator, is
    returned as it is), and ``fn``'s own updates."""
    seq_args = [seq[0] for seq in outer_seqs]
    state_args: list[Any] = []
    for st in states_info:
        if st.kind in ("sit", "untraced"):
            state_args.append(st.initial)
        elif st.kind == "mit":
            depth = -min(st.taps)
            state_args.extend(st.initial[depth + k] for k in st.taps)
    _, outputs, updates = get_updates_and_outputs(fn(*seq_args, *state_args, *non_seqs))
    if states_info:
        _check_output_count(outputs, states_info)
    kinds = [st.kind for st in states_info] or ["nit"] * len(outputs)
    results = [
        out if kind == "untraced" or not isinstance(out.type, TensorType) else shape_padleft(out)
        for out, kind in zip(outputs, kinds, strict=True)
    ]
    new_updates: OrderedDict[Variable, Variable] = OrderedDict(updates)
    return _packed(results, return_list), new_updates


def _initial_buffer(state: _State) -> Any:
    """The outer input of a traced state: its initial values, stacked (a one-step
    ``initial`` gains a first dimension of length 1; a multi-tap one is cut to its first
    ``-min(taps)`` entries), written into a new uninitialized buffer of that shape:
    ``set_subtensor(AllocEmpty(dtype)(*shape)[:n], init)``, as PyTensor's ``scan`` lays
    it out (readers find the initial values as that node's second input).
    """
    assert state.initial is not None
    if state.kind == "sit":
        init = shape_padleft(state.initial)
    else:
        init = state.initial[: -min(state.taps)]
    shape = [init.shape[d] for d in range(init.type.ndim)]
    empty = AllocEmpty(init.type.dtype)(*shape)
    return set_subtensor(empty[: shape[0]], init)


def _unique(items: Any) -> list[Any]:
    seen: dict[Any, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def _check_state_output(i: int, out: Any, st: _State) -> Any:
    assert st.initial is not None
    want_ndim = st.initial.type.ndim - (0 if st.kind == "sit" else 1)
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


def _check_untraced_output(i: int, out: Any, st: _State) -> Any:
    assert st.initial is not None
    if out.type != st.initial.type:
        raise ValueError(
            f"scan: output {i} of fn has Type {out.type}, but its initial value "
            f"(outputs_info[{i}]) has Type {st.initial.type}; a state carried from step to "
            "step keeps its Type"
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
