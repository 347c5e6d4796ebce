"""Graphs of PyMC's time-series distributions, against NumPy and SciPy, on every linker.

``RandomWalk.dist(...).shape.eval()`` folds the shape of the draws to a constant, so the
compiled function keeps the random generator as an input that no node uses. The ``c``
linker (the whole graph in C) cannot pass a generator to C code and refuses, as
PyTensor's does, with ``NotImplementedError``; opweave's ``c`` linker raised
``StopIteration`` while looking for the node that uses the generator. The other linkers
give the shape. The log-densities of ``GaussianRandomWalk`` (normal increments) and
``GARCH11`` (a ``scan`` over the volatility recursion) are compared with SciPy's on each
linker that runs them (``scan`` has no C code, so not on ``c``).

``EulerMaruyama``, ``Mixture`` and ``Truncated`` without a ``size`` take it from
``broadcast_shape(init_dist, ...)``. As in PyTensor, each length not known to be 1 is
``x.shape[i]``, also where the type knows it, so the input distributions (and their
generators) stay in the graph: PyMC seeds every generator it finds there, in graph order,
and with the lengths folded to constants opweave seeded fewer generators and drew other
values than PyTensor for the same ``random_seed``. A random variable whose ``size`` holds
such lengths still gets the static shape they fold to (as PyTensor's
``infer_static_shape``: through the ``Assert`` that checks two lengths are equal).
``full(size, c)`` of such a ``size`` vector (PyMC's ``DiracDelta``, inside an
``OpFromGraph(strict=True)`` whose input is ``size``) allocates with ``size[i]``, as
PyTensor does, not with the entries of the ``MakeVector``: those lead to the random
variables outside the inner graph, which a strict ``OpFromGraph`` refuses.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.stats as st
from differential.runner import usable_linkers

import opweave
import opweave.tensor as tensor
from opweave.compile.builders import OpFromGraph
from opweave.compile.mode import Mode
from opweave.graph.traversal import ancestors
from opweave.scan import scan

#: The tensor functions, typed loosely (their types also allow lists of variables).
pt: Any = tensor

#: The linkers this file compares (jax draws with ``jax.random``, not NumPy's generator).
LINKERS = [name for name in usable_linkers() if name in ("py", "vm", "c", "cvm")]
#: Those that run a ``scan`` (the ``c`` linker compiles only graphs of C code).
SCAN_LINKERS = [name for name in LINKERS if name != "c"]

# PyMC's TestGARCH11.test_logp data and parameters
GARCH_DATA = np.array(
    [
        *(-1.35078362, -0.81254164, 0.28918551, -2.87043544, -0.94353337, 0.83660719),
        *(-0.23336562, -0.58586298, -1.36856736, -1.60832975, -1.31403141, 0.05446936),
        *(-0.97213128, -0.18928725, 1.62011258, -0.95978616, -2.06536047, 0.6556103),
        *(-0.27816645, -1.26413397),
    ]
)
OMEGA, ALPHA, BETA, VOL0 = 0.6, 0.4, 0.5, 0.9


def _unused_generator_graph() -> tuple[Any, Any]:
    rng = opweave.shared(np.random.default_rng(3))
    draws = pt.random.normal(rng=rng, size=(3, 4))
    return rng, draws.shape


def test_c_linker_refuses_a_generator_input_no_node_uses() -> None:
    if "c" not in LINKERS:
        pytest.skip("the c linker is not usable here")
    _, shape = _unused_generator_graph()
    with pytest.raises(NotImplementedError, match="input of the function that no node uses"):
        opweave.function([], shape, mode=Mode(linker="c"))


@pytest.mark.parametrize("linker", SCAN_LINKERS)
def test_shape_of_draws_with_an_unused_generator(linker: str) -> None:
    _, shape = _unused_generator_graph()
    fn = opweave.function([], shape, mode=Mode(linker=linker))
    np.testing.assert_array_equal(fn(), [3, 4])


@pytest.mark.parametrize("linker", LINKERS)
def test_gaussian_random_walk_logp(linker: str) -> None:
    value, mu, sigma = pt.dvector("value"), pt.dscalar("mu"), pt.dscalar("sigma")
    increments = value[1:] - value[:-1]
    init = -0.5 * (value[0] / 100.0) ** 2 - np.log(100.0) - 0.5 * np.log(2 * np.pi)
    innov = -0.5 * ((increments - mu) / sigma) ** 2 - pt.log(sigma) - 0.5 * np.log(2 * np.pi)
    fn = opweave.function([value, mu, sigma], init + innov.sum(), mode=Mode(linker=linker))
    walk = np.cumsum(np.random.default_rng(11).normal(2.0, 1.0, size=50))
    expected = st.norm(0, 100).logpdf(walk[0]) + st.norm(2.0, 1.3).logpdf(np.diff(walk)).sum()
    np.testing.assert_allclose(fn(walk, 2.0, 1.3), expected, rtol=1e-13)


def _garch_volatility(y: Any, vol0: Any) -> Any:
    def step(y_prev: Any, vol_prev: Any) -> Any:
        return pt.sqrt(OMEGA + BETA * vol_prev**2 + ALPHA * y_prev**2)

    vols = scan(step, sequences=[y[:-1]], outputs_info=[vol0], return_updates=False)
    return pt.concatenate([pt.atleast_1d(vol0), vols])


@pytest.mark.parametrize("linker", SCAN_LINKERS)
def test_garch11_logp(linker: str) -> None:
    y, vol0 = pt.dvector("y"), pt.dscalar("vol0")
    vol = _garch_volatility(y, vol0)
    logp = -0.5 * (y / vol) ** 2 - pt.log(vol) - 0.5 * np.log(2 * np.pi)
    fn = opweave.function([y, vol0], [vol, logp], mode=Mode(linker=linker))
    got_vol, got_logp = fn(GARCH_DATA, VOL0)
    want_vol = np.empty_like(GARCH_DATA)
    want_vol[0] = VOL0
    for i in range(len(GARCH_DATA) - 1):
        want_vol[i + 1] = np.sqrt(OMEGA + BETA * want_vol[i] ** 2 + ALPHA * GARCH_DATA[i] ** 2)
    np.testing.assert_allclose(got_vol, want_vol, rtol=1e-14)
    np.testing.assert_allclose(got_logp, st.norm(0, want_vol).logpdf(GARCH_DATA), rtol=1e-13)


def test_broadcast_shape_keeps_the_tensors_in_the_graph() -> None:
    rng = opweave.shared(np.random.default_rng(0))
    init = pt.random.normal(size=(3,), rng=rng)
    shape = pt.broadcast_shape(pt.as_tensor(np.ones(3)), init, pt.as_tensor(np.ones((2, 1))))
    assert len(shape) == 2
    assert init in set(ancestors(shape))
    assert rng in set(ancestors(shape))


@pytest.mark.parametrize("linker", SCAN_LINKERS)
def test_broadcast_shape_of_static_shapes(linker: str) -> None:
    a, b = pt.as_tensor(np.ones((2, 1))), pt.zeros((1, 3))
    c = pt.tensor("c", dtype="float64", shape=(None, 3))
    fn = opweave.function([c], list(pt.broadcast_shape(a, b, c)), mode=Mode(linker=linker))
    np.testing.assert_array_equal(fn(np.ones((2, 3))), np.broadcast_shapes((2, 1), (1, 3), (2, 3)))
    with pytest.raises(AssertionError):
        fn(np.ones((4, 3)))
    bad = pt.broadcast_shape(pt.zeros((2,)), pt.zeros((3,)))
    with pytest.raises(AssertionError, match="Could not broadcast"):
        opweave.function([], list(bad), mode=Mode(linker=linker))()


def test_size_from_broadcast_shape_has_a_static_shape() -> None:
    init, innovation = pt.random.normal(size=(3,)), pt.random.normal(size=(3,))
    size = pt.broadcast_shape(init, innovation)  # one length, checked equal to the other
    x = pt.random.normal(size=size)
    assert x.type.shape == (3,)
    y = pt.random.normal(size=(2, *size))
    assert y.type.shape == (2, 3)


@pytest.mark.parametrize("linker", SCAN_LINKERS)
def test_draws_of_a_size_from_broadcast_shape(linker: str) -> None:
    rng = opweave.shared(np.random.default_rng(0))
    init = pt.random.normal(size=(3,))
    x = pt.random.normal(np.arange(3.0), 2.0, size=pt.broadcast_shape(init), rng=rng)
    got = opweave.function([], x, mode=Mode(linker=linker))()
    np.testing.assert_array_equal(
        got, np.random.default_rng(0).normal(np.arange(3.0), 2.0, size=(3,))
    )


@pytest.mark.parametrize("linker", SCAN_LINKERS)
def test_full_of_a_size_vector_in_a_strict_inner_graph(linker: str) -> None:
    init = pt.random.normal(size=(3,), rng=opweave.shared(np.random.default_rng(0)))
    size = pt.as_tensor(pt.broadcast_shape(init, pt.as_tensor(np.ones((2, 1)))))
    filled = pt.full(size, 2.5)
    assert size in set(ancestors([filled]))
    size_in, c_in = size.type(), pt.dscalar("c")
    op = OpFromGraph([size_in, c_in], [pt.full(size_in, c_in)], strict=True)
    fn = opweave.function([], op(size, 2.5), mode=Mode(linker=linker))
    np.testing.assert_array_equal(fn(), np.full((2, 3), 2.5))
