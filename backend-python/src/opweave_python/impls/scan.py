"""Python implementation of :mod:`opweave.scan`: the ``Scan`` loop.

The inner graph is compiled once per Op, the first time a node of it runs, with
:func:`opweave.function` in the Op's ``mode`` (``None``: the default mode, i.e.
``opweave.config.mode`` with ``opweave.config.linker``), and kept on the Op. Each step
calls it with the step's sequence entries, the states' tap entries, the shared states'
current values and the non-sequences. The states' outputs are preallocated buffers of
``depth + n_steps`` entries; per-step outputs are allocated after the first step, when
their shape is known. A while loop (``until``) returns only the steps it ran. An output
whose node keeps only its last ``k`` entries (``info.keep``, set by the rewrite
``scan_save_mem``) lives in a circular buffer of ``max(k, depth)`` rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.compile.maker import function
from opweave.configdefaults import config
from opweave.graph.basic import Apply
from opweave.scan.op import Scan

__all__ = ["PERFORMS", "inner_function", "scan_perform"]


def inner_function(op: Scan) -> Any:
    """The compiled inner function of ``op`` (compiled on first use, then cached on it)."""
    fn = op.__dict__.get("_inner_function")
    if fn is None:
        allow_gc = getattr(op, "allow_gc", None)
        flags = {} if allow_gc is None else {"allow_gc": bool(allow_gc)}
        with config.change_flags(**flags):
            fn = function(
                op.inner_inputs,
                op.inner_outputs,
                mode=op.mode,
                on_unused_input="ignore",
                name=f"{op} inner function",
                profile=getattr(op, "profile", False) or None,
            )
        op.__dict__["_inner_function"] = fn
    return fn


def scan_perform(
    op: Scan, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]
) -> None:
    """Run the loop (see the module docstring)."""
    info = op.info
    fn = inner_function(op)
    parts = op.split_outer_inputs(inputs)
    n_steps = int(parts["n_steps"][0])
    if n_steps < 0:
        raise ValueError(f"{op}: n_steps must not be negative, got {n_steps}")
    seqs = parts["seqs"]
    for i, seq in enumerate(seqs):
        if seq.shape[0] < n_steps:
            raise ValueError(
                f"{op}: sequence {i} has {seq.shape[0]} entries, fewer than n_steps={n_steps}"
            )
    depths = info.depths
    buffers = []
    for j, (init, depth) in enumerate(zip(parts["states"], depths, strict=True)):
        if init.shape[0] < depth:
            raise ValueError(
                f"{op}: state {j} needs {depth} initial values (taps {info.state_taps[j]}), "
                f"got {init.shape[0]}"
            )
        keep = info.kept(j)
        rows = depth + n_steps if not keep else min(max(keep, depth), depth + n_steps)
        buf = np.empty((max(rows, 1), *init.shape[1:]), dtype=init.dtype)
        buf[:depth] = init[:depth]
        buffers.append(buf)
    nits: list[np.ndarray | None] = [None] * info.n_nit
    shared = list(parts["shared"])
    non_seqs = list(parts["non_seqs"])
    taps = [
        (buf, depth + k) for buf, depth, ks in zip(buffers, depths, info.state_taps) for k in ks
    ]
    n_states, n_nit = info.n_states, info.n_nit
    nit_rows = [min(info.kept(n_states + k) or n_steps, n_steps) for k in range(n_nit)]
    steps_run = n_steps
    for t in range(n_steps):
        args = [seq[t] for seq in seqs]
        args += [buf[(t + offset) % len(buf)] for buf, offset in taps]
        outs = fn(*args, *shared, *non_seqs)
        for j in range(n_states):
            buffers[j][(t + depths[j]) % len(buffers[j])] = outs[j]
        for k in range(n_nit):
            value = np.asarray(outs[n_states + k])
            if nits[k] is None:
                nits[k] = np.empty((nit_rows[k], *value.shape), dtype=value.dtype)
            nits[k][t % nit_rows[k]] = value  # type: ignore[index]
        shared = list(outs[n_states + n_nit : n_states + n_nit + info.n_shared])
        if info.as_while and bool(outs[-1]):
            steps_run = t + 1
            break
    results: list[Any] = [
        _tail(buf, depth + steps_run, info.kept(j))
        for j, (buf, depth) in enumerate(zip(buffers, depths))
    ]
    for k, stacked in enumerate(nits):
        if stacked is None:  # no step ran: an empty stack
            inner = op.split_inner_outputs(op.inner_outputs)["nits"][k]
            shape = tuple(0 if s is None else s for s in inner.type.shape)
            stacked = np.empty((0, *shape), dtype=inner.type.dtype)
        results.append(_tail(stacked, steps_run, info.kept(n_states + k)))
    results += shared
    for cell, value in zip(output_storage, results, strict=True):
        cell[0] = value


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
