"""``opweave.shared`` of a SciPy sparse matrix gives a sparse shared variable, as
``pytensor.shared`` does (it used to give a generic one, which no sparse Op takes)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import opweave
import opweave.sparse as sparse
from opweave.sparse.sharedvar import SparseTensorSharedVariable


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_shared_of_a_sparse_matrix_is_sparse(fmt: str) -> None:
    value = sp.random(5, 4, density=0.4, format=fmt, random_state=3, dtype="float64")
    var = opweave.shared(value, name="w")
    assert isinstance(var, SparseTensorSharedVariable)
    assert var.type.format == fmt and var.type.dtype == "float64"
    fn = opweave.function([], sparse.sp_sum(var, axis=0), mode=opweave.Mode(linker="py"))
    np.testing.assert_allclose(fn(), np.asarray(value.sum(axis=0)).ravel())


def test_borrow_keeps_the_matrix_and_a_copy_is_made_otherwise() -> None:
    value = sp.csr_matrix(np.eye(3))
    assert opweave.shared(value, borrow=True).get_value(borrow=True) is value
    assert opweave.shared(value).get_value(borrow=True) is not value


def test_a_keyword_the_sparse_constructor_lacks_is_refused() -> None:
    with pytest.raises(TypeError, match="shape"):
        opweave.shared(sp.csr_matrix(np.eye(2)), shape=(2, 2))
