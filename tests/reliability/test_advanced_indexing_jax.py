"""Advanced indexing on the ``jax`` linker against the ``py`` linker, on the cases of
``test_advanced_indexing_linkers``: the same values, dtypes and kinds of error (an index
out of range raises ``IndexError`` where XLA would clamp it). Boolean masks given as
inputs are left out: XLA compiles for fixed shapes, and the ``jax`` linker refuses them
(``docs/backend-jax.md``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")

from test_advanced_indexing_linkers import (
    CASES,
    DTYPES,
    Case,
    Sym,
    _build,
    _outcome,
    _value,
)

import opweave

JAX_CASES = [
    case
    for case in CASES
    if not any(isinstance(e, Sym) and e.dtype == "bool" for e in case.entries)
]

#: Errors the two linkers name differently for the same fault: NumPy's broadcasting
#: ``ValueError`` is what JAX's indexing raises as an ``IndexError`` or ``TypeError``.
SAME_FAULT = {(ValueError, IndexError), (ValueError, TypeError)}


@pytest.mark.parametrize("case", JAX_CASES, ids=lambda c: c.name)
def test_jax_linker_gives_the_py_linkers_advanced_indexing(case: Case) -> None:
    inputs, outs = _build(case)
    py_fn = opweave.function(inputs, outs, mode=opweave.Mode(linker="py"))
    jax_fn = opweave.function(inputs, outs, mode=opweave.Mode(linker="jax"))
    rng = np.random.default_rng(len(case.name))
    for values in case.variants:
        shape = case.shape
        xs = [_value(rng, shape, dtype) for dtype in DTYPES]
        # 0-d values broadcast to any region: the read tells the region's shape, when the
        # index is valid; otherwise only the index is at fault.
        scalars = [_value(rng, (), dtype) for dtype in DTYPES]
        ref = _outcome(py_fn, [*xs, *scalars, *values])
        target = ref[1][0].shape if ref[0] == "ok" else ()
        ys = [_value(rng, target, dtype) for dtype in DTYPES]
        args: list[Any] = [*xs, *ys, *values]
        ref = _outcome(py_fn, args)
        got = _outcome(jax_fn, args)
        assert got[0] == ref[0], (values, got, ref)
        if ref[0] == "error":
            pair = (ref[1][0], got[1][0])
            assert pair[0] is pair[1] or pair in SAME_FAULT, (values, got, ref)
            continue
        for r, g in zip(ref[1], got[1], strict=True):
            assert r.dtype == g.dtype and r.shape == g.shape, values
            np.testing.assert_array_equal(g, r, err_msg=str(values))
