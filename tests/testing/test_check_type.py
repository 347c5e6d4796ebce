"""``check_type`` on the core's Types, the double plugin's, and Types that break a rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from opweave import graph as gof
from opweave.scalar import get_scalar_type
from opweave.tensor.type import TensorType
from opweave.testing import ContractViolation, check_type
from opweave_double import double, double_vector


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_tensor_type_keeps_the_contract(dtype: str) -> None:
    type_ = TensorType(dtype, shape=(None,))
    other = "float32" if dtype != "float32" else "float64"
    report = check_type(
        type_,
        good_values=[np.arange(3, dtype=dtype), [1, 2], np.arange(3, dtype="int8")],
        bad_values=[np.zeros((2, 2), dtype=dtype), "abc"],
        downcast_values=[np.array([1.5 + 1j, 2.0])],
        nan_values=[np.array([np.nan, 1.0], dtype=dtype)] if dtype.startswith("float") else [],
        nan_equal=True,
        equal_types=[TensorType(dtype, shape=(None,))],
        different_types=[TensorType(other, shape=(None,)), TensorType(dtype, shape=(3,))],
    )
    assert {"filter_idempotent", "strict_refuses_conversion", "eq_hash", "get_size"} <= set(
        report.checked
    )
    assert "c_filter" in report.checked  # opweave-c is installed in the dev venv
    if dtype.startswith("float"):
        assert "allow_remove_nan" in report.checked


def test_scalar_type_keeps_the_contract() -> None:
    type_ = get_scalar_type("float32")
    report = check_type(
        type_,
        good_values=[np.float32(1.5), 2.0],
        bad_values=["x", np.zeros(3)],
        downcast_values=[1e-50],
        nan_values=[np.float32("nan")],
        different_types=[get_scalar_type("float64")],
    )
    assert report.skipped["may_share_memory"] == "immutable values share nothing"
    assert {"get_size", "c_filter", "values_eq_nan"} <= set(report.checked)


def test_double_type_passes_the_type_contract() -> None:
    """The plugin's ``Double`` (eq/hash by class, as the tutorial's final version) and
    ``DoubleVector`` (``values_eq`` on arrays) pass; the kit once found both missing."""
    report = check_type(
        double,
        good_values=[1.0, 2, -0.5],
        bad_values=["abc", None],
        downcast_values=[2**60 + 1],
        nan_values=[math.nan],
        nan_equal=False,
    )
    assert "eq_hash" in report.checked
    report = check_type(double_vector, [np.arange(3.0), [1, 2]], ["x", np.zeros((2, 2))])
    assert "values_eq_reflexive" in report.checked


class _Float(gof.Type):
    """A well-behaved float Type, subclassed below to break one rule each."""

    def filter(self, x, strict=False, allow_downcast=None):
        if strict:
            if isinstance(x, float):
                return x
            raise TypeError(f"expected a float, got {type(x).__name__}")
        if isinstance(x, bool) or not isinstance(x, int | float):
            raise TypeError(f"expected a number, got {type(x).__name__}")
        value = float(x)
        if value != x and not allow_downcast:
            raise TypeError(f"{x} is not exactly a float")
        return value

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return type(self).__name__.lower()


class _Drifting(_Float):
    def filter(self, x, strict=False, allow_downcast=None):
        return super().filter(x, strict, allow_downcast) + (0.0 if strict else 1.0)


class _BadHash(_Float):
    def __init__(self, tag):
        self.tag = tag

    def __hash__(self):
        return hash(self.tag)  # __eq__ ignores the tag


class _Permissive(_Float):
    def filter(self, x, strict=False, allow_downcast=None):
        return float(x)


def test_the_well_behaved_example_passes() -> None:
    report = check_type(_Float(), [1.0, 3], ["a", None], downcast_values=[2**60 + 1])
    assert "strict_refuses_conversion" in report.checked
    assert report.skipped["c_filter"].startswith("no C interface")


def test_a_filter_that_is_not_idempotent_is_caught() -> None:
    with pytest.raises(ContractViolation) as info:
        check_type(_Drifting(), [1.0], ["a"])
    assert info.value.rule == "filter_idempotent"
    assert "filter(float 1.0) gave float 2.0 but filtering that again gave float 3.0" in str(
        info.value
    )
    assert "filter(filter(v)) equals filter(v)" in str(info.value)


def test_eq_and_hash_that_disagree_are_caught() -> None:
    with pytest.raises(ContractViolation, match="are equal but hash differently") as info:
        check_type(_BadHash("a"), [1.0], ["a"], equal_types=[_BadHash("b")])
    assert info.value.rule == "eq_hash"
    assert "equal Types hash equal" in str(info.value)


def test_a_filter_that_never_refuses_is_caught() -> None:
    with pytest.raises(ContractViolation, match=r"\[allow_downcast\].*returned float") as info:
        check_type(_Permissive(), [1.0], [], downcast_values=[2**60 + 1])
    assert "refused unless allow_downcast is true" in str(info.value)
    with pytest.raises(ContractViolation, match=r"\[strict_refuses_conversion\]"):
        check_type(_Permissive(), [1], [])
    with pytest.raises(ContractViolation, match=r"\[filter_refuses_bad\].*returned float 1.0"):
        check_type(_Permissive(), [1.0], [True])


def test_check_type_needs_good_values() -> None:
    with pytest.raises(TypeError, match="good_values is empty"):
        check_type(_Float(), [], ["a"])
