"""How a variable of another library becomes a scalar (``as_scalar``), and the path the
rules for files under ``compiledir`` are imported from."""

from __future__ import annotations

import pytest

import opweave.link.trusted_files as link_trusted_files
import opweave.plugins.trusted_files as plugins_trusted_files
import opweave.tensor as pt
from opweave.graph.basic import Variable
from opweave.scalar.basic import as_scalar
from opweave.scalar.type import float64
from opweave.tensor.basic import ScalarFromTensor


def test_a_zero_dimensional_tensor_becomes_a_scalar_of_its_dtype() -> None:
    x = pt.scalar("x", dtype="float32")
    s = as_scalar(x)
    assert isinstance(s.owner.op, ScalarFromTensor)
    assert s.owner.inputs == [x]
    assert s.type.dtype == "float32"


def test_a_tensor_with_dimensions_is_refused() -> None:
    with pytest.raises(TypeError, match=r"cannot use v .* as a scalar"):
        as_scalar(pt.vector("v"))


class _ZeroDim:
    ndim = 0


def test_a_zero_dimensional_variable_converts_through_its_own_method() -> None:
    made = float64("s")

    class Wrapped(Variable):
        def _as_ScalarVariable(self) -> Variable:
            return made

    assert as_scalar(Wrapped(_ZeroDim())) is made


def test_a_variable_without_a_conversion_is_refused() -> None:
    with pytest.raises(TypeError, match="as a scalar"):
        as_scalar(Variable(_ZeroDim()))


def test_the_trusted_file_rules_are_the_same_objects_at_both_paths() -> None:
    for name in plugins_trusted_files.__all__:
        assert getattr(link_trusted_files, name) is getattr(plugins_trusted_files, name)
    assert link_trusted_files.__all__ == plugins_trusted_files.__all__
