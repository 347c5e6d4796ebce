"""Python implementation of :mod:`opweave.scan`: the ``Scan`` loop.

The inner graph is compiled once per Op, the first time a node of it runs, with
:func:`opweave.function` in the Op's ``mode`` (``None``: the default mode, i.e.
``opweave.config.mode`` with ``opweave.config.linker``), and kept on the Op. Each step
runs it on the step's sequence entries, the states' tap entries, the shared states'
current values and the non-sequences. The states' outputs are preallocated buffers of
``depth + n_steps`` entries; per-step outputs are allocated after the first step, when
their shape is known. A while loop (``until``) returns only the steps it ran. An output
whose node keeps only its last ``k`` entries (``info.keep``, set by the rewrite
``scan_save_mem``) lives in a circular buffer of at least ``max(k, depth)`` rows.

What a step costs beyond its inner graph is kept small, as in PyTensor's Scan:

* the loop writes the step's arguments straight into the inner function's input cells
  and runs its linked graph (the arguments are the loop's own views of values the outer
  function already checked), the non-sequences once per call;
* a state's new value is computed into its buffer row: the row is put into the inner
  output's cell before the step, so that implementations that reuse their output's
  memory (C elementwise, ``Dot``) write there, and the copy is skipped when they did;
* a state of which the node keeps at most ``depth`` entries (``scan_save_mem``: a
  gradient accumulator, a loop whose last value only is read) needs its oldest tap's
  value for nothing after the step: that tap is an input the inner graph may overwrite
  (``In(mutable=True)``). When the compiled graph computes the state's new value in that
  tap's memory (``acc + g`` in place) the state lives in a circular buffer of ``depth``
  rows and the step writes its row in place; otherwise in one of ``depth + 1`` rows,
  whose next row is preset as above;
* without an explicit ``allow_gc`` the inner function keeps its intermediates between
  steps (PyTensor's ``scan__allow_gc`` default), so that a step reuses the previous
  step's arrays instead of allocating new ones; the loop frees them when it ends (with
  ``allow_gc=False`` they stay for the next call).

A profiled inner function (``scan(..., profile=...)``) is called as a function, once per
step, so that its calls are counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.compile.aliasing import view_chain
from opweave.compile.io import In, Out
from opweave.compile.maker import function
from opweave.configdefaults import config
from opweave.graph.basic import Apply
from opweave.scan.op import Scan
from opweave_python.scan_steps import Layout, step_loop

__all__ = [
    "PERFORMS",
    "in_place_states",
    "inner_function",
    "reusable_taps",
    "scan_perform",
]


def reusable_taps(op: Scan) -> dict[int, int]:
    """The inner inputs a step may overwrite: ``{inner input position: state}``.

    A state kept in a circular buffer of exactly ``depth`` rows (``0 < keep <= depth``)
    writes step ``t``'s value into the row its oldest tap (``-depth``) read, so that tap's
    value is needed by nobody after the step.
    """
    info = op.info
    found: dict[int, int] = {}
    pos = info.n_seqs
    for j, taps in enumerate(info.state_taps):
        depth, keep = -min(taps), info.kept(j)
        if 0 < keep <= depth:
            found[pos + taps.index(-depth)] = j
        pos += len(taps)
    return found


def inner_function(op: Scan) -> Any:
    """The compiled inner function of ``op`` (compiled on first use, then cached on it).

    The states' outputs are returned borrowed (their memory may be reused by the next
    step); the taps of :func:`reusable_taps` are mutable inputs, unless a state's new
    value could be the memory of another state's tap, or of a tap another output also
    uses (then none is).
    """
    fn = op.__dict__.get("_inner_function")
    if fn is None:
        reusable = reusable_taps(op)
        fn = _compile(op, reusable)
        if reusable and not _writes_are_safe(op, fn, reusable):
            fn = _compile(op, {})
            reusable = {}
        op.__dict__["_inner_function"] = fn
        op.__dict__["_inner_in_place"] = _in_place_states(fn, reusable)
    return fn


def in_place_states(op: Scan) -> frozenset[int]:
    """The states whose new value the compiled inner function computes in the memory of
    their oldest tap (see :func:`reusable_taps`)."""
    inner_function(op)
    return op.__dict__["_inner_in_place"]


def _in_place_states(fn: Any, reusable: dict[int, int]) -> frozenset[int]:
    fgraph = fn.maker.fgraph
    return frozenset(
        j for i, j in reusable.items() if view_chain(fgraph.outputs[j])[-1] is fgraph.inputs[i]
    )


def _compile(op: Scan, reusable: dict[int, int]) -> Any:
    allow_gc = getattr(op, "allow_gc", None)
    flags = {"allow_gc": False} if allow_gc is None else {"allow_gc": bool(allow_gc)}
    inputs = [
        In(v, mutable=True, borrow=True) if i in reusable else v
        for i, v in enumerate(op.inner_inputs)
    ]
    n_states = op.info.n_states
    outputs = [Out(o, borrow=True) if j < n_states else o for j, o in enumerate(op.inner_outputs)]
    with config.change_flags(**flags):
        return function(
            inputs,
            outputs,
            mode=op.mode,
            on_unused_input="ignore",
            name=f"{op} inner function",
            profile=getattr(op, "profile", False) or None,
        )


def _writes_are_safe(op: Scan, fn: Any, reusable: dict[int, int]) -> bool:
    """Whether each state output that is the memory of a reusable tap is that of its own
    state's tap, and no two outputs are the memory of the same tap."""
    fgraph = fn.maker.fgraph
    taps = {fgraph.inputs[i]: j for i, j in reusable.items()}
    seen = set()
    for j, out in enumerate(fgraph.outputs[: len(op.inner_outputs)]):
        root = view_chain(out)[-1]
        if root in taps:
            if taps[root] != j or root in seen:
                return False
            seen.add(root)
    return True


def _layout(op: Scan) -> tuple[Any, ...]:
    """What every run of ``op`` needs from its :class:`~opweave.scan.info.ScanInfo`,
    computed once and kept on the Op (a plain tuple, so the Op still pickles without this
    backend): the counts of sequences, states, shared variables and non-sequences, per
    step outputs and taps; each state's depth; each output's ``kept``; whether it is a
    while loop; for each tap, its state and the offset of the row step ``t`` reads."""
    found = op.__dict__.get("_scan_layout")
    if found is None:
        info = op.info
        counts = (info.n_seqs, info.n_states, info.n_shared, info.n_non_seqs, info.n_nit)
        keeps = tuple(info.kept(i) for i in range(info.n_states + info.n_nit))
        depths = info.depths
        tap_states = tuple(
            (j, depths[j] + k) for j, taps in enumerate(info.state_taps) for k in taps
        )
        found = (*counts, info.n_taps, depths, keeps, info.as_while, tap_states)
        op.__dict__["_scan_layout"] = found
    return found


def scan_perform(
    op: Scan, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]
) -> None:
    """Run the loop (see the module docstring)."""
    fn = inner_function(op)
    n_seqs, n_states, n_shared, n_non_seqs, n_nit, _, depths, keeps, _, _ = _layout(op)
    n_steps = int(inputs[0])
    if n_steps < 0:
        raise ValueError(f"{op}: n_steps must not be negative, got {n_steps}")
    end = 1 + n_seqs
    seqs = list(inputs[1:end])
    states = inputs[end : end + n_states]
    end += n_states
    parts = {
        "seqs": seqs,
        "shared": list(inputs[end : end + n_shared]),
        "non_seqs": list(inputs[end + n_shared : end + n_shared + n_non_seqs]),
    }
    for i, seq in enumerate(seqs):
        if seq.shape[0] < n_steps:
            raise ValueError(
                f"{op}: sequence {i} has {seq.shape[0]} entries, fewer than n_steps={n_steps}"
            )
    in_place = in_place_states(op)
    buffers = []
    for j, init in enumerate(states):
        depth = depths[j]
        if init.shape[0] < depth:
            raise ValueError(
                f"{op}: state {j} needs {depth} initial values "
                f"(taps {op.info.state_taps[j]}), got {init.shape[0]}"
            )
        keep = keeps[j]
        if keep and j not in in_place:
            keep = max(keep, depth + 1)  # the step's row is not one a tap reads
        rows = depth + n_steps if not keep else min(max(keep, depth), depth + n_steps)
        buf = np.empty((max(rows, 1), *init.shape[1:]), dtype=init.dtype)
        buf[:depth] = init[:depth]
        buffers.append(buf)
    nit_rows = [min(keeps[n_states + k] or n_steps, n_steps) for k in range(n_nit)]
    loop = _step_in_cells if getattr(fn, "profile", None) is None else _step_by_calls
    nits, shared, steps_run = loop(op, fn, n_steps, seqs, buffers, nit_rows, parts)
    results: list[Any] = [
        _tail(buf, depth + steps_run, keeps[j])
        for j, (buf, depth) in enumerate(zip(buffers, depths))
    ]
    for k, stacked in enumerate(nits):
        if stacked is None:  # no step ran: an empty stack
            inner = op.split_inner_outputs(op.inner_outputs)["nits"][k]
            shape = tuple(0 if s is None else s for s in inner.type.shape)
            stacked = np.empty((0, *shape), dtype=inner.type.dtype)
        results.append(_tail(stacked, steps_run, keeps[n_states + k]))
    results += shared
    for cell, value in zip(output_storage, results, strict=True):
        cell[0] = value


def _tap_offsets(op: Scan, buffers: list[np.ndarray]) -> list[tuple[np.ndarray, int]]:
    """For each inner tap input, in order: its state's buffer and the offset of the row
    step ``t`` reads (``t + offset``, modulo the buffer's length)."""
    info = op.info
    return [
        (buf, depth + k)
        for buf, depth, ks in zip(buffers, info.depths, info.state_taps, strict=True)
        for k in ks
    ]


def _rows(a: np.ndarray, n: int) -> list[np.ndarray]:
    """Views of the first ``n`` entries of ``a`` (0-d arrays when ``a`` is a vector)."""
    if a.ndim > 1:
        return list(a[:n])
    return [a[i, ...] for i in range(n)]


def _step_in_cells(
    op: Scan,
    fn: Any,
    n_steps: int,
    seqs: list[Any],
    buffers: list[np.ndarray],
    nit_rows: list[int],
    parts: dict[str, list[Any]],
) -> tuple[list[np.ndarray | None], list[Any], int]:
    """The loop, writing each step's arguments into the inner function's input cells and
    running its linked graph; returns the per-step outputs' stacks, the shared states'
    last values and the number of steps run.

    The cells are the inner function's own: its lock keeps another thread running the
    same Op (two compiled functions sharing a node) out of them for the whole loop.
    """
    lock = getattr(fn, "_lock", None)
    with lock if lock is not None else nullcontext():
        # A call would first switch a tiered inner function to its final linker once that
        # is linked; the loop runs the linked graph itself, so it does so here.
        settle = getattr(fn, "settle_tier", None)
        if settle is not None:
            settle()
        cells = fn.input_cells[: len(op.inner_inputs)]
        out_cells = fn.output_cells[: len(op.inner_outputs)]
        try:
            # A linked graph's call without a wrapper's frame, where the linker says what
            # its wrapper calls (``__wrapped__``, as functools.wraps sets it).
            run = getattr(fn.fn, "__wrapped__", fn.fn)
            return _run_steps(op, run, cells, out_cells, n_steps, seqs, buffers, nit_rows, parts)
        finally:
            for cell in (*cells, *out_cells):
                cell[0] = None
            if getattr(op, "allow_gc", None) is None:
                _free_intermediates(fn)


def _run_steps(
    op: Scan,
    run: Callable[[], Any],
    cells: list[list[Any]],
    out_cells: list[list[Any]],
    n_steps: int,
    seqs: list[Any],
    buffers: list[np.ndarray],
    nit_rows: list[int],
    parts: dict[str, list[Any]],
) -> tuple[list[np.ndarray | None], list[Any], int]:
    """The body of :func:`_step_in_cells`, the lock held."""
    n_seqs, n_states, n_shared, _, n_nit, n_taps, depths, _, as_while, tap_states = _layout(op)
    # Every row is a view made once per call: a step's oldest tap and the row it writes
    # are the same object when they are the same row (a circular buffer of ``depth`` rows).
    buf_rows = [_rows(buf, len(buf)) for buf in buffers]
    seq_plan = [(cells[i], _rows(seq, n_steps)) for i, seq in enumerate(seqs)]
    tap_plan = [
        (cells[n_seqs + i], buf_rows[j], offset, len(buf_rows[j]))
        for i, (j, offset) in enumerate(tap_states)
    ]
    # A row no tap reads is preset as the place of the state's new value; the others are
    # the oldest tap's row, which the step computes in place or the loop copies into.
    state_plan = [
        (out_cells[j], rows, depths[j], len(rows), len(rows) > depths[j])
        for j, rows in enumerate(buf_rows)
    ]
    first_shared = n_seqs + n_taps
    for cell, value in zip(cells[first_shared + n_shared :], parts["non_seqs"], strict=True):
        cell[0] = value
    nits: list[np.ndarray | None] = [None] * n_nit
    layout = Layout(
        n_seqs, n_taps, n_shared, n_nit, tuple(plan[-1] for plan in state_plan), as_while
    )
    steps_run, shared = step_loop(layout)(
        n_steps,
        run,
        seq_plan,
        tap_plan,
        state_plan,
        cells[first_shared : first_shared + n_shared],
        parts["shared"],
        out_cells[n_states : n_states + n_nit],
        nits,
        nit_rows,
        _stack,
        out_cells[n_states + n_nit : n_states + n_nit + n_shared],
        out_cells[-1] if as_while else None,
    )
    return nits, shared, steps_run


def _stack(nits: list[np.ndarray | None], k: int, rows: int, t: int, value: Any) -> None:
    """Write step ``t``'s value of per-step output ``k`` into its stack of ``rows`` rows
    (entry ``t`` in row ``t % rows``), allocated at the first step, when its shape is known."""
    value = np.asarray(value)
    stack = nits[k]
    if stack is None:
        stack = nits[k] = np.empty((rows, *value.shape), dtype=value.dtype)
    stack[t % rows] = value


def _free_intermediates(fn: Any) -> None:
    """Empty the cells of the inner graph's intermediates once the loop is over (they are
    kept between steps only): what a collecting loop frees, the values nodes read that
    are neither inputs nor outputs of the graph."""
    storage_map = getattr(fn.fn, "storage_map", None)
    if storage_map is None or getattr(fn.fn, "allow_gc", True):
        return
    fgraph = fn.maker.fgraph
    outputs = set(fgraph.outputs)
    for node in fgraph.apply_nodes:
        for var in node.inputs:
            if var.owner is not None and var not in outputs and var in storage_map:
                storage_map[var][0] = None


def _step_by_calls(
    op: Scan,
    fn: Any,
    n_steps: int,
    seqs: list[Any],
    buffers: list[np.ndarray],
    nit_rows: list[int],
    parts: dict[str, list[Any]],
) -> tuple[list[np.ndarray | None], list[Any], int]:
    """The loop calling the inner function once per step (a profiled inner function)."""
    info = op.info
    n_states, n_nit = info.n_states, info.n_nit
    depths = info.depths
    taps = _tap_offsets(op, buffers)
    shared = list(parts["shared"])
    non_seqs = list(parts["non_seqs"])
    nits: list[np.ndarray | None] = [None] * n_nit
    steps_run = n_steps
    for t in range(n_steps):
        args = [seq[t] for seq in seqs]
        args += [buf[(t + offset) % len(buf)] for buf, offset in taps]
        outs = fn(*args, *shared, *non_seqs)
        for j in range(n_states):
            buffers[j][(t + depths[j]) % len(buffers[j])] = outs[j]
        for k in range(n_nit):
            _stack(nits, k, nit_rows[k], t, outs[n_states + k])
        shared = list(outs[n_states + n_nit : n_states + n_nit + info.n_shared])
        if info.as_while and bool(outs[-1]):
            steps_run = t + 1
            break
    return nits, shared, steps_run


def _tail(buf: np.ndarray, total: int, keep: int) -> np.ndarray:
    """The last ``keep`` (``0``: all) of the ``total`` entries written into ``buf``, oldest
    first; entry ``p`` lives in row ``p % len(buf)``."""
    if not keep:
        return buf[:total]
    start = max(total - keep, 0)
    if total <= len(buf):
        return buf[start:total]
    return buf[np.arange(start, total) % len(buf)]


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType({Scan: scan_perform})
