"""``opweave.tensor.vectorize``: NumPy-style vectorization of a function of tensors."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot


def softmax_rows(x):
    return ot.exp(x) / ot.sum(ot.exp(x))


def test_vectorize_with_a_signature_matches_a_numpy_loop() -> None:
    x = ot.dmatrix("x")
    y = ot.vectorize(softmax_rows, signature="(a)->(a)")(x)
    value = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0], [5.0, -1.0, 3.0]])
    expected = np.stack([np.exp(r) / np.exp(r).sum() for r in value])
    np.testing.assert_allclose(opweave.function([x], y)(value), expected, rtol=1e-15)


def test_vectorize_with_several_outputs() -> None:
    x = ot.dmatrix("x")
    first, last = ot.vectorize(lambda v: (v[0], v[-1]), signature="(a)->(),()")(x)
    value = np.array([[-10.0, 0.0, 10.0], [-11.0, 0.0, 11.0]])
    got = opweave.function([x], [first, last])(value)
    np.testing.assert_array_equal(got[0], value[:, 0])
    np.testing.assert_array_equal(got[1], value[:, -1])


def test_vectorize_without_signature_treats_inputs_as_scalars() -> None:
    x, y = ot.dvector("x"), ot.dmatrix("y")
    out = ot.vectorize(lambda a, b: a * 2 + b)(x, y)
    xv, yv = np.arange(3.0), np.ones((2, 3))
    np.testing.assert_array_equal(opweave.function([x, y], out)(xv, yv), xv * 2 + yv)


def test_vectorize_bad_input() -> None:
    with pytest.raises(ValueError, match="2 inputs given, the signature"):
        ot.vectorize(softmax_rows, signature="(a)->(a)")(ot.dvector(), ot.dvector())
    with pytest.raises(TypeError, match="must be tensor variables, got list"):
        ot.vectorize(softmax_rows, signature="(a)->(a)")([1.0, 2.0])
    with pytest.raises(ValueError, match="fewer than the 2 core dimensions"):
        ot.vectorize(softmax_rows, signature="(a,b)->(a)")(ot.dvector())
    with pytest.raises(ValueError, match="returned 1 outputs, the signature"):
        ot.vectorize(softmax_rows, signature="(a)->(a),()")(ot.dmatrix())
