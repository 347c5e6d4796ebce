"""``norm`` of complex tensors, as :func:`numpy.linalg.norm` computes it: real norms of
the moduli (the Frobenius and vector 2-norms from ``|x|**2``, ``2``, ``-2`` and ``"nuc"``
from the singular values of the complex matrices).

Complex values have no C code (``cvm`` runs such nodes in Python), so the ``c`` linker,
which compiles the whole graph to C, is left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt

LINKERS = [name for name in usable_linkers() if name != "c"]

RNG = np.random.default_rng(7)
MATRIX = RNG.normal(size=(4, 3)) + 1j * RNG.normal(size=(4, 3))
VECTOR = np.array([3 + 4j, -1j, 0j, 2 - 2j, 0.5 + 0.25j])


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("ord", [None, 1, 2, 3, 0, np.inf, -np.inf, -1])
def test_vector_norms(linker: str, dtype: str, ord: Any) -> None:
    x = pt.vector("x", dtype=dtype)
    out = pt.linalg.norm(x, ord=ord)
    fn = opweave.function([x], out, mode=opweave.Mode(linker=linker))
    value = VECTOR.astype(dtype)
    if ord not in (0, 3):  # counts and the general power leave the input's precision
        assert out.dtype == np.linalg.norm(value, ord=ord).dtype
    rtol = 1e-5 if dtype == "complex64" else 1e-12
    np.testing.assert_allclose(fn(value), np.linalg.norm(value, ord=ord), rtol=rtol)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms(linker: str, ord: Any) -> None:
    x = pt.matrix("x", dtype="complex128")
    fn = opweave.function([x], pt.linalg.norm(x, ord=ord), mode=opweave.Mode(linker=linker))
    np.testing.assert_allclose(fn(MATRIX), np.linalg.norm(MATRIX, ord=ord), rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_batched_norms_along_an_axis(linker: str) -> None:
    x = pt.tensor3("x", dtype="complex128")
    outs = [pt.linalg.norm(x, axis=1, keepdims=True), pt.linalg.norm(x, ord="nuc", axis=(0, 1))]
    fn = opweave.function([x], outs, mode=opweave.Mode(linker=linker))
    value = np.stack([MATRIX, MATRIX.conj() * 2])
    along, nuclear = fn(value)
    np.testing.assert_allclose(along, np.linalg.norm(value, axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(nuclear, np.linalg.norm(value, ord="nuc", axis=(1, 2)), rtol=1e-12)
