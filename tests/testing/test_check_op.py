"""``check_op`` on the standard Ops, the double plugin's Ops, and Ops that break a rule."""

from __future__ import annotations

import numpy as np
import pytest

import opweave.tensor as pt
from opweave import graph as gof
from opweave.scalar import get_scalar_type
from opweave.scalar.math import add as scalar_add
from opweave.tensor.type import TensorType
from opweave.testing import ContractViolation, check_op
from opweave_double import add as double_add
from opweave_double import double
from opweave_double import mul as double_mul

PY = ("py", "vm")  # most Ops here run on the Python linkers only: C compiles cost seconds
X = np.arange(1.0, 7.0).reshape(2, 3)
M = pt.matrix("m", dtype="float64")


def _op(var):
    return var.owner.op


@pytest.mark.parametrize(
    ("name", "op", "values"),
    [
        ("add_float32", pt.add, [X.astype("float32"), X.astype("float32")]),
        ("mul_int64", pt.mul, [np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3)]),
        ("exp", pt.exp, [X / 3]),
        ("sum", _op(pt.sum(M, axis=0)), [X]),
        ("max", _op(pt.max(M, axis=1)), [X]),
        ("dot", _op(pt.dot(M, M.T)), [X, X.T.copy()]),
        ("dimshuffle", _op(M.dimshuffle(1, "x", 0)), [X]),
        ("subtensor", _op(M[1:, ::2]), [X]),
        ("reshape", _op(M.reshape((3, 2))), [X, np.array([3, 2])]),
        ("join", _op(pt.join(0, M, M)), [np.array(0), X, X * 2]),  # the axis is an input
        ("alloc", _op(pt.alloc(1.5, 2, 3)), [np.array(1.5), np.array(2), np.array(3)]),
    ],
)
def test_standard_ops_keep_the_contract(name, op, values) -> None:
    report = check_op(op, values, linkers=PY)
    assert {"make_node_deterministic", "linker_vm", "output_storage_reuse", "destroy_map"} <= set(
        report.checked
    ), name
    if all(isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in values):
        assert "verify_grad" in report.checked, name


def test_add_on_every_cpu_linker() -> None:
    report = check_op(pt.add, [X, X[::-1].copy()])
    assert {"linker_py", "linker_vm", "linker_c", "linker_cvm", "c_code_cache_version"} <= set(
        report.checked
    )
    assert {"verify_grad", "R_op", "infer_shape"} <= set(report.checked)


def test_a_scalar_op() -> None:
    report = check_op(scalar_add, [np.float64(1.5), np.float64(2.0)], linkers=PY)
    assert "props_eq_hash" in report.checked
    assert report.skipped["verify_grad"] == "verify_grad needs float arrays as inputs"


def test_the_double_ops() -> None:
    def doubles(values):
        return [double("x"), double("y")]

    report = check_op(double_add, [1.5, 2.0], make_inputs=doubles)
    assert {"linker_c", "linker_cvm", "c_code_cache_version", "props_eq_hash"} <= set(
        report.checked
    )
    assert "linker_py" in check_op(double_mul, [3.0, -0.5], make_inputs=doubles).checked


def test_values_need_make_inputs_when_not_arrays() -> None:
    with pytest.raises(TypeError, match="input 0, a float: pass make_inputs"):
        check_op(double_add, [1.5, 2.0])


class _Neg(gof.Op):
    """``-x`` on float64 vectors; subclassed below to break one rule each."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return gof.Apply(self, [x], [TensorType("float64", shape=(None,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.negative(inputs[0])

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]


class _ReusesAnyBuffer(_Neg):
    def perform(self, node, inputs, output_storage):
        out = output_storage[0][0]
        if out is None:
            out = output_storage[0][0] = np.empty_like(inputs[0])
        np.negative(inputs[0], out=out[: len(inputs[0])])


class _DestroysInput(_Neg):
    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        np.negative(x, out=x)
        output_storage[0][0] = x.copy()


class _UndeclaredView(_Neg):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0][::-1]  # a view, without view_map


class _LyingShape(_Neg):
    def infer_shape(self, fgraph, node, shapes):
        return [(shapes[0][0] + 1,)]


class _WrongGrad(_Neg):
    def grad(self, inputs, output_grads):
        return [output_grads[0]]  # the sign is wrong


class _UnversionedC(_Neg):
    def c_code(self, node, name, inputs, outputs, sub):
        raise NotImplementedError


V = [np.array([1.0, -2.0, 3.0])]


def test_the_well_behaved_example_passes() -> None:
    report = check_op(_Neg(), V, linkers=PY)
    assert {"infer_shape", "view_map", "output_storage_reuse"} <= set(report.checked)
    assert report.skipped["verify_grad"] == "the Op has no grad"


def test_perform_misusing_a_prefilled_buffer_is_caught() -> None:
    with pytest.raises(ContractViolation) as info:
        check_op(_ReusesAnyBuffer(), V, linkers=PY)
    assert info.value.rule == "output_storage_reuse"
    assert "pre-filled (wrong_size" in str(info.value)
    assert "never relies on its contents" in str(info.value)


def test_writing_into_an_input_without_destroy_map_is_caught() -> None:
    with pytest.raises(ContractViolation, match=r"\[destroy_map\]") as info:
        check_op(_DestroysInput(), V, linkers=PY)
    assert "only when destroy_map declares it" in str(info.value)


def test_an_undeclared_view_is_caught() -> None:
    with pytest.raises(ContractViolation, match=r"\[view_map\]"):
        check_op(_UndeclaredView(), V, linkers=PY)


def test_a_lying_infer_shape_is_caught() -> None:
    with pytest.raises(ContractViolation) as info:
        check_op(_LyingShape(), V, linkers=PY)
    assert info.value.rule == "infer_shape"
    assert "infer_shape says output 0 has shape (4,), the computed value has (3,)" in str(
        info.value
    )


def test_a_wrong_gradient_is_caught() -> None:
    with pytest.raises(ContractViolation, match=r"\[verify_grad\] _WrongGrad: the gradient"):
        check_op(_WrongGrad(), V, linkers=PY)


def test_a_python_only_op_skips_c() -> None:
    report = check_op(_Neg(), V)
    assert report.skipped["linker_c"] == "the Op has no C code"
    assert "linker_cvm" in report.checked  # cvm runs it in Python


def test_c_code_without_a_cache_version_is_caught() -> None:
    with pytest.raises(ContractViolation, match=r"\[c_code_cache_version\]"):
        check_op(_UnversionedC(), V, linkers=("py",))


def test_a_scalar_type_input() -> None:
    report = check_op(
        scalar_add,
        [np.float32(1.0), np.float32(2.0)],
        make_inputs=lambda v: [get_scalar_type("float32")(), get_scalar_type("float32")()],
        linkers=("py",),
    )
    assert "linker_py" in report.checked
