"""Outputs never alias the caller's inputs, constants, or each other (memory regions)."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode, Out


@pytest.mark.parametrize("linker", ["py", "vm"])
def test_views_of_inputs_are_copied(linker: str) -> None:
    x = ot.dmatrix("x")
    mode = Mode(linker=linker, optimizer=None)
    for expr in (x[1:], x.T, x.reshape((-1,)), x.dimshuffle(1, 0)):
        f = opweave.function([x], expr, mode=mode)
        arr = np.arange(6.0).reshape(2, 3)
        out = f(arr)
        assert not np.shares_memory(out, arr), expr
        assert "DeepCopyOp" in [str(n.op) for n in f.maker.fgraph.toposort()]


@pytest.mark.parametrize("linker", ["py", "vm"])
def test_outputs_sharing_memory_are_separated(linker: str) -> None:
    x = ot.dvector("x")
    y = x * 2.0
    f = opweave.function([x], [y, y[::-1]], mode=Mode(linker=linker, optimizer=None))
    a, b = f(np.arange(3.0))
    assert not np.shares_memory(a, b)
    np.testing.assert_allclose(a, [0.0, 2.0, 4.0])
    np.testing.assert_allclose(b, [4.0, 2.0, 0.0])


@pytest.mark.parametrize("linker", ["py", "vm"])
def test_returned_view_of_an_intermediate_is_not_overwritten(linker: str) -> None:
    x = ot.dmatrix("x")
    f = opweave.function([x], (x * 2.0).T, mode=Mode(linker=linker, optimizer=None))
    first = f(np.ones((2, 2)))
    f(np.full((2, 2), 5.0))
    np.testing.assert_allclose(first, 2.0)


def test_borrowed_output_may_keep_storage() -> None:
    x = ot.dvector("x")
    f = opweave.function([x], Out(x * 2.0, borrow=True), mode=Mode(linker="vm"))
    np.testing.assert_allclose(f(np.ones(2)), 2.0)
    assert f.maker.linker.no_recycling == []


def test_inputs_are_not_modified() -> None:
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x) * 2.0 + x)
    arr = np.arange(4.0)
    before = arr.copy()
    f(arr)
    np.testing.assert_array_equal(arr, before)
