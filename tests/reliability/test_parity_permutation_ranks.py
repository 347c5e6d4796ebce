"""``PermutationRV`` built from the deprecated ``ndim_supp`` and ``ndims_params``.

Those ranks define its signature, as in PyTensor: ``x`` of shape ``(5, 3, 2)`` with core
rank 2 holds 5 batched ``(3, 2)`` arrays, each shuffled along its first axis by
``numpy.random.Generator.permutation``. Random variables have no C code, so the ``c``
linker, which compiles the whole graph to C, is left out, and ``jax`` draws with its own
generator.
"""

from __future__ import annotations

import warnings
from copy import deepcopy

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
from opweave.tensor.random.basic import PermutationRV

X = np.arange(5 * 3 * 2).reshape((5, 3, 2))


def _numpy_draws(rng: np.random.Generator, x: np.ndarray, core: int) -> np.ndarray:
    out = np.empty(x.shape, dtype=x.dtype)
    for idx in np.ndindex(*x.shape[: x.ndim - core]):
        out[idx] = rng.permutation(x[idx])
    return out


def _op(ndim: int) -> PermutationRV:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return PermutationRV(ndim_supp=ndim, ndims_params=[ndim], dtype="int64")


@pytest.mark.parametrize("linker", [n for n in usable_linkers() if n in ("py", "vm", "cvm")])
@pytest.mark.parametrize("extra", [None, 4], ids=["implicit", "broadcast"])
@pytest.mark.parametrize("core", [1, 2])
def test_batched_permutations_match_numpy(linker: str, extra: int | None, core: int) -> None:
    op = _op(core)
    size = None if extra is None else (extra, *X.shape[: X.ndim - core])
    assert (op.ndim_supp, op.ndims_params) == (core, (core,))
    generator = np.random.default_rng(11)
    rv = op(X, size=size, rng=opweave.shared(deepcopy(generator)))
    shape = X.shape if size is None else size + X.shape[X.ndim - core :]
    assert rv.type.shape == shape
    got = opweave.function([], rv, mode=opweave.Mode(linker=linker))()
    np.testing.assert_array_equal(got, _numpy_draws(generator, np.broadcast_to(X, shape), core))


def test_a_signature_is_required() -> None:
    with pytest.raises(ValueError, match="signature must be provided"):
        PermutationRV()
