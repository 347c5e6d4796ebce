"""Static lengths read through a constant slice of a shape (``x.shape[:2]``), as PyTensor's
static shapes see them (a PyMC ``Mixture`` of components of static length 4 has static
shape ``(4,)``)."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (slice(None, 2), (4, 3)),
        (slice(1, None), (3, None)),
        (slice(None, None, -1), (None, 3, 4)),
        (slice(-2, None), (3, None)),
        (slice(0, 3, 2), (4, None)),
    ],
)
def test_constant_slices_of_a_shape_keep_the_static_lengths(index: slice, expected: tuple) -> None:
    x = pt.tensor("x", shape=(4, 3, None))
    assert pt.zeros(x.shape[index]).type.shape == expected
    assert pt.broadcast_to(pt.scalar("s"), x.shape[index]).type.shape == expected


def test_values_follow_the_run_time_shape() -> None:
    x = pt.tensor("x", shape=(4, 3, None))
    fn = opweave.function([x], pt.zeros(x.shape[1:]), mode=opweave.Mode(linker="py"))
    np.testing.assert_array_equal(fn(np.ones((4, 3, 5))), np.zeros((3, 5)))


def test_a_symbolic_bound_gives_no_static_length() -> None:
    x = pt.tensor("x", shape=(4, 3, None))
    i = pt.lscalar("i")
    with pytest.raises(ValueError, match="not known statically"):
        pt.zeros(x.shape[i:])
