"""``QZ`` (the generalized Schur decomposition) on the ``jax`` linker: JAX has no routine
for it, so the linker refuses it when compiling, naming the Op and the flag
``jax__python_fallback``; with the flag, the node runs the ``py`` kernel (LAPACK's
``gges``, SciPy's ``qz``) through ``jax.pure_callback``, inside the jitted function."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import scipy.linalg

import opweave
import opweave.tensor as pt
from opweave.graph.utils import NoImplementationError
from opweave.tensor import linalg as la

RNG = np.random.default_rng(11)
A = RNG.normal(size=(4, 4))
B = RNG.normal(size=(4, 4))


def compile_with(linker: str, inputs: Sequence[Any], outputs: Sequence[Any]) -> Any:
    mode = opweave.Mode(linker=linker, optimizer=None)
    return opweave.function(list(inputs), list(outputs), mode=mode)


def on_host(inputs: Sequence[Any], outputs: Sequence[Any], args: Sequence[Any]) -> tuple:
    """The outputs under the ``jax`` linker (the flag on, the warning checked) and ``py``."""
    with opweave.config.change_flags(jax__python_fallback=True):
        with pytest.warns(RuntimeWarning, match=r"QZ.*jax\.pure_callback"):
            jax_fn = compile_with("jax", inputs, outputs)
        got = jax_fn(*args)
    return got, compile_with("py", inputs, outputs)(*args)


def test_qz_is_refused_naming_the_op_and_the_flag() -> None:
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    with opweave.config.change_flags(jax__python_fallback=False):
        with pytest.raises(NoImplementationError, match=r"Op QZ \(.*jax__python_fallback=True"):
            compile_with("jax", [a, b], list(la.qz(a, b)))


@pytest.mark.parametrize("output", ["real", "complex"])
def test_qz_through_the_python_callback_matches_scipy(output: str) -> None:
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    got, want = on_host([a, b], list(la.qz(a, b, output=output)), [A, B])
    reference = scipy.linalg.qz(A, B, output=output)
    for g, w, r in zip(got, want, reference, strict=True):
        assert isinstance(g, np.ndarray) and g.dtype == w.dtype == r.dtype
        np.testing.assert_array_equal(g, w)
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
    aa, bb, q, z = got
    np.testing.assert_allclose(q @ aa @ z.conj().T, A, atol=1e-12)
    np.testing.assert_allclose(q @ bb @ z.conj().T, B, atol=1e-12)


def test_batched_qz_with_eigenvalues_and_sort_through_the_python_callback() -> None:
    a, b = pt.dtensor3("a"), pt.dtensor3("b")
    outs = list(la.qz(a, b, return_eigenvalues=True)) + list(la.ordqz(a, b, sort="lhp"))
    batch_a, batch_b = np.stack([A, A.T]), np.stack([B, np.eye(4)])
    got, want = on_host([a, b], outs, [batch_a, batch_b])
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    aa, bb, alpha, beta, q, z = scipy.linalg.ordqz(A, B, sort="lhp")
    for g, r in zip(got[6:], (aa, bb, alpha, beta, q, z), strict=True):
        np.testing.assert_allclose(g[0], r, rtol=1e-12, atol=1e-12)
