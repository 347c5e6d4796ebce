"""``local_useless_subtensor``: an index that keeps every element is no node at all."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.tensor.subtensor import Subtensor

FAST_RUN = Mode(linker="vm", optimizer="fast_run")
NO_REWRITE = Mode(linker="vm", optimizer=None)


def subtensors(f: opweave.compile.Function) -> list[Subtensor]:
    return [n.op for n in f.maker.fgraph.toposort() if isinstance(n.op, Subtensor)]


@pytest.mark.parametrize(
    ("index", "kept"),
    [
        ((slice(None, None, 1),), False),
        ((slice(0, None), slice(None, None, 1)), False),
        ((slice(1, None),), True),
        ((slice(None, None, -1),), True),
        ((slice(None, 1),), True),
        ((0,), True),
    ],
)
def test_whole_slices_go_and_others_stay(index: tuple, kept: bool) -> None:
    x = ot.dmatrix("x")
    out = x[index]
    f = opweave.function([x], out, mode=FAST_RUN)
    assert bool(subtensors(f)) == kept
    a = np.arange(6.0).reshape(2, 3)
    got = f(a)
    np.testing.assert_array_equal(got, a[index])
    assert not np.shares_memory(got, a)  # a function's output never aliases its input


def test_a_new_axis_of_a_scalar_is_its_expand_dims_alone() -> None:
    b = ot.dscalar("b")
    f = opweave.function([b], b[None], mode=FAST_RUN)
    assert subtensors(f) == []
    np.testing.assert_array_equal(f(-0.0), [-0.0])
    ref = opweave.function([b], b[None], mode=NO_REWRITE)
    assert f(2.5).shape == ref(2.5).shape == (1,)


def test_symbolic_bounds_are_kept() -> None:
    x, k = ot.dvector("x"), ot.iscalar("k")
    f = opweave.function([x, k], x[k:], mode=FAST_RUN)
    assert len(subtensors(f)) == 1
    np.testing.assert_array_equal(f(np.arange(4.0), 0), np.arange(4.0))
