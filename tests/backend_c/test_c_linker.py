"""The ``c`` linker as ``function`` drives it: the fast call, the generic path, updates,
defaults, fresh outputs, and errors raised inside generated C."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave import graph as gof
from opweave.compile import In, Mode
from opweave.compile.sharedvalue import SharedVariable
from opweave_double import add, double, mul

C = Mode(linker="c")


@pytest.fixture
def xyz():
    return double("x"), double("y"), double("z")


def test_keyword_and_default_arguments_take_the_generic_path(xyz) -> None:
    x, y, z = xyz
    f = opweave.function([x, y, In(z, value=10.0)], mul(add(x, y), z), mode=C)
    assert f(1.0, 2.0, 3.0) == 9.0  # the fast call
    assert f(1.0, 2.0) == 30.0  # a default: filtered in Python, then run in C
    assert f(z=2.0, y=1.0, x=1.0) == 4.0
    assert f(1, 2.0, 3.0) == 9.0  # the fast path runs Double.filter first, as vm does
    with pytest.raises(TypeError, match="cannot accurately represent value nan"):
        f(float("nan"), 2.0, 3.0)  # Double.filter refuses NaN; its c_extract would not
    for mode in (C, Mode(linker="vm")):
        g = opweave.function([x, y, In(z, value=10.0)], mul(add(x, y), z), mode=mode)
        assert [g(1.0, 2.0, 3.0), g(1.0, 2.0), g(1.0, 1.0, z=1.0), g(1.0, 1.0)] == [
            9.0,
            30.0,
            2.0,
            20.0,
        ]


def test_updates_of_shared_variables(xyz) -> None:
    x, _, _ = xyz
    acc = SharedVariable(double, 0.0, name="acc")
    f = opweave.function([x], acc, updates=[(acc, add(acc, x))], mode=C)
    assert [f(1.0), f(2.0), f(3.0)] == [0.0, 1.0, 3.0]
    assert acc.get_value() == 6.0
    acc.set_value(100.0)
    assert f(1.0) == 100.0 and acc.get_value() == 101.0


def test_several_outputs_and_an_output_listed_twice(xyz) -> None:
    x, y, _ = xyz
    s = add(x, y)
    f = opweave.function([x, y], [s, mul(s, s), s], mode=C)
    assert f(1.0, 2.0) == [3.0, 9.0, 3.0]


def test_returned_arrays_are_never_overwritten_by_the_next_call() -> None:
    x = ot.dvector("x")
    f = opweave.function([x], [x.shape, x], mode=C)
    s1, c1 = f(np.zeros(3))
    s2, c2 = f(np.ones(5))
    assert list(s1) == [3] and list(c1) == [0.0] * 3
    assert list(s2) == [5] and list(c2) == [1.0] * 5 and s1 is not s2


@pytest.mark.parametrize("linker", ["c", "cvm"])
def test_a_dropped_result_lends_its_memory_to_the_next_call(linker) -> None:
    """A result the caller no longer holds is computed into again (no fresh allocation);
    one the caller holds, or holds a view or a weak reference of, is left alone."""
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x) * 2.0, mode=Mode(linker=linker))
    a = f(np.zeros(4))
    address = a.ctypes.data
    del a
    b = f(np.ones(4))
    assert b.ctypes.data == address  # the dropped result's memory, reused
    np.testing.assert_allclose(b, 2.0 * np.e)
    c = f(np.zeros(4))  # b is still held: c is a new array, b keeps its values
    assert c.ctypes.data != b.ctypes.data
    np.testing.assert_allclose(b, 2.0 * np.e)
    view = c[1:]
    del c
    f(np.ones(4))
    np.testing.assert_array_equal(view, [2.0, 2.0, 2.0])  # its base was not overwritten
    d = f(np.zeros(4))
    weak = weakref.ref(d)
    del d
    e = f(np.ones(4))
    assert weak() is None  # not reused (it would be e): a new array, the old one released
    np.testing.assert_allclose(e, 2.0 * np.e)
    g = f(np.zeros(5))  # another shape: a new array
    np.testing.assert_array_equal(g, [2.0] * 5)


class FailsAtRunTime(gof.Op):
    """Raises ValueError from C for negative inputs."""

    __props__ = ()

    def make_node(self, x):
        return gof.Apply(self, [x], [double()])

    def c_code(self, node, name, inputs, outputs, sub):
        (x,), (z,) = inputs, outputs
        return f"""
        if ({x} < 0) {{
            PyErr_SetString(PyExc_ValueError, "negative input");
            {sub["fail"]}
        }}
        {z} = {x} * 2;
        """

    def c_code_cache_version(self):
        return (1,)


@pytest.mark.parametrize("linker", ["c", "cvm"])
def test_errors_raised_in_generated_c_name_the_node(xyz, linker) -> None:
    x, y, _ = xyz
    f = opweave.function([x, y], add(FailsAtRunTime()(x), y), mode=Mode(linker=linker))
    assert f(1.0, 1.0) == 3.0
    with pytest.raises(ValueError, match="negative input") as info:
        f(-1.0, 1.0)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Apply node that caused the error: FailsAtRunTime(x)" in notes
    assert "input 0 (x, type double): float" in notes
    assert f(2.0, 1.0) == 5.0


def test_linker_selected_by_config(xyz) -> None:
    x, y, z = xyz
    with opweave.config.change_flags(linker="c"):
        f = opweave.function([x, y, z], mul(add(x, y), z))
    assert type(f.maker.linker).__name__ == "CLinker" and f(1.0, 2.0, 3.0) == 9.0
    with opweave.config.change_flags(linker="cvm"):
        g = opweave.function([x, y, z], mul(add(x, y), z))
    assert type(g.maker.linker).__name__ == "CVMLinker" and g(1.0, 2.0, 3.0) == 9.0
