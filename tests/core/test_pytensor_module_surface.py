"""PyTensor 2's spellings that code written for it uses: ``pytensor.tensor.subtensor`` is
the module, and ``eigh(a, "U")`` passes ``UPLO`` positionally."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.tensor.nlinalg import eigh


def test_tensor_subtensor_is_the_module() -> None:
    assert isinstance(ot.subtensor, types.ModuleType)
    assert ot.subtensor.Subtensor is opweave.tensor.subtensor.Subtensor
    from opweave.tensor import subtensor

    assert subtensor.set_subtensor is ot.set_subtensor


@pytest.mark.parametrize("linker", ["py", "cvm"])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_takes_uplo_positionally(linker: str, uplo: str) -> None:
    a = ot.dmatrix("a")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        w, v = eigh(a, uplo)
    f = opweave.function([a], [w, v], mode=Mode(linker=linker))
    # Only the named triangle is read: the other holds values that would change the result.
    m = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 4.0]])
    given = (
        np.tril(m) + np.triu(np.full((3, 3), 9.0), 1)
        if uplo == "L"
        else (np.triu(m) + np.tril(np.full((3, 3), 9.0), -1))
    )
    got_w, got_v = f(given)
    want_w = np.linalg.eigvalsh(m)
    np.testing.assert_allclose(got_w, want_w, rtol=1e-13)
    np.testing.assert_allclose(m @ got_v, got_v * got_w, atol=1e-12)
