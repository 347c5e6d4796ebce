"""PyTensor's names in the tensor library, importable and behaving as in PyTensor.

The constructors of ``tensor.type`` (and their plural rules), the plural scalar
constructors of ``scalar.basic``, ``tensor.exceptions``,
``get_underlying_scalar_constant_value``/``get_scalar_constant_value``, ``Join()``,
``max_and_argmax``, ``dense_dot``, ``ProdWithoutZeros`` (and ``Prod``'s
``no_zeros_in_input``), ``median``, ``tensor.basic.tensor``, ``tile``, ``choose`` and
``sort``/``argsort``. Values are compared with NumPy through the Python backend (and the C
one, when installed), gradients with finite differences.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.compile.ops import deep_copy_op
from opweave.gradient import grad, verify_grad
from opweave.graph.basic import Constant, Variable, io_toposort
from opweave.scalar.basic import apply_across_args, complexs, complexs64, complexs128, floats, ints
from opweave.tensor import TensorType
from opweave.tensor import basic as tb
from opweave.tensor import math as tm
from opweave.tensor.basic import (
    Choose,
    Join,
    choose,
    get_scalar_constant_value,
    get_underlying_scalar_constant_value,
    tile,
)
from opweave.tensor.exceptions import (
    AdvancedIndexingError,
    EmptyConstantError,
    NotScalarConstantError,
    ShapeError,
)
from opweave.tensor.math import ProdWithoutZeros, dense_dot, max_and_argmax, median
from opweave.tensor.reductions import Prod
from opweave.tensor.sort import ArgSortOp, SortOp, argsort, sort

T = importlib.import_module("opweave.tensor.type")
C = importlib.import_module("opweave.tensor.constructors")
ts = importlib.import_module("opweave.tensor.shape")

PY = Mode(linker="py", optimizer=None)
RNG = np.random.default_rng(7)

#: ``pytensor.tensor.type.__all__`` (PyTensor's constructors and Types).
PYTENSOR_TYPE_NAMES = """
TensorType bcol bmatrix brow bscalar btensor3 btensor4 btensor5 btensor6 btensor7 bvector ccol
cmatrix col cols complex_matrix_types complex_scalar_types complex_types complex_vector_types
crow cscalar ctensor3 ctensor4 ctensor5 ctensor6 ctensor7 cvector dcol dcols dmatrices dmatrix
drow drows dscalar dscalars dtensor3 dtensor3s dtensor4 dtensor4s dtensor5 dtensor5s dtensor6
dtensor6s dtensor7 dtensor7s dvector dvectors fcol fcols float_matrix_types float_scalar_types
float_types float_vector_types fmatrices fmatrix frow frows fscalar fscalars ftensor3 ftensor3s
ftensor4 ftensor4s ftensor5 ftensor5s ftensor6 ftensor6s ftensor7 ftensor7s fvector fvectors
icol icols imatrices imatrix int_matrix_types int_scalar_types int_types int_vector_types irow
irows iscalar iscalars itensor3 itensor3s itensor4 itensor4s itensor5 itensor5s itensor6
itensor6s itensor7 itensor7s ivector ivectors lcol lcols lmatrices lmatrix lrow lrows lscalar
lscalars ltensor3 ltensor3s ltensor4 ltensor4s ltensor5 ltensor5s ltensor6 ltensor6s ltensor7
ltensor7s lvector lvectors matrices matrix row rows scalar scalars tensor tensor3 tensor3s
tensor4 tensor4s tensor5 tensor5s tensor6 tensor6s tensor7 tensor7s values_eq_approx_always_true
vector vectors wcol wrow wscalar wtensor3 wtensor4 wtensor5 wtensor6 wtensor7 wvector zcol
zmatrix zrow zscalar ztensor3 ztensor4 ztensor5 ztensor6 ztensor7 zvector
""".split()

PREFIX_DTYPES = {
    "b": "int8",
    "w": "int16",
    "i": "int32",
    "l": "int64",
    "f": "float32",
    "d": "float64",
    "c": "complex64",
    "z": "complex128",
}
KIND_SHAPES = {
    "scalar": (),
    "vector": (None,),
    "matrix": (None, None),
    "row": (1, None),
    "col": (None, 1),
    **{f"tensor{k}": (None,) * k for k in range(3, 8)},
}


def run(inputs: Sequence[Variable], outputs: Any, *values: Any, mode: Any = PY) -> Any:
    return opweave.function(list(inputs), outputs, mode=mode, on_unused_input="ignore")(*values)


def verify(fun: Callable[..., Any], pt: Sequence[np.ndarray]) -> None:
    verify_grad(fun, list(pt), rng=np.random.default_rng(3), mode=Mode(linker="py"))


def linkers() -> list[str]:
    """``py``, and ``cvm`` when the C backend is installed and usable."""
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return ["py"]
    return ["py", "cvm"]


# ====================================================================== names


def test_every_pytensor_type_name_exists_where_pytensor_has_it() -> None:
    missing = [name for name in PYTENSOR_TYPE_NAMES if not hasattr(T, name)]
    assert missing == []
    assert set(PYTENSOR_TYPE_NAMES) <= set(T.__all__)
    # One implementation: the constructors module and the package re-export type.py's.
    for name in C.__all__:
        if hasattr(T, name):
            assert getattr(C, name) is getattr(T, name), name
    for name in PYTENSOR_TYPE_NAMES:
        if hasattr(ot, name):
            assert getattr(ot, name) is getattr(T, name), name
    assert tb.tensor is T.tensor
    assert T.values_eq_approx_always_true(np.zeros(2), np.ones(3)) is True


@pytest.mark.parametrize("prefix", sorted(PREFIX_DTYPES))
def test_typed_constructors_are_the_types_pytensor_names(prefix: str) -> None:
    dtype = PREFIX_DTYPES[prefix]
    for kind, shape in KIND_SHAPES.items():
        name = prefix + kind
        if hasattr(T, name):
            assert getattr(T, name) == TensorType(dtype, shape=shape), name
            var = getattr(T, name)("v")
            assert var.name == "v" and var.type.shape == shape and var.dtype == dtype


@pytest.mark.parametrize("kind", sorted(KIND_SHAPES))
def test_generic_constructors(kind: str) -> None:
    make = getattr(T, kind)
    var = make("v", dtype="int16")
    assert var.type == TensorType("int16", shape=KIND_SHAPES[kind]) and var.name == "v"
    assert make().dtype == opweave.config.floatX
    with pytest.raises(TypeError, match="shape must be a tuple"):
        make(shape=3)
    with pytest.raises(ValueError, match=f"length {len(KIND_SHAPES[kind])}"):
        make(shape=(None,) * (len(KIND_SHAPES[kind]) + 1))
    with pytest.raises(ValueError, match="looks like a dtype"):
        make("float64")


def test_tensor_constructor() -> None:
    x = T.tensor("x", dtype="int32", shape=(2, None, 1))
    assert x.type == TensorType("int32", shape=(2, None, 1))
    with pytest.raises(TypeError, match="static shape"):
        T.tensor("x")
    with pytest.raises(TypeError, match="name"):
        T.tensor(3, shape=())


# ====================================================================== plural constructors


def test_plural_constructors_follow_pytensors_rules() -> None:
    x, y = T.scalars("xy")  # one variable per character
    assert (x.name, y.name) == ("x", "y") and x.type == TensorType(opweave.config.floatX, ())
    a, b = T.dvectors("a", "b")
    assert (a.name, b.name) == ("a", "b") and a.type == T.dvector
    abc, d = T.lmatrices("abc", "d")  # several names: one variable per name
    assert (abc.name, d.name) == ("abc", "d") and abc.type == T.lmatrix
    three = T.ftensor3s(3)
    assert len(three) == 3 and all(v.name is None and v.type == T.ftensor3 for v in three)
    single = T.iscalars("s")  # a one-character name: the variable, not a list
    assert isinstance(single, Variable) and single.name == "s" and single.type == T.iscalar
    assert T.rows() == []
    (p,) = T.cols(["p"])  # a list of names always gives a list
    assert p.name == "p" and p.type == T.col().type
    for bad in ((1.5,), (True,), (["a", 3],), (2, "x"), (-1,)):
        with pytest.raises(TypeError):
            T.scalars(*bad)


def test_every_plural_constructor_makes_its_singular_type() -> None:
    for kind in KIND_SHAPES:
        plural = "matrices" if kind == "matrix" else kind + "s"
        for prefix in ("", "f", "d", "i", "l"):
            many = getattr(T, prefix + plural)
            one = getattr(T, prefix + kind)
            m, n = many("mn")
            want = one("w").type
            assert m.type == want and n.type == want and (m.name, n.name) == ("m", "n")


def test_scalar_plural_constructors() -> None:
    x, y = floats("xy")
    assert (x.name, y.name) == ("x", "y") and x.type == ps.float64
    i, j = ints(2)
    assert i.type == j.type == ps.int64 and i.name is None and i is not j
    assert complexs("c").type == ps.complex128
    assert [v.type for v in complexs64("ab")] == [ps.complex64, ps.complex64]
    assert complexs128("z").type == ps.complex128
    assert ps.floats is floats and ps.ints is ints
    many = apply_across_args(ps.int8, ps.uint16)
    assert [f("q").type for f in many] == [ps.int8, ps.uint16]


# ====================================================================== exceptions


def test_exceptions_module() -> None:
    assert NotScalarConstantError is ot.NotScalarConstantError
    assert issubclass(EmptyConstantError, NotScalarConstantError)
    assert issubclass(AdvancedIndexingError, TypeError)
    assert issubclass(ShapeError, Exception)
    with pytest.raises(EmptyConstantError, match="no element"):
        get_underlying_scalar_constant_value(ot.constant(np.zeros((0, 2))))
    with pytest.raises(NotScalarConstantError):
        get_underlying_scalar_constant_value(np.array([], dtype="int8"))


# ====================================================================== constant values


def _cases() -> list[tuple[str, Callable[[], Any], Any]]:
    v = ot.dvector("v")
    m = ot.tensor("m", dtype="float32", shape=(2, 5))
    return [
        ("constant", lambda: ot.constant(np.int16(7)), np.int16(7)),
        ("equal elements", lambda: ot.constant(np.full((2, 2), 2.5)), np.float64(2.5)),
        ("cast", lambda: tb.cast(ot.constant(3.7), "int32"), np.float64(3.7).astype("int32")),
        ("static shape", lambda: ot.specify_shape(v, (4,)).shape[0], np.int64(4)),
        ("shape arithmetic", lambda: m.shape[1] * 2 - 1, np.int64(5 * 2 - 1)),
        ("Shape_i", lambda: ts.Shape_i(0)(m), np.int64(2)),
        ("alloc", lambda: tb.alloc(ot.constant(5.0), 3, 2), np.float64(5.0)),
        ("second", lambda: tb.second(v, ot.constant(np.float32(7))), np.float32(7)),
        ("dimshuffle", lambda: ot.constant([3, 3]).dimshuffle("x", 0), np.int8(3)),
        ("maximum", lambda: tm.maximum(ot.constant(np.int32(2)), 5), np.int32(5)),
        ("switch", lambda: tb.switch(ot.constant(1), ot.constant(4.0), 5.0), np.float64(4.0)),
        ("true_div", lambda: ot.constant(np.int64(7)) / ot.constant(np.int64(2)), 3.5),
        ("comparison", lambda: tm.lt(ot.constant(1), ot.constant(2)), np.True_),
        ("make_vector", lambda: tb.stack([ot.constant(1), v.shape[0]])[0], np.int64(1)),
        ("indexing", lambda: ot.constant(np.array([1, 9], dtype="int16"))[1], np.int16(9)),
        ("joined", lambda: tb.join(0, ot.constant([1, 2]), ot.constant([5]))[2], np.int8(5)),
        ("scalar Op", lambda: tb.tensor_from_scalar(ps.constant(3.5) + 4.0), 7.5),
        ("deep copy", lambda: deep_copy_op(ot.constant(np.float32(1.5))), np.float32(1.5)),
        ("python int", lambda: 3, np.int64(3)),
        ("array", lambda: np.array([[4]], dtype="uint8"), np.uint8(4)),
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_get_underlying_scalar_constant_value(case: Any) -> None:
    _, build, expected = case
    v = build()
    value = get_underlying_scalar_constant_value(v)
    assert isinstance(value, np.ndarray) and value.shape == ()
    assert value == expected
    want_dtype = v.type.dtype if isinstance(v, Variable) else np.asarray(expected).dtype
    assert value.dtype == np.dtype(want_dtype)


@pytest.mark.parametrize(
    "build",
    [
        lambda: ot.exp(ot.constant(0.0)),  # not among the Ops evaluated
        lambda: ot.dvector("free"),
        lambda: ot.dvector("v").shape[0],  # length unknown
        lambda: ot.constant([1, 2]),  # two values
        lambda: np.array([1, 2]),
        lambda: None,
        lambda: "text",
    ],
)
def test_get_underlying_scalar_constant_value_refuses(build: Callable[[], Any]) -> None:
    with pytest.raises(NotScalarConstantError):
        get_underlying_scalar_constant_value(build())


def test_get_underlying_scalar_constant_value_options() -> None:
    cast = tb.cast(ot.constant(2.0), "int64")
    with pytest.raises(NotScalarConstantError):
        get_underlying_scalar_constant_value(cast, elemwise=False)
    filled = tb.second(ot.dvector("v"), ot.constant(1.5))
    assert get_underlying_scalar_constant_value(filled, elemwise=False) == 1.5
    copied = deep_copy_op(ot.constant(1.0))
    with pytest.raises(NotScalarConstantError):
        get_underlying_scalar_constant_value(copied, only_process_constants=True)
    with pytest.raises(NotScalarConstantError):
        get_underlying_scalar_constant_value(deep_copy_op(copied), max_recur=1)
    assert get_underlying_scalar_constant_value(deep_copy_op(copied), max_recur=2) == 1.0
    free = ot.dscalar("free")
    assert get_underlying_scalar_constant_value(free, raise_not_constant=False) is free


def test_get_scalar_constant_value_needs_a_scalar() -> None:
    assert get_scalar_constant_value(ot.constant(np.int32(4))) == 4
    vec = ot.constant([3, 3])
    assert get_underlying_scalar_constant_value(vec) == 3
    with pytest.raises(NotScalarConstantError, match="not a scalar"):
        get_scalar_constant_value(vec)
    with pytest.raises(NotScalarConstantError, match="not a scalar"):
        get_scalar_constant_value(np.array([3, 3]))
    assert get_scalar_constant_value(vec, raise_not_constant=False) is vec


# ====================================================================== Join


def test_join_takes_its_axis_as_the_first_input() -> None:
    x, y = ot.dmatrix("x"), ot.fmatrix("y")
    out = Join()(1, x, y)
    axis, *tensors = out.owner.inputs
    assert isinstance(axis, Constant) and axis.ndim == 0 and int(axis.data) == 1
    assert tensors == [x, y] and out.dtype == "float64"
    assert Join() == Join() and hash(Join()) == hash(Join()) and Join.__props__ == ()
    assert str(Join()) == "Join"
    for axis_in in (-1, ot.constant(np.int8(-1))):
        normalized = tb.join(axis_in, x, y).owner
        assert int(normalized.inputs[0].data) == 1 and tb.join_axis(normalized) == 1
    int8_axis = tb.join(ot.constant(np.int8(0)), x, y).owner.inputs[0]
    assert int8_axis.dtype == "int8" and int(int8_axis.data) == 0
    assert tb.join_axis(tb.concatenate([x, y], axis=-2).owner) == 0
    a = ot.tensor("a", shape=(2, 3))
    assert tb.join(1, a, ot.tensor("b", shape=(2, None))).type.shape == (2, None)
    assert tb.join(0, a, a).type.shape == (4, 3)


def test_join_axis_may_be_symbolic() -> None:
    x, y, ax = ot.dmatrix("x"), ot.dmatrix("y"), ot.lscalar("ax")
    out = Join()(ax, x, y)
    assert out.owner.inputs[0] is ax and tb.join_axis(out.owner) is None
    assert out.type.shape == (None, None)
    xv, yv = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    f = opweave.function([x, y, ax], [out, out.shape], mode=PY)
    for axis in (0, 1, -1, -2):
        value, shape = f(xv, yv, axis)
        np.testing.assert_array_equal(value, np.concatenate([xv, yv], axis=axis))
        np.testing.assert_array_equal(shape, value.shape)
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        f(xv, yv, 2)
    with pytest.raises(TypeError, match="node of Join"):
        tb.join_axis(x.owner)


def test_join_errors() -> None:
    x = ot.dmatrix("x")
    with pytest.raises(TypeError, match="Join: axis must be"):
        Join()(1.0, x, x)
    with pytest.raises(TypeError, match="Join: axis must be an integer, got the bool"):
        Join()(True, x, x)
    with pytest.raises(TypeError, match="Join: axis must be a 0-d integer"):
        Join()(ot.lvector("ax"), x, x)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of range"):
        tb.join(2, x, x)
    with pytest.raises(np.exceptions.AxisError, match="axis -3 is out of range"):
        Join()(-3, x, x)
    with pytest.raises(TypeError, match="0-d; use stack"):
        tb.join(-1, ot.dscalar(), ot.dscalar())
    with pytest.raises(ValueError, match="at least one tensor"):
        Join()(0)


@pytest.mark.parametrize("linker", linkers())
def test_join_values_and_gradient(linker: str) -> None:
    x, y = ot.dmatrix("x"), ot.lmatrix("y")
    xv, yv = RNG.normal(size=(2, 3)), RNG.integers(-5, 5, size=(2, 3))
    outs = [tb.join(0, x, y), tb.join(-1, x, x, y), tb.concatenate([y, y]), tb.stack([x, x], 1)]
    got = run([x, y], outs, xv, yv, mode=Mode(linker=linker))
    want = [
        np.concatenate([xv, yv]),
        np.concatenate([xv, xv, yv], axis=-1),
        np.concatenate([yv, yv]),
        np.stack([xv, xv], 1),
    ]
    for g, w, o in zip(got, want, outs, strict=True):
        assert g.dtype == np.dtype(o.dtype)
        np.testing.assert_array_equal(g, w)
    verify(lambda a, b: tb.join(1, a, 2 * b), [xv, RNG.normal(size=(2, 4))])
    verify(lambda a: tb.split(a, [1, 2], 2, axis=1)[1], [xv])  # split's gradient joins


# ====================================================================== math helpers


def test_max_and_argmax() -> None:
    x = ot.dtensor3("x")
    xv = RNG.normal(size=(2, 3, 4))
    for axis in (None, 1, (0, 2), -1):
        for keepdims in (False, True):
            mx, am = max_and_argmax(x, axis=axis, keepdims=keepdims)
            got_max = run([x], mx, xv)
            np.testing.assert_array_equal(got_max, np.max(xv, axis=axis, keepdims=keepdims))
            if axis is None or isinstance(axis, int):
                got_arg = run([x], am, xv)
                want = np.argmax(xv, axis=axis, keepdims=keepdims)
                np.testing.assert_array_equal(got_arg, want)
                assert am.dtype == "int64"


def test_dense_dot_matches_numpy_dot() -> None:
    cases = [
        ((), (3, 4)),
        ((4,), (4,)),
        ((3, 4), (4,)),
        ((4,), (4, 2)),
        ((3, 4), (4, 2)),
        ((2, 3, 4), (4, 5)),
        ((3, 4), (2, 4, 5)),
    ]
    for sa, sb in cases:
        a, b = ot.tensor("a", shape=(None,) * len(sa)), ot.tensor("b", shape=(None,) * len(sb))
        av, bv = RNG.normal(size=sa), RNG.normal(size=sb)
        out = dense_dot(a, b)
        np.testing.assert_allclose(run([a, b], out, av, bv), np.dot(av, bv), rtol=1e-12)
    m = ot.dmatrix("m")
    mv = RNG.normal(size=(2, 2))
    np.testing.assert_allclose(run([m], dense_dot(2.0, m), mv), 2.0 * mv)
    with pytest.raises(TypeError):
        dense_dot(m, "text")


def _prod_without_zeros(a: np.ndarray, axis: Any) -> np.ndarray:
    # The product of the non-zero elements; 0 for a group without any (PyTensor's values).
    prod = np.prod(np.where(a == 0, 1, a), axis=axis)
    return np.where(np.any(a != 0, axis=axis), prod, 0)


def test_prod_without_zeros_values() -> None:
    x = ot.dmatrix("x")
    xv = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 0.0], [1.5, -2.0, 0.0]])
    for axis in (None, 0, 1, (0, 1)):
        out = ProdWithoutZeros(axis=axis)(x)
        np.testing.assert_array_equal(run([x], out, xv), _prod_without_zeros(xv, axis))
    out = ProdWithoutZeros(axis=(1,))(x)
    assert out.owner.op.scalar_op == ps.mul_without_zeros
    assert str(out.owner.op) == "ProdWithoutZeros{axis=1}"
    assert out.type == TensorType("float64", shape=(None,))
    i = ot.imatrix("i")
    iv = np.array([[0, 2, 3], [4, 0, 5]], dtype="int32")
    got = run([i], ProdWithoutZeros(axis=1)(i), iv)
    assert got.dtype == np.int64  # NumPy's product dtype
    np.testing.assert_array_equal(got, _prod_without_zeros(iv, 1))


def test_prod_without_zeros_gradient() -> None:
    # As in PyTensor, the Op has no gradient of its own (prod's handles zeros).
    x = ot.dmatrix("x")
    with pytest.raises(TypeError, match=r"ProdWithoutZeros.*not implemented"):
        grad(ProdWithoutZeros(axis=1)(x).sum(), x)


def _eq_nodes(outputs: Sequence[Variable]) -> int:
    return sum(
        isinstance(getattr(n.op, "scalar_op", None), ps.EQ)
        for n in io_toposort([], list(outputs))
        if n.op is not None
    )


def test_prod_no_zeros_in_input() -> None:
    x = ot.dmatrix("x")
    plain, promised = tm.prod(x, axis=1), tm.prod(x, axis=1, no_zeros_in_input=True)
    op = promised.owner.op
    assert type(op) is Prod and op.axis == (1,) and op.no_zeros_in_input
    assert op == op.clone() and plain.owner.op != op  # a property: part of equality
    assert str(promised.owner.op) == "Prod{axis=1, no_zeros_in_input}"
    # The promise drops the graph that handles zeros from the gradient.
    assert _eq_nodes([grad(plain.sum(), x)]) > 0
    assert _eq_nodes([grad(promised.sum(), x)]) == 0
    xv = RNG.uniform(0.5, 2.0, size=(3, 4))
    verify(lambda a: tm.prod(a, axis=0, no_zeros_in_input=True), [xv])
    np.testing.assert_allclose(
        run([x], grad(promised.sum(), x), xv), run([x], grad(plain.sum(), x), xv), rtol=1e-12
    )


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1), (1, 2), ()])
@pytest.mark.parametrize("length", [4, 5])
def test_median_matches_numpy(axis: Any, length: int) -> None:
    x = ot.dtensor3("x")
    xv = RNG.normal(size=(3, length, 2))
    out = median(x, axis=axis)
    got = run([x], out, xv)
    want = np.median(xv, axis=axis)
    assert got.shape == want.shape and out.ndim == want.ndim
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_median_dtypes_and_gradient() -> None:
    i = ot.lvector("i")
    f = ot.fvector("f")
    assert median(i).dtype == "float64" and median(f).dtype == "float32"
    iv = np.array([4, 1, 7, 2], dtype="int64")
    np.testing.assert_array_equal(run([i], median(i), iv), np.median(iv))
    fv = np.array([3.5, -1.0, 2.0], dtype="float32")
    assert run([f], median(f), fv) == np.median(fv)
    verify(lambda a: median(a, axis=1), [RNG.normal(size=(3, 4))])
    verify(lambda a: median(a), [RNG.normal(size=(5,))])


# ====================================================================== tile


@pytest.mark.parametrize(
    "reps", [2, (2,), (1, 3), (2, 1, 2), (0, 2), [3, 1, 1, 2]], ids=lambda r: repr(r)
)
def test_tile_matches_numpy(reps: Any) -> None:
    a = ot.dmatrix("a")
    av = RNG.normal(size=(2, 3))
    out = tile(a, reps)
    got = run([a], out, av)
    want = np.tile(av, reps)
    np.testing.assert_array_equal(got, want)
    assert out.ndim == want.ndim


def test_tile_static_shapes_symbolic_reps_and_gradient() -> None:
    a = ot.tensor("a", dtype="int32", shape=(2, 3))
    assert tile(a, (2, 2)).type == TensorType("int32", shape=(4, 6))
    assert tile(a, (3, 1, 2)).type.shape == (3, 2, 6)
    r = ot.lscalar("r")
    assert tile(a, (r, 2)).type.shape == (None, 6)
    av = np.arange(6, dtype="int32").reshape(2, 3)
    np.testing.assert_array_equal(run([a, r], tile(a, (r, 2)), av, 3), np.tile(av, (3, 2)))
    v = ot.lvector("v")
    vv = np.array([2, 1])
    tiled = tile(a, ot.specify_shape(v, (2,)))  # a vector of reps needs a static length
    np.testing.assert_array_equal(run([a, v], tiled, av, vv), np.tile(av, vv))
    x = ot.dvector("x")
    xv = RNG.normal(size=(3,))
    np.testing.assert_array_equal(run([x, r], tile(x, r), xv, 2), np.tile(xv, 2))
    verify(lambda b: tile(b, (2, 3)), [RNG.normal(size=(2, 2))])


def test_tile_errors() -> None:
    a = ot.dmatrix("a")
    with pytest.raises(TypeError, match=r"tile: reps\[0\]"):
        tile(a, (1.5, 2))
    with pytest.raises(ValueError, match="not known statically"):
        tile(a, ot.lvector("v"))
    with pytest.raises(ValueError, match="scalar or a vector"):
        tile(a, ot.lmatrix("m"))


# ====================================================================== choose


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_matches_numpy(mode: str) -> None:
    a, c = ot.lmatrix("a"), ot.dtensor3("c")
    av = RNG.integers(-4, 7, size=(2, 3)) if mode != "raise" else RNG.integers(0, 3, (2, 3))
    cv = RNG.normal(size=(3, 2, 3))
    out = choose(a, c, mode=mode)
    assert isinstance(out.owner.op, Choose) and out.owner.op.mode == mode
    np.testing.assert_array_equal(run([a, c], out, av, cv), np.choose(av, cv, mode=mode))


def test_choose_broadcasts_a_list_of_choices() -> None:
    a = ot.ivector("a")
    p, q = ot.dmatrix("p"), ot.dscalar("q")
    out = choose(a, [p, q, ot.constant(np.arange(3.0))])
    av = np.array([0, 1, 2], dtype="int32")
    pv = RNG.normal(size=(2, 3))
    got = run([a, p, q], out, av, pv, 5.0)
    np.testing.assert_array_equal(got, np.choose(av, [pv, 5.0, np.arange(3.0)]))
    assert out.type == TensorType("float64", shape=(None, 3))
    static = choose(ot.tensor("s", dtype="int8", shape=(1, 4)), ot.tensor("t", shape=(2, 3, 1)))
    assert static.type.shape == (3, 4)


def test_choose_errors() -> None:
    c = ot.dmatrix("c")
    with pytest.raises(TypeError, match="integer tensor"):
        choose(ot.dvector("f"), c)
    with pytest.raises(TypeError, match="integer tensor"):
        choose(ot.vector("u", dtype="uint64"), c)
    with pytest.raises(TypeError, match="0-d"):
        choose(ot.lvector("a"), ot.dscalar("s"))
    with pytest.raises(ValueError, match="mode must be one of"):
        Choose("nearest")
    with pytest.raises(ValueError, match="do not broadcast"):
        choose(ot.tensor("a", dtype="int64", shape=(2,)), ot.tensor("t", shape=(2, 3)))
    a = ot.lvector("a")
    f = opweave.function([a, c], choose(a, c), mode=PY)
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        f(np.array([0, 2]), np.zeros((2, 2)))


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_gradient(mode: str) -> None:
    av = np.array([[0, 2, 1], [5, -1, 0]]) if mode != "raise" else np.array([[0, 2, 1], [2, 1, 0]])
    a = ot.constant(av)
    verify(lambda c: choose(a, c, mode=mode), [RNG.normal(size=(3, 2, 3))])
    # Broadcast choices: their gradient is summed over the dimensions of static length 1.
    broadcast = RNG.normal(size=(3, 1, 3))
    verify(lambda c: choose(a, ot.specify_shape(c, broadcast.shape), mode=mode), [broadcast])
    two = ot.constant(np.array([0, 1, 1]))  # indices into two choices: a vector and a scalar
    verify(lambda p, q: choose(two, [p, q], mode=mode), [RNG.normal(size=(3,)), RNG.normal()])


# ====================================================================== sort


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("kind", ["quicksort", "mergesort", "heapsort", "stable"])
def test_sort_and_argsort_match_numpy(axis: Any, kind: str) -> None:
    x = ot.dmatrix("x")
    xv = RNG.integers(0, 4, size=(4, 5)).astype("float64")  # ties
    xv[1, 2] = np.nan
    s, i = sort(x, axis=axis, kind=kind), argsort(x, axis=axis, kind=kind)
    got_s, got_i = run([x], [s, i], xv)
    np.testing.assert_array_equal(got_s, np.sort(xv, axis=axis, kind=kind))
    if kind in ("mergesort", "stable"):  # the order of ties is defined
        np.testing.assert_array_equal(got_i, np.argsort(xv, axis=axis, kind=kind))
    assert i.dtype == "int64" and s.type == (x.type if axis is not None else ot.dvector().type)


def test_sort_symbolic_axis_and_gradients() -> None:
    x, ax = ot.dtensor3("x"), ot.lscalar("ax")
    xv = RNG.normal(size=(2, 3, 4))
    w = RNG.normal(size=(2, 3, 4))
    for axis in (0, 1, 2, -1):
        got = run([x, ax], sort(x, ax), xv, axis)
        np.testing.assert_array_equal(got, np.sort(xv, axis=axis))
        g = run([x, ax], grad((sort(x, ax) * w).sum(), x), xv, axis)
        expected = np.zeros_like(xv)
        np.put_along_axis(expected, np.argsort(xv, axis=axis), w, axis=axis)
        np.testing.assert_allclose(g, expected)
    verify(lambda a: sort(a, axis=0), [xv])
    verify(lambda a: sort(a, axis=None), [xv])
    assert run([x], grad(argsort(x).sum().astype("float64"), x), xv).sum() == 0


def test_sort_errors() -> None:
    x = ot.dmatrix("x")
    with pytest.raises(TypeError, match="0-d"):
        sort(ot.dscalar("s"))
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of range"):
        sort(x, axis=2)
    with pytest.raises(TypeError, match="signed integer"):
        argsort(x, axis=ot.dscalar("f"))
    with pytest.raises(ValueError, match="kind must be one of"):
        SortOp("bubble")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="order"):
        sort(x, order=["a"])
    with pytest.raises(ValueError, match="either kind or stable"):
        argsort(x, kind="heapsort", stable=True)
    assert argsort(x, stable=True).owner.op == ArgSortOp("stable")


# ====================================================================== backends agree


@pytest.mark.skipif(linkers() == ["py"], reason="the C backend (opweave-c) is not installed")
def test_c_backend_gives_the_python_values() -> None:
    x, a, ax = ot.dmatrix("x"), ot.lvector("a"), ot.lscalar("ax")
    outs = [
        sort(x, ax),
        argsort(x, ax, kind="stable"),
        choose(a, x, mode="wrap"),
        Join()(1, x, x),
        ProdWithoutZeros(axis=0)(x),
        median(x, axis=1),
        tile(x, (2, 1)),
    ]
    xv = RNG.integers(-2, 3, size=(3, 4)).astype("float64")
    args = (xv, np.array([0, 4, -1, 2]), np.int64(-1))
    want = run([x, a, ax], outs, *args)
    f = opweave.function([x, a, ax], outs, mode=Mode(linker="cvm", optimizer=None))
    got = f(*args)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    nodes = f.maker.fgraph.toposort()
    in_c = {type(nodes[k].op) for k in f.fn.c_nodes}
    assert {SortOp, ArgSortOp, Choose, Join} <= in_c
