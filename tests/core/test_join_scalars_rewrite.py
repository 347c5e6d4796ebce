"""``concatenate`` of scalars made vectors (``g.ravel()`` of each scalar gradient, as
PyMC's ``dlogp`` does) becomes one ``MakeVector``."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.tensor.basic import Join, MakeVector
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.shape import Reshape

FAST_RUN = Mode(linker="vm", optimizer="fast_run")
NO_REWRITE = Mode(linker="vm", optimizer=None)


def ops(f: opweave.compile.Function) -> list[type]:
    return [type(node.op) for node in f.maker.fgraph.toposort()]


def test_raveled_scalars_joined_become_one_make_vector() -> None:
    a, b = ot.dscalars("a", "b")
    c = ot.iscalar("c")
    out = ot.concatenate([a.ravel(), ot.expand_dims(b, 0), c.reshape((1,))])
    f = opweave.function([a, b, c], out, mode=FAST_RUN)
    kinds = ops(f)
    assert MakeVector in kinds
    assert not {Join, Reshape, DimShuffle} & set(kinds)
    got = f(1.5, -0.0, 3)
    assert got.dtype == "float64" and got.shape == (3,)
    np.testing.assert_array_equal(got, [1.5, -0.0, 3.0])
    assert np.signbit(got[1])


def test_gradients_of_scalars_concatenated() -> None:
    a, b = ot.dscalars("a", "b")
    grads = opweave.grad(ot.exp(a) * b**2, [a, b])
    out = ot.concatenate([g.ravel() for g in grads])
    f = opweave.function([a, b], out, mode=FAST_RUN)
    assert not {Join, Reshape} & set(ops(f))
    ref = opweave.function([a, b], out, mode=NO_REWRITE)
    np.testing.assert_allclose(f(0.3, 2.0), ref(0.3, 2.0), rtol=1e-15)


@pytest.mark.parametrize("build", ["vector", "two_entries"])
def test_other_joins_are_left_alone(build: str) -> None:
    a = ot.dscalar("a")
    v = ot.dvector("v")
    if build == "vector":
        out = ot.concatenate([a.ravel(), v])  # not every entry is a scalar's
    else:
        out = ot.concatenate([ot.stack([a, a]), a.ravel()])
    f = opweave.function([a, v], out, mode=FAST_RUN, on_unused_input="ignore")
    ref = opweave.function([a, v], out, mode=NO_REWRITE, on_unused_input="ignore")
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(f(4.0, x), ref(4.0, x))
    if build == "vector":
        assert Join in ops(f)


def test_a_join_of_random_draws_is_left_alone() -> None:
    """An entry made by an Op whose first input is no tensor (a random variable's
    generator) is not a scalar's vector: the join stays, and compiling works."""
    from opweave.tensor.random.utils import RandomStream

    srng = RandomStream(3)
    a = ot.dscalar("a")
    draw = srng.normal(size=(1,))
    f = opweave.function([a], ot.concatenate([draw, a.ravel()]), mode=FAST_RUN)
    got = f(2.0)
    assert got.shape == (2,) and got[1] == 2.0 and np.isfinite(got[0])
