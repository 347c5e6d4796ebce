"""FAST_RUN (every standard rewrite) and FAST_COMPILE (merge and constant folding) agree with
an unrewritten graph on the standard library's Ops."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.testing import usable_linkers

RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 4))
Y = RNG.normal(size=(3, 4))
V = RNG.normal(size=4)
INTS = np.array([[3, -7, 0, 5], [-2, 9, 4, -1], [6, 1, -8, 2]], dtype="int64")

x, y = ot.dmatrix("x"), ot.dmatrix("y")
v = ot.dvector("v")
i = ot.lmatrix("i")

CASES = {
    "fused_elemwise": ot.exp(x) * y + x,
    "neutral_elements": (x * 1.0 + 0.0) - (y - y),
    "double_neg": ot.neg(ot.neg(x)) + ot.log(1 + ot.exp(y)),
    "stable_forms": ot.log(1 + x**2) + (ot.exp(y) - 1),
    "broadcast_vector": x * v + ot.sqrt(ot.abs(v)),
    "comparisons": ot.switch(ot.gt(x, y), x, y) + ot.maximum(x, 0.5),
    "int_arith": (i // 3) + (i % 3) * 2 - ot.abs(i),
    "reductions": ot.sum(x**2, axis=1) + ot.max(y, axis=1) - ot.mean(x, axis=1),
    "sum_of_dimshuffle": ot.sum(x.T, axis=0) + ot.prod(y.dimshuffle(1, 0), axis=0),
    "var_std": ot.var(x, axis=0) + ot.std(y, axis=0),
    "argmax": ot.argmax(x, axis=1) + ot.argmin(y, axis=1),
    "dot_transposes": ot.dot(x.T, y.T.T),
    "matmul_outer": ot.matmul(x, y.T) + ot.outer(ot.sum(x, axis=1), ot.ones(3)),
    "softmax_log": ot.log(ot.softmax(x, axis=-1)) + ot.log_softmax(y, axis=-1),
    "logsumexp": ot.logsumexp(x * 100.0, axis=1),
    "shape_from_infer_shape": ot.cast(ot.exp(x).shape[0] * ot.dot(x, y.T).shape[1], "float64"),
    "reshape_flatten": ot.reshape(x, (4, 3)).flatten() + ot.flatten(y.T),
    "alloc_zeros_ones": ot.zeros((3, 4)) + ot.ones_like(x) * 2.0 + ot.alloc(1.5, 3, 4),
    "join_stack_split": ot.concatenate([x, y], axis=0).sum() + ot.stack([v, v]).sum(),
    "subtensor": x[1:, ::2] * 2.0 + y[-1, 0],
    "set_inc_subtensor": ot.set_subtensor(x[0], v) + ot.inc_subtensor(y[:, 1], 1.0),
    "take": ot.take(x, ot.constant(np.array([2, 0, 2])), axis=0).sum(axis=0),
    "constants_folded": ot.constant(np.arange(4.0)) * 2.0 + ot.exp(ot.constant(1.0)) + v,
    "arange_eye": ot.arange(4) * v + ot.eye(4)[0],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_run_and_fast_compile_agree(name: str) -> None:
    expr = CASES[name]
    inputs = [var for var in (x, y, v, i) if var in opweave.graph.graph_inputs([expr])]
    values = {x: X, y: Y, v: V, i: INTS}
    args = [values[var] for var in inputs]
    reference = opweave.function(inputs, expr, mode=Mode(linker="py", optimizer=None))(*args)
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        got = opweave.function(inputs, expr, mode=mode)(*args)
        assert got.dtype == reference.dtype and got.shape == reference.shape, mode
        np.testing.assert_allclose(got, reference, rtol=1e-12, atol=1e-12, err_msg=mode)


def test_fast_run_rewrites_change_the_graph() -> None:
    """The agreement above is not vacuous: FAST_RUN really rewrote these graphs."""
    fused = opweave.function([x, y], CASES["fused_elemwise"], mode="FAST_RUN")
    assert len(fused.maker.fgraph.apply_nodes) == 1
    folded = opweave.function([v], CASES["constants_folded"], mode="FAST_COMPILE")
    assert len(folded.maker.fgraph.apply_nodes) < len(
        opweave.function(
            [v], CASES["constants_folded"], mode=Mode(optimizer=None)
        ).maker.fgraph.apply_nodes
    )


#: Every linker usable here with its own kernels (``vm``/``cvm`` run ``py``'s/``c``'s).
LINKERS = [name for name in ("c", "jax", "dask") if name in usable_linkers()]


def _every_case_agrees_with_the_unrewritten_python_graph(mode: Mode | str) -> None:
    values = {x: X, y: Y, v: V, i: INTS}
    for name, expr in sorted(CASES.items()):
        inputs = [var for var in (x, y, v, i) if var in opweave.graph.graph_inputs([expr])]
        args = [values[var] for var in inputs]
        reference = opweave.function(inputs, expr, mode=Mode(linker="py", optimizer=None))(*args)
        got = opweave.function(inputs, expr, mode=mode)(*args)
        assert got.dtype == reference.dtype and got.shape == reference.shape, name
        np.testing.assert_allclose(got, reference, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("linker", LINKERS)
def test_every_linker_agrees_with_the_unrewritten_python_graph(linker: str) -> None:
    """The cases above, rewritten by FAST_RUN, on each whole-graph linker (``c``, ``jax``,
    ``dask``): the same values as the unrewritten graph on ``py``."""
    _every_case_agrees_with_the_unrewritten_python_graph(Mode(linker=linker))


def test_jax_mode_agrees_with_the_unrewritten_python_graph() -> None:
    """PyTensor's ``JAX`` mode (its own rewrite query) gives the same values."""
    if "jax" not in usable_linkers():
        pytest.skip("opweave-jax is not installed")
    _every_case_agrees_with_the_unrewritten_python_graph("JAX")
