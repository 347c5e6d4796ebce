"""Lowerings of the Ops that carry a graph or choose between values: ``Scan``,
``IfElse`` and ``OpFromGraph``.

* A :class:`~opweave.scan.op.Scan` runs its inner graph (lowered with
  :class:`~opweave_jax.program.GraphProgram`) as the body of one ``jax.lax.scan`` over
  ``n_steps`` steps. The carry holds, for each state, the window of its last ``depth``
  values (the taps read entries of it) and the shared states' values; the sequences'
  first ``n_steps`` entries are scanned over, the non-sequences are closed over. A state's
  output is its initial values followed by the new value of every step; a per-step output
  is stacked over the steps; a shared state's output is its last value. An output the node
  keeps only the last entries of (``info.keep``) is the tail of the full one. ``n_steps``
  must be static (XLA compiles for fixed lengths). A random generator (a shared state of
  the loop) is carried as its JAX key data, so that every step draws anew
  (:mod:`opweave_jax.lowerings.random`). A loop with an ``until`` condition (its outputs'
  lengths are known only at run time) is refused when the function is compiled.
* An ``IfElse`` whose condition is static returns the selected values; otherwise both
  branches' values (the graph computes them already) go through ``jax.lax.cond``.
* An ``OpFromGraph`` is its inner graph, lowered in place.

The checks (``CheckAndRaise``) of an inner graph whose conditions depend on the input
values are raised after the call, as the outer graph's are (:mod:`opweave_jax.context`):
for a ``Scan``, when they fail at any step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opweave.compile.builders import OpFromGraph
from opweave.graph.basic import Apply, Variable
from opweave.graph.utils import NoImplementationError
from opweave.ifelse import IfElse
from opweave.scalar.type import ScalarType
from opweave.scan.op import Scan
from opweave.tensor.random.type import RandomType
from opweave.tensor.type import TensorType
from opweave_jax.context import defer_check
from opweave_jax.program import GraphProgram
from opweave_jax.values import is_static, key_data_of, static_int

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _as(value: Any, var: Variable) -> Any:
    """``value`` as a (strongly typed) JAX array of ``var``'s dtype; a random generator's
    as its key data (two ``uint32``)."""
    if isinstance(var.type, RandomType):
        if isinstance(value, np.random.Generator):
            value = key_data_of(value)
        return jnp.asarray(value, jnp.uint32)
    dtype = np.dtype(var.type.dtype)  # type: ignore[attr-defined]
    return jax.lax.convert_element_type(jnp.asarray(value), dtype)


def _program(op: Scan | OpFromGraph) -> GraphProgram:
    """The inner graph of ``op`` (over its inner inputs and outputs, as written: it is not
    rewritten again) as a :class:`GraphProgram`."""
    fgraph = op.fgraph
    return GraphProgram(fgraph, fgraph.toposort())


def _defer_all(program: GraphProgram, conditions: dict[str, Any]) -> None:
    """Raise the inner graph's deferred checks after the call, as the outer graph's."""
    for key, condition in conditions.items():
        check = program.checks[key]
        defer_check(condition, check.exc_type, check.msg, warn=check.warn)


# ---------------------------------------------------------------------- Scan


def _refuse_scan(op: Scan) -> None:
    """Refuse the loops ``jax.lax.scan`` does not express.

    Raises
    ------
    opweave.graph.utils.NoImplementationError
        For an ``until`` condition or an inner value that is not a tensor or a scalar.
    """
    if op.info.as_while:
        raise NoImplementationError(
            f"jax linker: {op} has an until condition (a while loop): the number of steps it "
            "runs, hence its outputs' lengths, is known only at run time, and XLA compiles "
            "for fixed shapes; build the loop without until (or use another linker)"
        )
    generators = {
        *op.split_inner_inputs(op.inner_inputs)["shared"],
        *op.split_inner_outputs(op.inner_outputs)["shared"],
    }
    for var in (*op.inner_inputs, *op.inner_outputs):
        if isinstance(var.type, TensorType | ScalarType):
            continue
        if isinstance(var.type, RandomType) and var in generators:
            continue
        raise NoImplementationError(
            f"jax linker: {op} has an inner value {var} of type {var.type}: the jax linker "
            "runs loops over tensors and scalars, with random generators as shared states "
            "only"
        )


def _tail(full: Any, keep: int) -> Any:
    """The last ``keep`` entries of ``full`` (all of them when ``keep`` is 0)."""
    if not keep:
        return full
    return full[max(int(jnp.shape(full)[0]) - keep, 0) :]


def scan(op: Scan, node: Apply) -> Fn:
    """One ``jax.lax.scan`` over the inner graph (see the module docstring)."""
    _refuse_scan(op)
    info = op.info
    program = _program(op)
    inner_out = op.split_inner_outputs(op.inner_outputs)
    depths = info.depths
    offsets = [[depth + k for k in taps] for depth, taps in zip(depths, info.state_taps)]
    n_states, n_nit = info.n_states, info.n_nit

    def run(*values: Any) -> Any:
        parts = op.split_outer_inputs(values)
        n_steps = static_int(parts["n_steps"][0], f"the number of steps of {op}")
        if n_steps < 0:
            raise ValueError(f"{op}: n_steps must not be negative, got {n_steps}")
        seqs = []
        for i, seq in enumerate(parts["seqs"]):
            if jnp.shape(seq)[0] < n_steps:
                raise ValueError(
                    f"{op}: sequence {i} has {jnp.shape(seq)[0]} entries, fewer than "
                    f"n_steps={n_steps}"
                )
            seqs.append(jnp.asarray(seq)[:n_steps])
        inits = []
        for j, (init, depth) in enumerate(zip(parts["states"], depths, strict=True)):
            if jnp.shape(init)[0] < depth:
                raise ValueError(
                    f"{op}: state {j} needs {depth} initial values (taps "
                    f"{info.state_taps[j]}), got {jnp.shape(init)[0]}"
                )
            inits.append(_as(init[:depth], inner_out["states"][j]))
        shared = [_as(v, var) for v, var in zip(parts["shared"], inner_out["shared"])]
        non_seqs = list(parts["non_seqs"])

        def body(carry: Any, xs: Any) -> Any:
            windows, shared_now = carry
            taps = [w[o] for w, offs in zip(windows, offsets) for o in offs]
            outs, conditions = program(*xs, *taps, *shared_now, *non_seqs)
            new = [_as(v, var) for v, var in zip(outs[:n_states], inner_out["states"])]
            nits = outs[n_states : n_states + n_nit]
            new_shared = [
                _as(v, var)
                for v, var in zip(outs[n_states + n_nit :], inner_out["shared"], strict=True)
            ]
            windows = [
                jnp.concatenate([w[1:], v[None]]) if jnp.shape(w)[0] > 1 else v[None]
                for w, v in zip(windows, new, strict=True)
            ]
            return (windows, new_shared), (new, nits, conditions)

        def loop() -> Any:
            return jax.lax.scan(body, (inits, shared), seqs, length=n_steps)

        if n_steps == 0:
            # No step runs: the stacks are empty (XLA miscompiles some slices of the
            # concatenation of a constant with an empty loop output).
            nit_shapes = jax.eval_shape(loop)[1][1]
            buffers = inits
            nits = [np.zeros(s.shape, s.dtype) for s in nit_shapes]
            last_shared = shared
        else:
            (_, last_shared), (states, nits, conditions) = loop()
            _defer_all(program, {key: jnp.all(c) for key, c in conditions.items()})
            buffers = [jnp.concatenate([a, b]) for a, b in zip(inits, states, strict=True)]
        results = [_tail(buf, info.kept(j)) for j, buf in enumerate(buffers)]
        results += [_tail(stacked, info.kept(n_states + k)) for k, stacked in enumerate(nits)]
        results += list(last_shared)
        return results[0] if len(results) == 1 else tuple(results)

    return run


# ---------------------------------------------------------------------- IfElse


def ifelse(op: IfElse, node: Apply) -> Fn:
    """Python selection for a static condition, else ``jax.lax.cond``."""
    n = op.n_outs
    outputs = node.outputs

    def run(condition: Any, *branches: Any) -> Any:
        then, other = branches[:n], branches[n:]
        if is_static(condition):
            chosen = then if bool(np.asarray(condition) != 0) else other
        else:
            for i, (a, b) in enumerate(zip(then, other, strict=True)):
                if jnp.shape(a) != jnp.shape(b):
                    raise NotImplementedError(
                        f"jax linker: {op}: output {i} has shape {jnp.shape(a)} in the then "
                        f"branch and {jnp.shape(b)} in the else branch, and the condition "
                        "depends on the input values; XLA compiles for fixed shapes"
                    )
            first = tuple(_as(v, var) for v, var in zip(then, outputs, strict=True))
            second = tuple(_as(v, var) for v, var in zip(other, outputs, strict=True))
            chosen = jax.lax.cond(jnp.asarray(condition) != 0, lambda: first, lambda: second)
        return chosen[0] if n == 1 else tuple(chosen)

    return run


# ---------------------------------------------------------------------- OpFromGraph


def op_from_graph(op: OpFromGraph, node: Apply) -> Fn:
    """The inner graph, lowered in place."""
    program = _program(op)

    def run(*values: Any) -> Any:
        outs, conditions = program(*values)
        _defer_all(program, conditions)
        return outs[0] if len(outs) == 1 else tuple(outs)

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Scan: scan,
    IfElse: ifelse,
    OpFromGraph: op_from_graph,
}
