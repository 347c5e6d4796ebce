"""The static Type of an advanced index read matches what NumPy computes, whatever the
position of symbolic slice bounds among the index arrays and integers."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode

VALUE = np.arange(3 * 4 * 5, dtype="float64").reshape(3, 4, 5)
ROWS = np.array([0, 2, 1])


def _index_cases():
    a, b, s = pt.lscalars("a", "b", "s")
    v = pt.lvector("v")
    values = {a: 1, b: 3, s: 2, v: ROWS}
    return values, [
        ("x[a:, v, s]", lambda x: x[a:, v, s], lambda n: n[1:, ROWS, 2]),
        ("x[a:b, v]", lambda x: x[a:b, v], lambda n: n[1:3, ROWS]),
        ("x[::s, v, a:]", lambda x: x[::s, v, a:], lambda n: n[::2, ROWS, 1:]),
        ("x[a:b:s, v, s]", lambda x: x[a:b:s, v, s], lambda n: n[1:3:2, ROWS, 2]),
        ("x[s, a:, v]", lambda x: x[s, a:, v], lambda n: n[2, 1:, ROWS]),
        ("x[v, a:b, s]", lambda x: x[v, a:b, s], lambda n: n[ROWS, 1:3, 2]),
    ]


_VALUES, _CASES = _index_cases()


@pytest.mark.parametrize(("label", "build", "expected"), _CASES, ids=[c[0] for c in _CASES])
def test_symbolic_slice_bounds_before_index_arrays(label, build, expected):
    x = pt.dtensor3("x")
    out = build(x)
    reference = expected(VALUE)
    assert out.type.ndim == reference.ndim, label
    inputs = [x, *_VALUES]
    f = opweave.function(inputs, out, mode=Mode(linker="py"), on_unused_input="ignore")
    got = f(VALUE, *_VALUES.values())
    np.testing.assert_array_equal(got, reference)
