"""Theano's ``Double`` tutorial against the opweave-double plugin."""

from __future__ import annotations

import pytest

from opweave import graph as gof
from opweave_double import Double, double


class TestFilter:
    def test_strict_accepts_only_floats(self) -> None:
        value = 1.5
        assert double.filter(value, strict=True) is value
        with pytest.raises(TypeError, match="Expected a float!"):
            double.filter(1, strict=True)

    @pytest.mark.parametrize("allow_downcast", [None, False])
    def test_exact_casts_without_downcast(self, allow_downcast: bool | None) -> None:
        out = double.filter(3, allow_downcast=allow_downcast)
        assert out == 3.0 and isinstance(out, float)

    @pytest.mark.parametrize("allow_downcast", [None, False])
    def test_lossy_cast_refused_without_downcast(self, allow_downcast: bool | None) -> None:
        big = 2**53 + 1
        with pytest.raises(TypeError, match="cannot accurately represent value 9007199254740993"):
            double.filter(big, allow_downcast=allow_downcast)

    def test_lossy_cast_allowed_with_downcast(self) -> None:
        assert double.filter(2**53 + 1, allow_downcast=True) == float(2**53)

    def test_unconvertible_value(self) -> None:
        with pytest.raises(ValueError):
            double.filter("not a number")


def test_values_eq_approx_uses_tolerance() -> None:
    assert double.values_eq_approx(1.0, 1.00001)
    assert not double.values_eq_approx(1.0, 1.1)
    assert double.values_eq_approx(1.0, 1.1, tolerance=0.1)
    assert double.values_eq_approx(0.0, 0.0)


def test_str_and_equality_of_instances() -> None:
    """A plain subclass of ``Type`` compares by identity (the tutorial's first version); the
    plugin's ``Double`` is the final version, whose instances are all equal and hash alike."""

    class PlainDouble(gof.Type):
        def filter(self, x, strict=False, allow_downcast=None):
            return float(x)

    assert (PlainDouble() == PlainDouble()) is False
    double1, double2 = Double(), Double()
    assert str(double1) == "double"
    assert double1 == double2 and hash(double1) == hash(double2) == hash(double)

    class SubDouble(Double):
        pass

    assert SubDouble() != double  # ``type(self) is Double``: subclasses are other Types


def test_type_instance_with_fields_set() -> None:
    """The tutorial's first way: a plain ``gof.Type()`` whose methods are set on the instance."""

    def filter(x, strict=False, allow_downcast=None):
        if strict:
            if isinstance(x, float):
                return x
            raise TypeError("Expected a float!")
        return float(x)

    def values_eq_approx(x, y, tolerance=1e-4):
        return abs(x - y) / (abs(x) + abs(y)) < tolerance

    t = gof.Type()
    t.filter = filter
    t.values_eq_approx = values_eq_approx
    assert t.filter(2) == 2.0
    assert t.is_valid_value(2.0) and not t.is_valid_value(2)
    v = t("v")
    assert v.type is t and v.name == "v" and v.owner is None


def test_eq_override_makes_instances_equal() -> None:
    class EqDouble(Double):
        def __eq__(self, other: object) -> bool:
            return type(self) is EqDouble and type(other) is EqDouble

        def __hash__(self) -> int:
            return hash(EqDouble)

    assert EqDouble() == EqDouble()
    assert hash(EqDouble()) == hash(EqDouble())
