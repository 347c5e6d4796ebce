"""The rest of PyTensor drop-in compatibility: semantics and names.

* ``ProdWithoutZeros`` is the reduction of the scalar Op ``mul_without_zeros`` (0 for a
  group without a non-zero element, as in PyTensor), with no gradient of its own; ``prod``'s
  gradient handles one and several zeros;
* static shapes of ``Reshape`` (constant, ``-1`` and symbolic entries, lengths of the
  input's dimensions) and of nodes rebuilt with ``clone_with_new_inputs(strict=False)``;
* ``verify_grad`` builds its inputs with the static shapes of the given values;
* PyTensor's backend packages under ``opweave.link``: re-exports where opweave has the
  thing, an ``ImportError`` naming the equivalent where it does not;
* the names of ``pytensor/__init__.py`` that opweave has, exported by ``opweave``;
* the code of PyTensor's tutorials (``doc/tutorial/*.rst``) run with ``opweave``.

Values are compared with NumPy through the Python backend; the C backend's are in
``tests/backend_c/test_prod_without_zeros_c.py``.
"""

from __future__ import annotations

import importlib
import pickle
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as pt
from opweave.compile import Mode
from opweave.compile.io import In, Out
from opweave.gradient import verify_grad
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor.elemwise import CAReduce, Elemwise
from opweave.tensor.math import MulWithoutZeros, ProdWithoutZeros, mul_without_zeros
from opweave.tensor.reductions import Prod
from opweave.tensor.shape import Reshape, Shape_i

PY = Mode(linker="py", optimizer=None)
RNG = np.random.default_rng(20)


def run(inputs: Sequence[Variable], outputs: Any, *values: Any, mode: Any = PY) -> Any:
    return opweave.function(list(inputs), outputs, mode=mode, on_unused_input="ignore")(*values)


# ====================================================================== ProdWithoutZeros


def prod_of_non_zeros(a: np.ndarray, axis: Any) -> np.ndarray:
    """NumPy's reference: the product of each group's non-zero elements, 0 for a group
    without any (all zeros or empty), in the dtype ``numpy.prod`` gives."""
    dtype = np.prod(np.ones(1, dtype=a.dtype)).dtype
    prod = np.prod(np.where(a != 0, a, np.ones((), a.dtype)), axis=axis, dtype=dtype)
    return np.where(np.any(a != 0, axis=axis), prod, np.zeros((), dtype)).astype(dtype)


DTYPES = ["float64", "float32", "float16", "int8", "int32", "int64", "uint8", "bool"]
AXES = [None, 0, 1, (0, 1), ()]


def _values(dtype: str) -> list[np.ndarray]:
    mixed = np.array([[0, 2, 3], [0, 0, 0], [1, 5, 0]]).astype(dtype)
    if dtype == "bool":
        mixed = np.array([[0, 1, 1], [0, 0, 0], [1, 1, 0]], dtype=bool)
    values = [mixed, np.zeros((0, 3), dtype), np.zeros((2, 0), dtype)]
    if dtype.startswith("float"):
        values.append(np.array([[np.nan, 0, 2], [0, 0, np.nan], [0, 0, 0]], dtype=dtype))
        values.append(RNG.uniform(-2, 2, size=(4, 5)).astype(dtype))
    return values


@pytest.mark.parametrize("dtype", DTYPES)
def test_prod_without_zeros_values_and_dtypes_as_numpy_reference(dtype: str) -> None:
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    outs = [ProdWithoutZeros(axis=axis)(x) for axis in AXES]
    f = opweave.function([x], outs, mode=PY)
    for value in _values(dtype):
        for axis, got in zip(AXES, f(value), strict=True):
            want = prod_of_non_zeros(value, axis)
            assert got.dtype == want.dtype, (dtype, axis)
            assert got.shape == want.shape, (dtype, axis, value.shape)
            # float16 and float32 are accumulated in a wider float (NumPy's in their own).
            rtol = {"float16": 1e-3, "float32": 1e-6}.get(dtype, 1e-12)
            np.testing.assert_allclose(got, want, rtol=rtol)


def test_a_group_without_non_zero_element_gives_zero_not_one() -> None:
    x = pt.dmatrix("x")
    got = run([x], ProdWithoutZeros(axis=1)(x), np.array([[0.0, 0.0], [0.0, 3.0]]))
    np.testing.assert_array_equal(got, [0.0, 3.0])
    assert run([x], ProdWithoutZeros(axis=None)(x), np.zeros((0, 4))) == 0.0
    assert run([x], Prod(axis=None)(x), np.zeros((0, 4))) == 1.0  # an empty product


def test_prod_without_zeros_is_a_reduction_of_mul_without_zeros() -> None:
    x = pt.fmatrix("x")
    out = ProdWithoutZeros(axis=1)(x)
    op = out.owner.op
    assert isinstance(op, CAReduce) and not isinstance(op, Prod)
    assert op.scalar_op == mul_without_zeros and isinstance(op.scalar_op, MulWithoutZeros)
    assert out.owner.inputs == [x]  # no rewritten input: the zeros are skipped by the Op
    assert (op.dtype, op.acc_dtype) == ("float32", "float64")  # as PyTensor's (and Prod's)
    assert str(op) == "ProdWithoutZeros{axis=1, acc=float64}"
    assert ProdWithoutZeros(axis=0) == ProdWithoutZeros(axis=0) != ProdWithoutZeros(axis=1)
    assert mul_without_zeros.identity == 0 and mul_without_zeros.commutative
    assert ps.mul_without_zeros is mul_without_zeros  # opweave.scalar holds it


def test_mul_without_zeros_elementwise() -> None:
    x, y = pt.dvectors("x", "y")
    xv = np.array([0.0, 2.0, 0.0, np.nan, 3.0])
    yv = np.array([4.0, 0.0, 0.0, 0.0, -2.0])
    got = run([x, y], Elemwise(mul_without_zeros)(x, y), xv, yv)
    np.testing.assert_array_equal(got, np.where(xv == 0, yv, np.where(yv == 0, xv, xv * yv)))
    i, j = pt.bvector("i"), pt.wvector("j")
    got = run([i, j], Elemwise(mul_without_zeros)(i, j), [0, 3, -2], [5, 0, 7])
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got, [5, 3, -14])


def test_prod_without_zeros_has_no_gradient_as_in_pytensor() -> None:
    x = pt.dmatrix("x")
    with pytest.raises(TypeError, match=r"ProdWithoutZeros\{axis=1\}.*not implemented"):
        opweave.grad(ProdWithoutZeros(axis=1)(x).sum(), x)


def prod_gradient_reference(a: np.ndarray, axis: int) -> np.ndarray:
    """d sum(prod(a, axis)) / d a: the product of the other elements of the group."""
    moved = np.moveaxis(a, axis, -1)
    n = moved.shape[-1]
    others = np.stack([np.prod(np.delete(moved, k, axis=-1), axis=-1) for k in range(n)], axis=-1)
    return np.moveaxis(others, -1, axis)


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_prod_gradient_with_one_and_with_two_zeros(linker: str) -> None:
    if linker == "cvm":
        pytest.importorskip("opweave_c", reason="the C backend (opweave-c) is not installed")
    x = pt.dmatrix("x")
    g = opweave.grad(pt.prod(x, axis=1).sum(), x)
    f = opweave.function([x], g, mode=Mode(linker=linker))
    value = RNG.uniform(0.5, 2.0, size=(4, 3))
    value[1, 2] = 0.0  # one zero: only it gets a gradient
    value[2, 0] = value[2, 1] = 0.0  # two zeros: no gradient in the group
    value[3] = 0.0  # all zeros
    got = f(value)
    np.testing.assert_allclose(got, prod_gradient_reference(value, 1), rtol=1e-12)
    assert got[1, 2] != 0 and not got[1, :2].any() and not got[2:].any()
    # A group of one element: d x / d x is 1, zero or not.
    np.testing.assert_array_equal(f(np.array([[0.0], [2.0]])), [[1.0], [1.0]])


def test_prod_gradient_verified_with_zeros() -> None:
    base = RNG.uniform(0.5, 2.0, size=(3, 4)) * RNG.choice([-1, 1], size=(3, 4))
    one_zero = base.copy()
    one_zero[0, 1] = 0.0
    two_zeros = base.copy()
    two_zeros[2, 0] = two_zeros[2, 3] = 0.0
    for value in (base, one_zero, two_zeros):
        for axis in (0, 1, None):
            verify_grad(lambda a, axis=axis: pt.prod(a, axis=axis), [value], rng=RNG, mode=PY)


# ====================================================================== Reshape static shapes

a_sym, b_sym = pt.lscalar("a"), pt.lscalar("b")

#: (input static shape, new shape builder, expected static shape, a run-time input shape,
#: the values of ``a`` and ``b`` there). The expectations are at least PyTensor's.
RESHAPES: list[
    tuple[tuple[Any, ...], Callable[[Any], Any], tuple[Any, ...], tuple[int, ...], tuple[int, int]]
] = [
    ((2, 3), lambda x: (3, 2), (3, 2), (2, 3), (0, 0)),
    ((2, 3), lambda x: (-1,), (6,), (2, 3), (0, 0)),
    ((None, 3), lambda x: (-1,), (None,), (4, 3), (0, 0)),
    ((2, 3), lambda x: (-1, 2), (3, 2), (2, 3), (0, 0)),
    ((None, 3), lambda x: (-1, 3), (None, 3), (5, 3), (0, 0)),
    ((2, 3, 4), lambda x: (x.shape[0], -1), (2, 12), (2, 3, 4), (0, 0)),
    ((None, 3, 4), lambda x: (x.shape[0], -1), (None, 12), (5, 3, 4), (0, 0)),
    ((None, 3, 4), lambda x: (-1, x.shape[0]), (12, None), (5, 3, 4), (0, 0)),
    ((2, 3, 4), lambda x: (x.shape[0], x.shape[1] * x.shape[2]), (2, 12), (2, 3, 4), (0, 0)),
    ((None, 3, 4), lambda x: (x.shape[0], x.shape[1] * x.shape[2]), (None, 12), (2, 3, 4), (0, 0)),
    ((2, None, 4), lambda x: (x.shape[0], x.shape[1] * x.shape[2]), (2, None), (2, 3, 4), (0, 0)),
    ((2, 3), lambda x: (x.shape[1], 2), (3, 2), (2, 3), (0, 0)),
    ((4, 3), lambda x: (x.shape[0] // 2, -1), (2, 6), (4, 3), (0, 0)),
    ((2, 3), lambda x: pt.stack([x.shape[1], x.shape[0]]), (3, 2), (2, 3), (0, 0)),
    ((2, 3), lambda x: x.shape, (2, 3), (2, 3), (0, 0)),
    ((None, 3), lambda x: x.shape, (None, 3), (4, 3), (0, 0)),
    ((None, None), lambda x: (a_sym, b_sym), (None, None), (2, 3), (3, 2)),
    ((6,), lambda x: (a_sym, b_sym), (None, None), (6,), (2, 3)),
    ((6,), lambda x: (a_sym, 2), (3, 2), (6,), (3, 0)),
    ((6,), lambda x: (2, a_sym), (2, 3), (6,), (-1, 0)),
    ((6,), lambda x: (a_sym, -1), (None, None), (6,), (3, 0)),
    ((5,), lambda x: a_sym, (5,), (5,), (5, 0)),
    ((None, None), lambda x: pt.as_tensor([2, 3]), (2, 3), (3, 2), (0, 0)),
    ((1, 1), lambda x: (), (), (1, 1), (0, 0)),
    ((0,), lambda x: (a_sym, 0), (None, 0), (0,), (7, 0)),
]


@pytest.mark.parametrize("case", range(len(RESHAPES)))
def test_reshape_static_shape_is_as_specific_as_pytensor_and_right(case: int) -> None:
    in_shape, new_shape, want, run_shape, (a, b) = RESHAPES[case]
    x = pt.tensor("x", shape=in_shape)
    out = x.reshape(new_shape(x))
    assert out.type.shape == want
    # Never wrong: every static length is the run-time one (NumPy's reshape).
    value = RNG.normal(size=run_shape)
    f = opweave.function([x, a_sym, b_sym], out, mode=PY, on_unused_input="ignore")
    got = f(value, a, b)
    assert all(s is None or s == n for s, n in zip(out.type.shape, got.shape, strict=True))
    np.testing.assert_array_equal(got.reshape(-1), value.reshape(-1))


def test_reshape_static_shape_through_a_symbolic_entry_checks_the_size() -> None:
    x = pt.tensor("x", shape=(7,))
    with pytest.raises(ValueError, match="cannot reshape"):
        x.reshape((a_sym, 2))  # no a makes 2 * a == 7
    assert x.reshape((a_sym, 7)).type.shape == (1, 7)


def test_reshape_prints_as_pytensor() -> None:
    x = pt.dmatrix("x")
    assert str(x.reshape((-1,)).owner.op) == "Reshape{1}" == str(Reshape(1))
    assert str(Shape_i(1)) == "Shape_i{1}"


def _clone_shape(fn: Callable[..., Any], specific: Sequence[Variable]) -> tuple[Any, Any]:
    """The static shape of ``fn``'s output built on ``specific`` inputs directly, and of its
    node built on inputs of unknown shapes then rebuilt on ``specific`` ones."""
    generic = [pt.tensor(v.name, dtype=v.type.dtype, shape=(None,) * v.type.ndim) for v in specific]
    out = fn(*generic)
    mapping = dict(zip(generic, specific, strict=True))
    node = out.owner.clone_with_new_inputs([mapping.get(i, i) for i in out.owner.inputs], False)
    return fn(*specific).type.shape, node.outputs[out.index].type.shape


def T(name: str, shape: tuple[int, ...], dtype: str = "float64") -> Variable:
    return pt.tensor(name, dtype=dtype, shape=shape)


#: Ops rebuilt on more specific inputs: (builder, inputs, expected shape of the rebuilt
#: node's output); each expectation is at least PyTensor's.
CLONES: list[tuple[Callable[..., Any], list[Variable], tuple[Any, ...]]] = [
    (lambda x, y: x + y, [T("x", (2, 1)), T("y", (1, 3))], (2, 3)),
    (lambda x: pt.exp(x), [T("x", (4, 5))], (4, 5)),
    (lambda x: x.dimshuffle(1, "x", 0), [T("x", (2, 3))], (3, 1, 2)),
    (lambda x: x.sum(axis=0), [T("x", (2, 3))], (3,)),
    (lambda x: pt.argmax(x, axis=1), [T("x", (2, 3))], (2,)),
    (lambda x: ProdWithoutZeros(axis=1)(x), [T("x", (2, 3))], (2,)),
    (lambda x: x.reshape((-1,)), [T("x", (2, 3))], (6,)),
    (lambda x, a: x.reshape((a, 2)), [T("x", (6,)), pt.lscalar("a")], (3, 2)),
    (lambda x: x[1:], [T("x", (5, 3))], (4, 3)),
    (lambda x: x[::2, 1], [T("x", (5, 3))], (3,)),
    (lambda x, i: x[i], [T("x", (5, 3)), T("i", (4,), "int64")], (4, 3)),
    (lambda x, y: pt.inc_subtensor(x[1:], y), [T("x", (5, 3)), T("y", (4, 3))], (5, 3)),
    (lambda x, y: pt.concatenate([x, y], axis=0), [T("x", (2, 3)), T("y", (4, 3))], (6, 3)),
    (lambda x, y: pt.dot(x, y), [T("x", (2, 3)), T("y", (3,))], (2,)),
    (lambda x, y: pt.dot(x, y), [T("x", (2, 3)), T("y", (3, 4))], (2, 4)),
    (lambda x: x.shape, [T("x", (2, 3))], (2,)),
    (lambda x: pt.specify_shape(x, (None, 3)), [T("x", (2, 3))], (2, 3)),
    (lambda x: pt.cast(x, "int32"), [T("x", (2, 3))], (2, 3)),
    (lambda x: pt.sort(x, axis=0), [T("x", (2, 3))], (2, 3)),
    (lambda x: pt.alloc(x, 2, 3), [T("x", (1, 3))], (2, 3)),
]


@pytest.mark.parametrize("case", range(len(CLONES)))
def test_nodes_rebuilt_on_more_specific_inputs_get_their_static_shapes(case: int) -> None:
    fn, specific, want = CLONES[case]
    direct, rebuilt = _clone_shape(fn, specific)
    assert rebuilt == want
    assert all(w is None or d == w for d, w in zip(direct, want, strict=True))


def test_static_lengths_from_shapes_of_other_variables() -> None:
    x, z = T("x", (2, 3)), T("z", (4,))
    assert pt.alloc(0.0, x.shape[0], 3).type.shape == (2, 3)
    assert pt.alloc(0.0, x.shape[0] * x.shape[1]).type.shape == (6,)
    assert pt.zeros((x.shape[0], 3)).type.shape == (2, 3)
    assert pt.full((x.shape[1], 2), 1.0).type.shape == (3, 2)
    assert pt.eye(x.shape[1]).type.shape == (3, 3)
    assert z.reshape((x.shape[0], -1)).type.shape == (2, 2)
    assert pt.specify_shape(T("y", (None, 3)), (x.shape[0], None)).type.shape == (2, 3)
    got = run([x], pt.eye(x.shape[1]) + pt.zeros((x.shape[1], 3)), np.ones((2, 3)))
    np.testing.assert_array_equal(got, np.eye(3))


# ====================================================================== verify_grad


class NeedsStaticShape(Op):
    """``3 * x``, for inputs whose every length is known statically."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = pt.as_tensor_variable(x)
        if None in x.type.shape:
            raise TypeError(f"NeedsStaticShape needs a static shape, got {x.type}")
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], outputs: list[list[Any]]) -> None:
        outputs[0][0] = 3 * inputs[0]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        return [3 * output_grads[0]]


def test_verify_grad_inputs_have_the_static_shapes_of_the_values() -> None:
    seen: list[tuple[Any, ...]] = []

    def fun(a: Variable, b: Variable) -> Variable:
        seen.append((a.type.shape, b.type.shape, a.type.dtype, b.type.dtype))
        return NeedsStaticShape()(a) * b

    a = RNG.normal(size=(2, 3))
    b = RNG.normal(size=(3,)).astype("float32")
    verify_grad(fun, [a, b], rng=RNG, mode=PY, abs_tol=1e-2, rel_tol=1e-2)
    assert seen[0] == ((2, 3), (3,), "float64", "float32")
    with pytest.raises(TypeError, match="NeedsStaticShape needs a static shape"):
        NeedsStaticShape()(pt.dmatrix("m"))


# ====================================================================== opweave.link


def test_link_c_interface_type_and_op_are_re_exports() -> None:
    from opweave.graph import c_interface
    from opweave.graph import type as graph_type
    from opweave.link.c import interface, op, type

    assert interface.CLinkerOp is c_interface.CLinkerOp
    assert interface.CLinkerType is c_interface.CLinkerType
    assert interface.CLinkerObject is c_interface.CLinkerObject
    assert op.COp is Op
    assert type.CType is graph_type.Type and issubclass(type.CType, c_interface.CLinkerType)
    assert type.Generic is graph_type.Generic and type.generic is graph_type.generic


class Double(importlib.import_module("opweave.link.c.op").COp):  # type: ignore[misc]
    """A PyTensor-style COp: ``make_node``, ``perform`` and ``c_code``."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], outputs: list[list[Any]]) -> None:
        outputs[0][0] = 2 * inputs[0]

    def c_code_cache_version(self) -> tuple[int, ...]:
        return (1,)

    def c_code(self, node: Apply, name: str, inp: list[str], out: list[str], sub: dict) -> str:
        (x,), (z,) = inp, out
        dtype = node.inputs[0].type.dtype
        return f"""
        Py_XDECREF({z});
        {z} = (PyArrayObject*)PyArray_EMPTY(1, PyArray_DIMS({x}), PyArray_TYPE({x}), 0);
        if (!{z}) {{ {sub["fail"]}; }}
        for (npy_intp i = 0; i < PyArray_DIMS({x})[0]; i++)
            *(npy_{dtype}*)PyArray_GETPTR1({z}, i) = 2 * *(npy_{dtype}*)PyArray_GETPTR1({x}, i);
        """


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_a_pytensor_style_cop_runs(linker: str) -> None:
    if linker == "cvm":
        pytest.importorskip("opweave_c", reason="the C backend (opweave-c) is not installed")
    x = pt.dvector("x")
    f = opweave.function([x], Double()(x), mode=Mode(linker=linker, optimizer=None))
    np.testing.assert_array_equal(f(np.arange(5.0)[::2]), [0.0, 4.0, 8.0])
    if linker == "cvm":
        assert f.fn.c_nodes == [0]  # compiled from the Op's own c_code


def test_link_c_basic_names_the_installed_c_linkers() -> None:
    pytest.importorskip("opweave_c", reason="the C backend (opweave-c) is not installed")
    from opweave.link.c.basic import CLinker, OpWiseCLinker
    from opweave.link.lookup import available_linkers

    assert CLinker is available_linkers()["c"] and CLinker.name == "c"
    assert OpWiseCLinker is available_linkers()["cvm"]
    x = pt.dvector("x")
    f = opweave.function([x], x * 2, mode=Mode(linker=CLinker(), optimizer=None))
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])


def test_link_c_basic_without_the_c_backend_says_what_to_install(bare_plugin_manager) -> None:
    with pytest.raises(ImportError, match=r"opweave-c"):
        from opweave.link.c.basic import CLinker  # noqa: F401


@pytest.mark.parametrize(
    ("module", "says"),
    [
        ("opweave.link.c.params_type", "__props__"),
        ("opweave.link.c.cmodule", "opweave_c.cache.ModuleCache"),
        ("opweave.link.pytorch", "no installed plugin provides it"),
        ("opweave.link.mlx", "no installed plugin provides it"),
    ],
)
def test_modules_opweave_lacks_name_the_equivalent(module: str, says: str) -> None:
    with pytest.raises(ModuleNotFoundError, match=says) as info:
        importlib.import_module(module)
    text = str(info.value)
    assert "pytensor.link." in text and (
        "opweave-c" in text
        or "opweave_c" in text
        or "__props__" in text
        or "python -m opweave info" in text
    )


@pytest.mark.parametrize(
    ("module", "name", "says"),
    [
        ("opweave.link.c.op", "ExternalCOp", "c_support_code"),
        ("opweave.link.c.op", "OpenMPOp", "config.openmp"),
        ("opweave.link.c.type", "EnumType", "__props__"),
        ("opweave.link.c.type", "CDataType", "__props__"),
        ("opweave.link.c.interface", "HideC", "base without C code"),
    ],
)
def test_names_opweave_lacks_name_the_equivalent(module: str, name: str, says: str) -> None:
    with pytest.raises(ImportError, match=re.escape(says)) as info:
        exec(f"from {module} import {name}", {})
    assert f"pytensor{module.removeprefix('opweave')}.{name}" in str(info.value)
    mod = importlib.import_module(module)
    with pytest.raises(AttributeError, match="has no attribute 'nothing_like_this'"):
        mod.nothing_like_this  # noqa: B018 - other names are plain AttributeErrors


# ====================================================================== opweave/__init__.py


def test_the_package_exports_pytensor_root_names() -> None:
    from opweave.compile import function_dump, predefined_modes
    from opweave.graph.basic import Variable as GraphVariable
    from opweave.graph.replace import clone_replace, graph_replace
    from opweave.printing import debugprint

    assert opweave.Variable is GraphVariable
    assert opweave.clone_replace is clone_replace and opweave.graph_replace is graph_replace
    assert opweave.function_dump is function_dump
    assert opweave.predefined_modes is predefined_modes
    assert opweave.dprint is debugprint
    assert opweave.Lop is opweave.gradient.Lop and opweave.Rop is opweave.gradient.Rop
    assert opweave.tensor is pt and opweave.scalar is ps
    assert opweave.printing is importlib.import_module("opweave.printing")
    assert opweave.get_scalar_constant_value(pt.constant(3) + 1) == 4
    for name in ("function", "shared", "config", "grad", "In", "Out", "Mode", "get_mode"):
        assert name in opweave.__all__ and getattr(opweave, name) is not None
    x = pt.dscalar("x")
    y = opweave.clone_replace(x * 2, {x: pt.constant(3.0, dtype="float64")})
    assert y.eval() == 6.0
    assert pt.grad is opweave.grad and pt.jacobian is opweave.gradient.jacobian


# ====================================================================== the tutorials


def test_tutorial_adding() -> None:
    x, y = pt.dscalar("x"), pt.dscalar("y")
    z = x + y
    f = opweave.function([x, y], z)
    assert f(2, 3) == 5.0 and np.allclose(f(16.3, 12.1), 28.4)
    assert np.allclose(z.eval({x: 16.3, y: 12.1}), 28.4)
    assert type(x) is pt.TensorVariable and x.type == pt.dscalar().type
    assert opweave.printing.pprint(z) == "(x + y)"
    xm, ym = pt.dmatrix("x"), pt.dmatrix("y")
    f = opweave.function([xm, ym], xm + ym)
    np.testing.assert_array_equal(f([[1, 2], [3, 4]], [[10, 20], [30, 40]]), [[11, 22], [33, 44]])
    np.testing.assert_array_equal(
        f(np.array([[1, 2], [3, 4]]), np.array([[10, 20], [30, 40]])), [[11, 22], [33, 44]]
    )
    # The exercise: a ** 2 + b ** 2 + 2 * a * b.
    a, b = pt.vector(), pt.vector()
    out = a**2 + b**2 + 2 * a * b
    f = opweave.function([a, b], out)
    np.testing.assert_allclose(f([0, 1], [2, 3]), [4.0, 16.0])


def test_tutorial_examples() -> None:
    x = pt.dmatrix("x")
    s = 1 / (1 + pt.exp(-x))
    s2 = (1 + pt.tanh(x / 2)) / 2
    value = np.array([[0.0, 1.0], [-1.0, -2.0]])
    want = 1 / (1 + np.exp(-value))
    np.testing.assert_allclose(opweave.function([x], s)(value), want, rtol=1e-12)
    np.testing.assert_allclose(opweave.function([x], s2)(value), want, rtol=1e-12)
    a, b = pt.dmatrices("a", "b")
    diff = a - b
    f = opweave.function([a, b], [diff, abs(diff), diff**2])
    av, bv = np.ones((2, 2)), np.array([[0.0, 1.0], [2.0, 3.0]])
    for got, ref in zip(f(av, bv), [av - bv, np.abs(av - bv), (av - bv) ** 2], strict=True):
        np.testing.assert_array_equal(got, ref)
    # Default values of inputs, by position and by name.
    x, y, w = pt.dscalars("x", "y", "w")
    f = opweave.function([x, In(y, value=1), In(w, value=2, name="w_by_name")], (x + y) * w)
    assert [f(33), f(33, 2), f(33, 0, 1), f(33, w_by_name=1), f(33, w_by_name=1, y=0)] == [
        68.0,
        70.0,
        33.0,
        34.0,
        33.0,
    ]
    # Shared state, updates, givens, copies.
    state = opweave.shared(0)
    inc = pt.iscalar("inc")
    accumulator = opweave.function([inc], state, updates=[(state, state + inc)])
    assert accumulator(1) == 0 and state.get_value() == 1
    assert accumulator(300) == 1 and state.get_value() == 301
    state.set_value(-1)
    assert accumulator(3) == -1 and state.get_value() == 2
    decrementor = opweave.function([inc], state, updates=[(state, state - inc)])
    assert decrementor(2) == 2 and state.get_value() == 0
    foo = pt.scalar(dtype=state.dtype)
    skip_shared = opweave.function([inc, foo], state * 2 + inc, givens=[(state, foo)])
    assert skip_shared(1, 3) == 7 and state.get_value() == 0
    accumulator(10)
    new_state = opweave.shared(0)
    new_accumulator = accumulator.copy(swap={state: new_state})
    assert new_accumulator(100) == 0 and new_state.get_value() == 100
    assert state.get_value() == 10
    null_accumulator = accumulator.copy(delete_updates=True)
    assert null_accumulator(9000) == 10 and state.get_value() == 10


def test_tutorial_gradients() -> None:
    x = pt.dscalar("x")
    f = opweave.function([x], pt.grad(x**2, x))
    assert f(4) == 8.0 and np.allclose(f(94.2), 188.4)
    xm = pt.dmatrix("x")
    gs = pt.grad(pt.sum(1 / (1 + pt.exp(-xm))), xm)
    value = np.array([[0.0, 1.0], [-1.0, -2.0]])
    sig = 1 / (1 + np.exp(-value))
    np.testing.assert_allclose(opweave.function([xm], gs)(value), sig * (1 - sig), rtol=1e-12)
    # Jacobian, Hessian and Hessian-times-vector.
    v = pt.dvector("v")
    xv = pt.tensor("x", shape=(2,))  # opweave's jacobian unrolls: a static length
    np.testing.assert_array_equal(
        opweave.function([xv], pt.jacobian(xv**2, xv))([4.0, 4.0]), [[8.0, 0.0], [0.0, 8.0]]
    )
    np.testing.assert_array_equal(
        opweave.function([xv], pt.hessian(pt.sum(xv**2), xv))([4.0, 4.0]), [[2.0, 0.0], [0.0, 2.0]]
    )
    gy = pt.grad(pt.sum(xv**2), xv)
    vH = pt.grad(pt.sum(gy * v), xv)
    np.testing.assert_array_equal(opweave.function([xv, v], vH)([4.0, 4.0], [2.0, 2.0]), [4.0, 4.0])
    # The R- and L-operators (PyTensor's pushforward and pullback).
    W, V = pt.dmatrix("W"), pt.dmatrix("V")
    y = pt.dot(xv, W)
    JV = opweave.gradient.Rop(y, W, V)
    # opweave's R-operator of dot(x, W) is dot(x, V): W is no input of it.
    f = opweave.function([W, V, xv], JV, on_unused_input="ignore")
    got = f([[1, 1], [1, 1]], [[2, 2], [2, 2]], [0, 1])
    np.testing.assert_array_equal(got, [2.0, 2.0])
    VJ = opweave.gradient.Lop(y, W, v)
    np.testing.assert_array_equal(
        opweave.function([v, xv], VJ)([2, 2], [0, 1]), [[0.0, 0.0], [2.0, 2.0]]
    )


def test_tutorial_shape_info() -> None:
    x = pt.matrix("x")
    f = opweave.function([x], (x**2).shape)
    ops = [type(n.op) for n in f.maker.fgraph.toposort()]
    assert Shape_i in ops and Elemwise not in ops  # the shape without computing x ** 2
    np.testing.assert_array_equal(f(np.ones((3, 4), dtype=x.dtype)), [3, 4])
    x = pt.matrix()
    f = opweave.function([x], (pt.specify_shape(x, (2, 2)) ** 2).shape)
    assert len(f.maker.fgraph.toposort()) == 1  # a constant
    np.testing.assert_array_equal(f(np.ones((2, 2), dtype=x.dtype)), [2, 2])
    x, y = pt.matrix("x"), pt.matrix("y")
    z = pt.join(0, x, y)
    xv, yv = RNG.random((5, 4)), RNG.random((3, 3))
    # The shape graph does not check what the join would (as in PyTensor).
    np.testing.assert_array_equal(opweave.function([x, y], z.shape)(xv, yv), [8, 4])
    with pytest.raises(ValueError, match="Join"):
        opweave.function([x, y], z)(xv, yv)


def test_tutorial_broadcasting() -> None:
    x_matrix, y_col = pt.matrix("x_matrix"), pt.col("y_col")
    assert x_matrix.type.shape == (None, None) and y_col.type.shape == (None, 1)
    fn = opweave.function([x_matrix, y_col], x_matrix + y_col)
    X, Y = np.arange(9.0).reshape(3, 3), np.arange(3.0).reshape(3, 1)
    np.testing.assert_array_equal(fn(X, Y), X + Y)
    y_matrix = pt.matrix("y_matrix")
    fn = opweave.function([x_matrix, y_matrix], x_matrix + y_matrix)
    with pytest.raises(ValueError, match="static shape"):
        fn(np.zeros((3, 3)), np.zeros((3, 1)))  # not statically broadcastable
    assert fn(np.zeros((3, 3)), np.zeros((3, 3))).shape == (3, 3)
    assert fn(np.zeros((3, 1)), np.zeros((3, 1))).shape == (3, 1)
    y_col = pt.matrix("y_col", shape=(None, 1))
    fn = opweave.function([x_matrix, y_col], x_matrix + y_col)
    np.testing.assert_array_equal(fn(np.ones((3, 3)), np.ones((3, 1))), np.full((3, 3), 2.0))
    out = x_matrix + pt.specify_shape(y_matrix, (None, 1))
    fn = opweave.function([x_matrix, y_matrix], out)
    np.testing.assert_array_equal(fn(np.ones((3, 3)), np.ones((3, 1))), np.full((3, 3), 2.0))
    y_vector = pt.vector("y_vector")
    fn = opweave.function([x_matrix, y_vector], x_matrix + y_vector[:, None])
    np.testing.assert_array_equal(
        fn(np.zeros((3, 3)), np.arange(3.0)), np.arange(3.0)[:, None] + np.zeros((3, 3))
    )
    n = pt.scalar("n", dtype="int64")
    assert pt.full((n,), 0.0).type.shape == (None,) and pt.full((1,), 0.0).type.shape == (1,)
    assert pt.constant(np.zeros((3, 1))).type.shape == (3, 1)
    assert opweave.shared(np.zeros((3, 1))).type.shape == (None, None)
    assert opweave.shared(np.zeros((3, 1)), shape=(None, 1)).type.shape == (None, 1)


def test_tutorial_aliasing() -> None:
    np_array = np.ones(2, dtype="float32")
    s_default = opweave.shared(np_array)
    s_false = opweave.shared(np_array, borrow=False)
    s_true = opweave.shared(np_array, borrow=True)
    np_array += 1
    np.testing.assert_array_equal(s_default.get_value(), [1.0, 1.0])
    np.testing.assert_array_equal(s_false.get_value(), [1.0, 1.0])
    np.testing.assert_array_equal(s_true.get_value(), [2.0, 2.0])
    s = opweave.shared(np_array)
    assert not np.shares_memory(s.get_value(borrow=False), s.get_value(borrow=True))
    assert isinstance(s.get_value(borrow=True, return_internal_type=True), np.ndarray)
    x = pt.matrix()
    f = opweave.function([In(x, borrow=True)], Out(2 * x, borrow=True))
    np.testing.assert_array_equal(f(np.ones((2, 2), dtype=x.dtype)), np.full((2, 2), 2.0))


def test_tutorial_conditions_switch() -> None:
    a, b = pt.scalars("a", "b")
    x, y = pt.matrices("x", "y")
    z_switch = pt.switch(pt.lt(a, b), pt.mean(x), pt.mean(y))
    f_switch = opweave.function([a, b, x, y], z_switch, mode=Mode(linker="vm"))
    xv, yv = np.ones((10, 4), dtype=x.dtype), np.full((3, 3), 5.0, dtype=y.dtype)
    assert f_switch(0.0, 1.0, xv, yv) == 1.0 and f_switch(1.0, 0.0, xv, yv) == 5.0


def test_tutorial_printing_and_modes() -> None:
    x = pt.matrix("x")
    w = opweave.shared(RNG.standard_normal(4), name="w")
    b = opweave.shared(np.asarray(0.0), name="b")
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))
    prediction = p_1 > 0.5
    text = opweave.printing.debugprint(prediction, file="str")
    assert text.splitlines()[0].startswith("Gt") and "Exp" in text
    # PyTensor's tutorial prints gt((1 / (1 + exp(((-(x \\dot w)) - b)))), 0.5)
    printed = opweave.printing.pprint(prediction)
    assert printed.startswith("gt((") and "exp(" in printed and "(x \\dot w)" in printed
    predict = opweave.function([x], prediction, name="predict")
    xv = RNG.standard_normal((5, 4))
    want = 1 / (1 + np.exp(-(xv @ w.get_value()))) > 0.5
    np.testing.assert_array_equal(predict(xv), want)
    v = pt.dvector("v")
    f = opweave.function([v], 10 * v, mode="DebugMode")
    np.testing.assert_array_equal(f([5.0]), [50.0])


def test_tutorial_loading_and_saving() -> None:
    from opweave.graph.traversal import graph_inputs

    x = pt.dvector("x")
    y = 2 * x + 1
    loaded = pickle.loads(pickle.dumps(y, protocol=pickle.HIGHEST_PROTOCOL))
    (x2,) = [v for v in graph_inputs([loaded]) if v.name == "x"]
    np.testing.assert_array_equal(opweave.function([x2], loaded)([1.0, 2.0]), [3.0, 5.0])
    state = opweave.shared(np.arange(3.0), name="state")
    loaded_state = pickle.loads(pickle.dumps(state))
    np.testing.assert_array_equal(loaded_state.get_value(), [0.0, 1.0, 2.0])
    assert loaded_state.name == "state"


def test_link_vm_is_an_attribute_after_import() -> None:
    # PyTensor code reads pytensor.link.vm.VMLinker after a bare "import pytensor".
    code = (
        "import opweave\n"
        "assert opweave.link.vm.VMLinker is opweave.link.lookup.available_linkers()['vm']\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
