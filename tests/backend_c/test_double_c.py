"""The ``Double`` type of Theano's documented type tutorial and its Ops in C, under the ``c``
and ``cvm`` linkers."""

from __future__ import annotations

import math

import pytest

import opweave
from opweave import graph as gof
from opweave.compile import Mode
from opweave_c.linkers.c_linker import MissingCCodeError
from opweave_double import add, div, double, mul, sub
from opweave_double.ops import hidden_buffer_add
from opweave_double.type import Double


@pytest.fixture
def xyz():
    return double("x"), double("y"), double("z")


@pytest.mark.parametrize("linker", ["c", "cvm"])
def test_tutorial_example_returns_correct_floats(xyz, linker) -> None:
    x, y, z = xyz
    f = opweave.function([x, y, z], mul(add(x, y), z), mode=Mode(linker=linker))
    assert f(1.0, 2.0, 3.0) == 9.0
    assert f(-1.5, 0.25, 4.0) == -5.0
    g = opweave.function([x, y], [sub(x, y), div(x, y)], mode=Mode(linker=linker))
    assert g(1.0, 4.0) == [-3.0, 0.25]
    assert math.isinf(g(1.0, 0.0)[1])  # C division, no Python ZeroDivisionError


def test_c_extract_fail_path_raises_the_documented_error_naming_the_input(xyz) -> None:
    x, y, z = xyz
    # Without check_input no filter runs before the tutorial's c_extract, whose check remains.
    with opweave.config.change_flags(check_input=False):
        f = opweave.function([x, y, z], mul(add(x, y), z), mode=Mode(linker="c"))
    with pytest.raises(TypeError, match="expected a float") as info:
        f(1, 2.0, 3.0)
    assert "argument 0 (name 'x')" in str(info.value) and "expected double" in str(info.value)
    with pytest.raises(TypeError, match=r"argument 2 \(name 'z'\).*expected a float"):
        f(1.0, 2.0, "3")
    assert f(1.0, 2.0, 3.0) == 9.0  # the failure released everything; the function still works


def test_generated_block_has_the_documented_shape(xyz) -> None:
    from opweave_c.codegen import BlockBuilder

    x, y, z = xyz
    a = add(x, y)
    b = mul(a, z)
    nodes = [a.owner, b.owner]
    code = BlockBuilder("blk", nodes, [x, y, z], [b], no_recycling=[b]).build().code
    # Inputs extracted, the temporary initialised, the output initialised and synced.
    assert code.count("PyFloat_Check") == 3
    assert code.count("= 0.0;") == 2 and code.count("= PyFloat_FromDouble(") == 1
    # Nested scopes: each %(fail)s jumps to a label that runs the cleanups acquired so far,
    # and the node codes come innermost, add before mul.
    assert code.index("V0 = PyFloat_AsDouble") < code.index("V3 = V0 + V1;")
    assert code.index("V3 = V0 + V1;") < code.index("V4 = V3 * V2;")
    labels = [line.strip() for line in code.splitlines() if line.strip().startswith("__label_")]
    assert labels == [f"__label_{k}: ;" for k in (7, 6, 5, 4, 3, 2, 1)]


class SyncFailingDouble(Double):
    """A Double whose boxing fails for NaN, to exercise the tutorial's c_sync failure branch.

    It lets NaN in (its filter is not asked before C) to reach that branch."""

    c_extract_checks_filter = True

    def c_support_code(self) -> str:
        return (
            "static PyObject* opw_test_box(double v) {\n"
            "    return v != v ? NULL : PyFloat_FromDouble(v);\n}\n"
        )

    def c_sync(self, name: str, sub: dict[str, str]) -> str:
        return super().c_sync(name, sub).replace("PyFloat_FromDouble(", "opw_test_box(")

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))


class SyncFailingAdd(gof.Op):
    __props__ = ()

    def make_node(self, x, y):
        return gof.Apply(self, [x, y], [x.type()])

    def c_code(self, node, name, inputs, outputs, sub):
        return f"{outputs[0]} = {inputs[0]} + {inputs[1]};"

    def c_code_cache_version(self):
        return (1,)


def test_c_sync_failure_branch_stores_none(capfd) -> None:
    t = SyncFailingDouble()
    x, y = t("x"), t("y")
    f = opweave.function([x, y], SyncFailingAdd()(x, y), mode=Mode(linker="c"))
    assert f(1.0, 2.0) == 3.0
    assert f(float("nan"), 1.0) is None  # boxing failed: the documented code stores None, no crash
    assert "PyFloat_FromDouble failed on: nan" in capfd.readouterr().out


def test_op_without_c_code_is_a_clear_error_under_c_and_falls_back_under_cvm() -> None:
    from opweave_double.ops import double_vector

    a, b = double_vector("a"), double_vector("b")
    out = hidden_buffer_add(a, b)
    with pytest.raises(MissingCCodeError, match=r"HiddenBufferAdd.*Use linker='cvm'") as info:
        opweave.function([a, b], out, mode=Mode(linker="c"))
    assert "has no C implementation" in str(info.value)
    f = opweave.function([a, b], out, mode=Mode(linker="cvm"))
    assert list(f([1.0, 2.0], [3.0, 4.0])) == [4.0, 6.0]
    assert f.fn.c_nodes == []  # DoubleVector has no C: everything ran in Python


class PythonOnlyNeg(gof.Op):
    """An Op on doubles with a ``perform`` and no C code."""

    __props__ = ()

    def make_node(self, x):
        return gof.Apply(self, [x], [double()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = -inputs[0]


def test_cvm_mixes_c_thunks_and_python_fallback(xyz) -> None:
    x, y, z = xyz
    f = opweave.function([x, y, z], mul(PythonOnlyNeg()(add(x, y)), z), mode=Mode(linker="cvm"))
    order = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    assert order == ["BinaryDoubleOp", "PythonOnlyNeg", "BinaryDoubleOp"]
    assert f.fn.c_nodes == [0, 2]
    assert f(1.0, 2.0, 3.0) == -9.0
    with pytest.raises(TypeError, match=r"Expected a float|cannot accurately represent"):
        f(2**53 + 1, 0.0, 1.0)  # cvm filters arguments in Python first


def test_double_plugin_registers_deep_copy_c_code(xyz) -> None:
    x, _, _ = xyz
    f = opweave.function([x], x, mode=Mode(linker="c"))  # the output is a protected copy
    assert [type(n.op).__name__ for n in f.maker.fgraph.toposort()] == ["DeepCopyOp"]
    assert f(2.5) == 2.5
