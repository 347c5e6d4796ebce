"""Back-propagation through time: the gradient of a :class:`~opweave.scan.op.Scan` node.

The gradient is a second loop, built with :func:`~opweave.scan.scan`, that runs over the
forward steps from the last to the first (the last ``truncate_gradient`` ones only, when
it is positive). Its step ``t`` reads the forward step's sequence entries and stored tap
values, and the gradients of the step's outputs, and carries:

* for each (floating-point) state of depth ``d``, a *window*: the gradient accumulated so
  far for the ``d`` buffer entries that steps ``t`` and earlier may still read (entry ``p``
  is the state's value written by forward step ``p - d``). The gradient of step ``t``'s
  output is that of its buffer entry, ``G[t + d]`` plus the window's last row; the taps'
  gradients are added to the shifted window. A state of depth 1 read through its one tap
  (the common ``outputs_info=h0``) carries that entry's gradient itself, the gradient of
  its tap, as NumPy's hand-written backpropagation carries ``dh``: no window to shift,
  stack or fill with zeros;
* for each (floating-point) non-sequence, the sum of its gradients over the steps.

The sequences' gradients are the loop's per-step outputs, put back in forward order. After
the first step the window holds the gradient of the initial values (zero when the loop
was truncated before it).

A while loop (``until``) back-propagates, as PyTensor's does, through the steps it actually
ran: ``n_steps`` is then only their maximum, and the forward outputs tell how many ran (a
state of depth ``d`` holds ``d + steps`` entries, a per-step output ``steps``). The
condition has no gradient, ``truncate_gradient`` counts back from the last step run, the
rows of a sequence past that step get a zero gradient, and the non-sequences' gradients sum
over the steps run only.

Gradients through shared variables the body updates are not implemented.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opweave.configdefaults import config
from opweave.gradient import grad
from opweave.gradient.opsupport import grad_not_implemented
from opweave.graph.basic import Constant
from opweave.graph.replace import clone_replace
from opweave.graph.traversal import ancestors
from opweave.graph.type import DisconnectedType, disconnected_type
from opweave.scan.builder import build_scan
from opweave.tensor.basic import Alloc, stack, switch, tensor_copy, zeros_like
from opweave.tensor.math import ge, minimum
from opweave.tensor.shape import shape_padleft
from opweave.tensor.subtensor import IncSubtensor, set_subtensor

if TYPE_CHECKING:
    from opweave.scan.op import Scan

__all__ = ["scan_grad"]


def _is_float(v: Any) -> bool:
    return str(getattr(v.type, "dtype", "")).startswith(("float", "complex"))


def _connected(g: Any) -> bool:
    return not isinstance(g.type, DisconnectedType)


def _not_implemented(op: Scan, inputs: list[Any], why: str) -> list[Any]:
    return [disconnected_type()] + [
        grad_not_implemented(op, i, x, why) if _is_float(x) else disconnected_type()
        for i, x in enumerate(inputs)
        if i > 0
    ]


def _no_grad(x: Any) -> Any:
    """The gradient term of an input this loop's gradient does not reach: float zeros of
    its shape (``Scan.L_op`` turns it into a DisconnectedType where the connection
    pattern does not connect the input either)."""
    if not hasattr(x.type, "dtype"):
        return disconnected_type()
    return zeros_like(x, dtype=x.type.dtype if _is_float(x) else config.floatX)


def _last(result: Any) -> Any:
    """The last value of a state of the backward loop, or its initial value when that loop
    ran no step (``n_steps`` 0): the last row of the node's buffer (``build_scan`` returns
    ``buffer[1:]`` for a state with one tap)."""
    return result.owner.inputs[0][-1]


def _one_row(taps: tuple[int, ...]) -> bool:
    """Whether a state with ``taps`` carries its gradient as one entry (no window)."""
    return tuple(taps) == (-1,)


def _is_zeros(x: Any) -> bool:
    """Whether ``x`` is ``Alloc`` of the constant 0 (what ``zeros_like`` builds)."""
    owner = x.owner
    if owner is None or not isinstance(owner.op, Alloc):
        return False
    value = owner.inputs[0]
    return isinstance(value, Constant) and value.data.size == 1 and not value.data.any()


def _after(g: Any, start: int) -> Any:
    """``g[start:]``; when ``g`` is the gradient of the output's entries from ``start``
    only (``zeros`` with ``gz`` added at ``[start:]``, as reading ``out[start:]`` gives),
    ``gz`` itself: the loop then reads the gradient of its steps without zeros being
    allocated and filled first."""
    owner = g.owner
    if (
        owner is not None
        and isinstance(owner.op, IncSubtensor)
        and len(owner.inputs) == 2
        and owner.op.idx_list == (slice(start, None, None),)
        and _is_zeros(owner.inputs[0])
    ):
        gz = owner.inputs[1]
        n = g.type.shape[0]
        region = (None if n is None else n - start, *g.type.shape[1:])
        # the entries' Type but for static lengths: nothing is broadcast into them
        if (
            gz.type.dtype == g.type.dtype
            and gz.type.ndim == g.type.ndim
            and all(a != 1 or b == 1 for a, b in zip(gz.type.shape, region, strict=True))
        ):
            return gz
    return g[start:]


def _seeds(outs: list[Any]) -> dict[Any, Any]:
    """Where each of a step's outputs gets its known gradient: the output itself, or a
    copy of it (``tensor_copy``) when it is also an ancestor of another output.

    ``grad`` takes a known gradient as the whole gradient of its variable: seeding an
    output that another output is computed from would drop what flows into it through
    that other output (``h`` and ``sin(h)`` returned by one step gave gradients that
    missed the ``sin`` path). A copy is a leaf of the step's graph, so the known
    gradient and the gradient through the other outputs add up at the output.
    """
    found = set(outs)
    shadowed = set()
    for o in outs:
        shadowed |= {a for a in ancestors([o]) if a is not o and a in found}
    return {o: tensor_copy(o) if o in shadowed else o for o in outs}


def _steps_run(op: Scan, n_steps: Any, outputs: list[Any]) -> Any:
    """How many steps the forward loop ran: ``n_steps`` for a for loop; for a while loop,
    read off its first state (``d + steps`` entries) or per-step output (``steps``)."""
    info = op.info
    if not info.as_while:
        return n_steps
    if info.n_states:
        return outputs[0].shape[0] - info.depths[0]
    if info.n_nit:
        return outputs[info.n_states].shape[0]
    # only shared states: no gradient flows through the body, every gradient is zero
    return n_steps


def scan_grad(
    op: Scan,
    inputs: list[Any],
    outputs: list[Any],
    output_grads: list[Any],
) -> list[Any]:
    """The gradients of ``op``'s node inputs (see the module docstring)."""
    info = op.info
    if any(info.keep):
        return _not_implemented(op, inputs, "a loop keeping only its last steps (scan_save_mem)")
    in_inner = op.split_inner_inputs(op.inner_inputs)
    out_inner = op.split_inner_outputs(op.inner_outputs)
    body = [*out_inner["states"], *out_inner["nits"]]
    if info.n_shared and set(in_inner["shared"]) & set(ancestors(body)):
        return _not_implemented(op, inputs, "the body reads shared variables it updates")

    outer = op.split_outer_inputs(inputs)
    n_steps = inputs[0]
    depths = info.depths
    n_st = info.n_states
    state_outs = outputs[:n_st]
    state_grads = [
        g if _connected(g) else zeros_like(o)
        for o, g in zip(state_outs, output_grads[:n_st], strict=True)
    ]
    nit_grads = output_grads[n_st : n_st + info.n_nit]

    diff_states = [j for j in range(n_st) if _is_float(state_outs[j])]
    diff_nits = [
        k for k, g in enumerate(nit_grads) if _connected(g) and _is_float(out_inner["nits"][k])
    ]
    diff_seqs = [i for i, x in enumerate(outer["seqs"]) if _is_float(x)]
    diff_non_seqs = [i for i, x in enumerate(outer["non_seqs"]) if _is_float(x)]

    # forward inner tap inputs, by state
    tap_inner: list[list[Any]] = op.taps_per_state()

    n_run = _steps_run(op, n_steps, outputs)
    n_back = n_run if info.truncate_gradient == -1 else minimum(n_run, info.truncate_gradient)

    def back(x: Any) -> Any:
        """The last ``n_back`` forward steps run of ``x``, last first."""
        return x[n_run - n_back : n_run][::-1]

    seqs_g = [back(_after(state_grads[j], depths[j])) for j in diff_states]
    seqs_g += [back(nit_grads[k]) for k in diff_nits]
    seqs_fwd = [back(x) for x in outer["seqs"]]
    seqs_taps = [
        back(state_outs[j][depths[j] + k :]) for j in range(n_st) for k in info.state_taps[j]
    ]
    # what the forward step wrote: the body's outputs are read, not computed again
    seqs_out = [back(state_outs[j][depths[j] :]) for j in range(n_st)]
    seqs_out += [back(outputs[n_st + k]) for k in range(info.n_nit)]
    windows0 = [
        zeros_like(state_outs[j][0])
        if _one_row(info.state_taps[j])
        else zeros_like(state_outs[j][: depths[j]])
        for j in diff_states
    ]
    accs0 = [zeros_like(outer["non_seqs"][i]) for i in diff_non_seqs]
    non_seqs = list(outer["non_seqs"])
    n_g, n_fwd, n_taps, n_out = len(seqs_g), len(seqs_fwd), len(seqs_taps), len(seqs_out)

    def step(*args: Any) -> list[Any]:
        g_t = args[:n_g]
        fwd_t = args[n_g : n_g + n_fwd]
        taps_t = args[n_g + n_fwd : n_g + n_fwd + n_taps]
        out_t = args[n_g + n_fwd + n_taps : n_g + n_fwd + n_taps + n_out]
        rest = args[n_g + n_fwd + n_taps + n_out :]
        n_w = len(diff_states)
        windows, accs = rest[:n_w], rest[n_w : len(rest) - len(non_seqs)]
        replace: dict[Any, Any] = dict(zip(in_inner["seqs"], fwd_t, strict=True))
        replace.update(zip(in_inner["taps"], taps_t, strict=True))
        replace.update(zip(in_inner["non_seqs"], non_seqs, strict=True))
        outs = clone_replace(body, replace=replace)
        seeds = _seeds(outs)
        known: dict[Any, Any] = {}
        for n, j in enumerate(diff_states):
            last = windows[n] if _one_row(info.state_taps[j]) else windows[n][depths[j] - 1]
            adj, o = g_t[n] + last, seeds[outs[j]]
            known[o] = known[o] + adj if o in known else adj
        for n, k in enumerate(diff_nits):
            o, adj = seeds[outs[n_st + k]], g_t[len(diff_states) + n]
            known[o] = known[o] + adj if o in known else adj
        tap_map = {v: taps_t[i] for i, v in enumerate(in_inner["taps"])}
        wrt_taps = [tap_map[v] for j in diff_states for v in tap_inner[j]]
        wrt = [fwd_t[i] for i in diff_seqs] + wrt_taps + [non_seqs[i] for i in diff_non_seqs]
        grads = (
            grad(
                None,
                wrt,
                known_grads=known,
                disconnected_inputs="ignore",
                return_disconnected="zero",
            )
            if known and wrt
            else [zeros_like(w) for w in wrt]
        )
        # The gradients read the step's outputs where they need them (tanh's is 1 - out**2):
        # those are the values the forward step stored, so the body is not computed again
        # for them (a body whose gradient needs only its outputs is not computed at all).
        stored = {o: v for o, v in zip(outs, out_t, strict=True) if o.owner is not None}
        grads = clone_replace(grads, replace=stored) if stored else grads
        g_seqs = grads[: len(diff_seqs)]
        g_taps = grads[len(diff_seqs) : len(diff_seqs) + len(wrt_taps)]
        g_non_seqs = grads[len(diff_seqs) + len(wrt_taps) :]
        new_windows, pos = [], 0
        for n, j in enumerate(diff_states):
            d, taps = depths[j], info.state_taps[j]
            if _one_row(taps):
                new_windows.append(g_taps[pos])
                pos += 1
                continue
            rows = [windows[n][i - 1] if i else zeros_like(windows[n][0]) for i in range(d)]
            for k, g_k in zip(taps, g_taps[pos : pos + len(taps)], strict=True):
                rows[d + k] = rows[d + k] + g_k
            pos += len(taps)
            new_windows.append(stack(rows))
        new_accs = [a + g for a, g in zip(accs, g_non_seqs, strict=True)]
        return [*new_windows, *new_accs, *g_seqs]

    results, _ = build_scan(
        type(op),
        step,
        sequences=[*seqs_g, *seqs_fwd, *seqs_taps, *seqs_out],
        outputs_info=[*windows0, *accs0, *([None] * len(diff_seqs))],
        non_sequences=non_seqs,
        n_steps=n_back,
        mode=op.mode,
        name=f"grad_of_{op.name}" if op.name else "grad_of_scan",
        return_list=True,
    )
    n_w, n_a = len(diff_states), len(diff_non_seqs)
    windows_out, accs_out, gseq_out = results[:n_w], results[n_w : n_w + n_a], results[n_w + n_a :]

    grads_out: list[Any] = [disconnected_type()]
    for i, x in enumerate(outer["seqs"]):
        if i in diff_seqs:
            g_rev = gseq_out[diff_seqs.index(i)]
            grads_out.append(set_subtensor(zeros_like(x)[n_run - n_back : n_run], g_rev[::-1]))
        else:
            grads_out.append(_no_grad(x))
    complete = ge(n_back, n_run)
    for j in range(n_st):
        if j in diff_states:
            w = _last(windows_out[diff_states.index(j)])
            w = shape_padleft(w) if _one_row(info.state_taps[j]) else w
            through = w if info.truncate_gradient == -1 else switch(complete, w, zeros_like(w))
            grads_out.append(state_grads[j][: depths[j]] + through)
        else:
            grads_out.append(_no_grad(outer["states"][j]))
    for i, x in enumerate(outer["shared"]):
        grads_out.append(
            grad_not_implemented(op, 1 + info.n_seqs + n_st + i, x, "shared variables updated")
            if _is_float(x)
            else disconnected_type()
        )
    for i, x in enumerate(outer["non_seqs"]):
        grads_out.append(
            _last(accs_out[diff_non_seqs.index(i)]) if i in diff_non_seqs else _no_grad(x)
        )
    return grads_out
