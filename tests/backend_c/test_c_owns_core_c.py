"""The C of the core's Types and helper Ops comes from opweave-c, not from the core classes:
C interfaces of ScalarType, the per-Type registries of DeepCopyOp/ViewOp/Shape/Shape_i, the
cache versions of the standard Ops, and the C/CVM modes."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.scalar as s
import opweave.tensor as ot
from opweave.compile.ops import DeepCopyOp, ViewOp, deep_copy_op, register_view_op_c_code, view_op
from opweave.graph.type import Type
from opweave.graph.utils import MethodNotDefined
from opweave.plugins import get_plugin_manager
from opweave.scalar.basic import ScalarOp
from opweave.tensor.elemwise import CAReduce, Elemwise
from opweave.tensor.shape import Shape, Shape_i
from opweave_c import contract
from opweave_c.impls import c_code_for
from opweave_c.impls import elemwise as elemwise_c
from opweave_c.impls import scalar_basic as scalar_basic_c
from opweave_c.impls.compile_ops import RegisteredC
from opweave_c.impls.scalar_type import scalar_literal


def test_scalar_types_have_their_c_interface_from_the_backend() -> None:
    assert "c_literal" not in vars(s.ScalarType)
    with pytest.raises(MethodNotDefined):
        s.float64.c_element_type()  # the Type contract's default
    ctype = contract.c_type_of(s.float64)
    assert ctype.c_element_type() == "npy_float64"
    assert contract.c_type_of(s.uint8).c_element_type() == "npy_uint8"
    assert contract.c_type_of(s.bool_).c_element_type() == "npy_bool"
    assert ctype.c_is_simple()
    assert ctype.c_literal(0.5) == "((npy_float64)0.5)"


@pytest.mark.parametrize(
    ("type_", "value", "literal"),
    [
        (s.float32, np.inf, "((npy_float32)INFINITY)"),
        (s.float32, -np.inf, "((npy_float32)-INFINITY)"),
        (s.float64, np.nan, "((npy_float64)NAN)"),
        (s.int64, -3, "((npy_int64)-3LL)"),
        (s.int64, np.iinfo(np.int64).min, "((npy_int64)(-9223372036854775807LL - 1))"),
        (s.uint64, 2**64 - 1, f"((npy_uint64){2**64 - 1}ULL)"),
        (s.bool_, True, "1"),
    ],
)
def test_scalar_literals(type_, value, literal) -> None:
    assert scalar_literal(type_, value) == literal


def test_complex_scalars_have_no_literal() -> None:
    with pytest.raises(MethodNotDefined):
        scalar_literal(s.complex128, 1j)


@pytest.mark.parametrize("cls", [ScalarOp, Elemwise, CAReduce, DeepCopyOp, ViewOp, Shape, Shape_i])
def test_core_op_classes_carry_no_c(cls) -> None:
    assert "c_code" not in vars(cls)
    assert "c_code_cache_version" not in vars(cls)


def test_standard_op_versions_follow_the_backend_code(monkeypatch) -> None:
    x = ot.dvector("x")
    node = ot.exp(x).owner
    impl = c_code_for(node.op, node)
    version = contract.version_of(impl, node)
    assert version[: len(elemwise_c.VERSION)] == elemwise_c.VERSION
    assert scalar_basic_c.VERSION[0] in version
    monkeypatch.setattr(elemwise_c, "VERSION", (elemwise_c.VERSION[0] + 1,))
    assert contract.version_of(c_code_for(node.op, node), node) != version


def test_helper_ops_take_their_c_from_the_registries() -> None:
    x = ot.dmatrix("x")
    for node in (deep_copy_op(x).owner, view_op(x).owner, Shape()(x).owner, Shape_i(1)(x).owner):
        impl = contract.c_op_of(node)
        assert isinstance(impl, RegisteredC)
        assert contract.version_of(impl, node) == (1, 1)
    code = contract.c_op_of(Shape_i(1)(x).owner).c_code(
        Shape_i(1)(x).owner, "n", ["in0"], ["out0"], {"fail": "FAIL;"}
    )
    assert "in0" in code and "out0" in code and "1" in code


class Box(Type):
    """A Type with C of its own (a PyObject*) but no registered ViewOp code."""

    def filter(self, data, strict=False, allow_downcast=None):
        return data

    def __eq__(self, other):
        return type(other) is Box

    def __hash__(self):
        return hash(Box)

    def c_declare(self, name, sub, check_input=True):
        return f"PyObject* {name};"

    def c_init(self, name, sub):
        return f"{name} = NULL;"

    def c_extract(self, name, sub, check_input=True):
        return f"{name} = py_{name}; Py_XINCREF({name});"

    def c_sync(self, name, sub):
        return f"Py_XDECREF(py_{name}); py_{name} = {name}; Py_XINCREF(py_{name});"

    def c_cleanup(self, name, sub):
        return f"Py_XDECREF({name});"

    def c_code_cache_version(self):
        return (1,)


def test_a_missing_registration_names_both_ways_to_add_it(plugin_manager) -> None:
    node = view_op(Box()("b")).owner
    with pytest.raises(contract.NoCCode) as raised:
        contract.c_op_of(node)
    message = str(raised.value)
    assert "opweave.compile.ops.register_view_op_c_code(Box, code, version)" in message
    assert "opweave_register_view_op_c_code() hook implementation" in message
    register_view_op_c_code(Box, "%(oname)s = %(iname)s; Py_XINCREF(%(oname)s);", (2,))
    impl = contract.c_op_of(node)
    assert contract.version_of(impl, node) == (1, 2)


def test_the_c_modes_come_from_the_backend() -> None:
    from opweave.compile.mode import CVM, C, fast_run_linkers_to_mode, get_mode, plugin_modes

    assert plugin_modes()["CVM"] is CVM and plugin_modes()["C"] is C
    assert get_mode("cvm") is CVM and get_mode("C") is C
    assert fast_run_linkers_to_mode["cvm"] is CVM
    assert (CVM.linker, C.linker) == ("cvm", "c")
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x), mode="CVM")
    np.testing.assert_allclose(f(np.zeros(2)), np.ones(2))
    assert "C" in opweave.compile.mode.predefined_modes
    assert get_plugin_manager().hook.opweave_modes()
