"""PyTensor's package-level names of the scalar Ops (``pytensor.scalar.betainc``): the same
objects as at their home modules."""

from __future__ import annotations

import pytest

import opweave.scalar as ps
from opweave.scalar import basic, math

NAMES = (
    "abs betainc betaincinv conj real imag erfcinv gammaincinv gammainccinv i0 i1 iv ive j0 "
    "j1 jv kve owens_t angle"
).split()


@pytest.mark.parametrize("name", NAMES)
def test_package_names_are_scalar_ops(name: str) -> None:
    op = getattr(ps, name)
    assert isinstance(op, ps.ScalarOp), name
    home = math if hasattr(math, name) else basic
    if hasattr(home, name):
        assert getattr(home, name) is op
    assert type(op) in ps.SCALAR_OP_CLASSES


def test_the_submodules_of_the_same_names_stay_modules() -> None:
    assert ps.hyp2f1.__name__ == "opweave.scalar.hyp2f1"
    assert ps.complex.__name__ == "opweave.scalar.complex"
    assert isinstance(math.hyp2f1, ps.ScalarOp) and isinstance(basic.complex, ps.ScalarOp)
