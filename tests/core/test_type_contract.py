"""Defaults of the Type contract (seeds 000 and 001) and the core's generic Types."""

from __future__ import annotations

import numpy as np
import pytest

from opweave.graph import (
    Constant,
    DisconnectedType,
    Generic,
    MethodNotDefined,
    NullType,
    SingletonType,
    Type,
    Variable,
    generic,
)


class Floaty(Type):
    def filter(self, x, strict=False, allow_downcast=None):
        if strict and not isinstance(x, float):
            raise TypeError("Expected a float!")
        return float(x)


def test_filter_is_required() -> None:
    with pytest.raises(MethodNotDefined, match=r"Type\.filter is not defined"):
        Type().filter(1.0)


def test_is_valid_value_follows_strict_filter() -> None:
    t = Floaty()
    assert t.is_valid_value(1.0)
    assert not t.is_valid_value(1)
    assert "Expected a float!" in t.value_validity_msg(1)
    assert t.value_validity_msg(1.0) == "valid"


def test_values_eq_defaults() -> None:
    t = Floaty()
    assert t.values_eq(1.0, 1.0) and not t.values_eq(1.0, 2.0)
    assert t.values_eq_approx(1.0, 1.0) and not t.values_eq_approx(1.0, 1.0 + 1e-12)


def test_make_variable_and_call() -> None:
    t = Floaty()
    v = t.make_variable("v")
    w = t()
    assert isinstance(v, Variable) and v.type is t and v.name == "v"
    assert w.name is None and w.owner is None and w.index is None


def test_default_eq_and_hash_are_identity() -> None:
    a, b = Floaty(), Floaty()
    assert a != b and a == a
    assert hash(a) != hash(b) or a is b


def test_singleton_type_instances_equal() -> None:
    class Unit(SingletonType):
        def filter(self, x, strict=False, allow_downcast=None):
            return x

    assert Unit() == Unit() and hash(Unit()) == hash(Unit())
    assert Unit() != Generic()


def test_generic_accepts_anything() -> None:
    obj = object()
    assert generic.filter(obj) is obj
    assert generic.is_valid_value(None)
    assert Generic() == generic
    assert str(generic) == "generic"


def test_c_methods_raise_method_not_defined() -> None:
    t = Floaty()
    for call in (
        lambda: t.c_declare("x", {}),
        lambda: t.c_init("x", {}),
        lambda: t.c_extract("x", {}),
        lambda: t.c_sync("x", {}),
        lambda: t.c_cleanup("x", {}),
        lambda: t.c_literal(1.0),
        lambda: t.c_element_type(),
        lambda: t.c_headers(),
        lambda: t.c_libraries(),
        lambda: t.c_header_dirs(),
        lambda: t.c_lib_dirs(),
        lambda: t.c_compile_args(),
        lambda: t.c_no_compile_args(),
        lambda: t.c_support_code(),
        lambda: t.c_init_code(),
        lambda: t.c_compiler(),
    ):
        with pytest.raises(MethodNotDefined):
            call()
    assert t.c_code_cache_version() == ()
    assert t.c_is_simple() is False


def test_c_extract_out_composes_init_and_extract() -> None:
    class CT(Floaty):
        def c_init(self, name, sub):
            return f"{name} = 0;"

        def c_extract(self, name, sub, check_input=True):
            return f"{name} = 1;"

    code = CT().c_extract_out("v", {})
    assert "py_v == Py_None" in code and "v = 0;" in code and "v = 1;" in code


def test_filter_variable() -> None:
    t = Floaty()
    v = t()
    assert t.filter_variable(v) is v
    c = t.filter_variable(3)
    assert isinstance(c, Constant) and c.data == 3.0
    with pytest.raises(TypeError, match="expected type"):
        t.filter_variable(Floaty()())


def test_may_share_memory_default() -> None:
    a = np.zeros(4)
    assert Type.may_share_memory(a, a[1:])
    assert not Type.may_share_memory(a, np.zeros(4))
    assert not Type.may_share_memory(1.0, 2.0)


def test_get_shape_info_and_size() -> None:
    t = Floaty()
    arr = np.zeros(10)
    assert t.get_size(t.get_shape_info(arr)) == 80
    assert t.get_size(t.get_shape_info(1.0)) > 0


def test_clone_without_changes_copies() -> None:
    t = Floaty()
    assert isinstance(t.clone(), Floaty)
    # As in PyTensor, clone(*args, **kwargs) builds type(t)(*args, **kwargs).
    with pytest.raises(TypeError, match="takes no arguments"):
        t.clone(dtype="float32")


def test_null_and_disconnected_types_refuse_values() -> None:
    nt = NullType("because")
    assert nt.why_null == "because"
    with pytest.raises(ValueError, match="NullType"):
        nt.filter(1)
    assert NullType() == NullType("other")
    with pytest.raises(AssertionError):
        DisconnectedType().filter(1)
    assert isinstance(DisconnectedType()(), Variable)
