"""The tensor Type layer: `TensorType`, tensor variables and constants, constructors."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.ops import Shape_i, deep_copy_op
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.type import generic
from opweave.tensor import (
    NotScalarConstantError,
    OperatorUnavailableError,
    TensorConstant,
    TensorType,
    TensorVariable,
)

F64_N3 = r"TensorType\(float64, shape=\(None, 3\)\)"


@pytest.fixture
def t_n3() -> TensorType:
    return TensorType("float64", shape=(None, 3))


# ---------------------------------------------------------------------- construction


def test_attributes() -> None:
    t = TensorType("float32", shape=(None, 1, 4))
    assert t.dtype == "float32" and t.numpy_dtype == np.dtype("float32")
    assert t.shape == (None, 1, 4) and t.ndim == 3
    assert t.broadcastable == (False, True, False)


def test_dtype_forms() -> None:
    assert TensorType(np.int32, shape=()).dtype == "int32"
    assert TensorType(np.dtype("complex64"), shape=()).dtype == "complex64"
    assert TensorType(float, shape=()).dtype == "float64"
    with opweave.config.change_flags(floatX="float32"):
        assert TensorType("floatX", shape=()).dtype == "float32"


def test_broadcastable_keyword_converts_to_shape() -> None:
    t = TensorType("int64", broadcastable=(True, False))
    assert t.shape == (1, None) and t == TensorType("int64", shape=(1, None))
    assert TensorType("int64", shape=(True, False)).shape == (1, None)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"dtype": "object", "shape": ()}, TypeError, "unsupported dtype 'object'"),
        ({"dtype": "not-a-dtype", "shape": ()}, TypeError, "invalid dtype"),
        ({"dtype": None, "shape": ()}, TypeError, "dtype is required"),
        ({"dtype": "float64"}, TypeError, "needs a static shape"),
        ({"dtype": "float64", "shape": (-1,)}, ValueError, ">= 0"),
        ({"dtype": "float64", "shape": (2.5,)}, TypeError, "None or a non-negative int"),
        ({"dtype": "float64", "shape": (1,), "broadcastable": (True,)}, TypeError, "not both"),
    ],
)
def test_bad_construction(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        TensorType(**kwargs)


def test_str_repr_and_name() -> None:
    assert str(TensorType("float64", shape=(None, 3))) == "TensorType(float64, shape=(None, 3))"
    assert repr(TensorType("int8", shape=(None,))) == "TensorType(int8, shape=(None,))"
    assert str(TensorType("bool", shape=())) == "TensorType(bool, shape=())"
    named = TensorType("float64", shape=(), name="myscalar")
    assert str(named) == "myscalar"
    assert repr(named) == "TensorType(float64, shape=())"


def test_eq_and_hash() -> None:
    a = TensorType("float64", shape=(None, 3))
    b = TensorType("float64", shape=(None, 3), name="other name")
    assert a == b and hash(a) == hash(b)
    assert a != TensorType("float32", shape=(None, 3))
    assert a != TensorType("float64", shape=(None, None))
    assert a != TensorType("float64", shape=(None, 3, 1))
    assert a != "TensorType(float64, shape=(None, 3))"
    assert len({a, b, TensorType("float32", shape=(None, 3))}) == 2


def test_clone() -> None:
    t = TensorType("float64", shape=(None, 3))
    assert t.clone() == t
    assert t.clone(dtype="int32") == TensorType("int32", shape=(None, 3))
    assert t.clone(shape=(2, 3)) == TensorType("float64", shape=(2, 3))
    assert t.clone(broadcastable=(True, False)) == TensorType("float64", shape=(1, None))
    # Theano's positional form clone(dtype, broadcastable).
    assert t.clone("float32", (False, True)) == TensorType("float32", shape=(None, 1))


def test_c_element_type_and_specs() -> None:
    assert TensorType("float64", shape=()).c_element_type() == "npy_float64"
    assert TensorType("uint16", shape=(None,)).c_element_type() == "npy_uint16"
    assert TensorType("int32", shape=()).dtype_specs() == (int, "npy_int32", "NPY_INT32")


def test_shape_info_size_and_zeros() -> None:
    t = TensorType("float32", shape=(None, None))
    value = np.ones((3, 5), dtype="float32")
    info = t.get_shape_info(value)
    assert info == (3, 5)
    assert t.get_size(info) == 3 * 5 * 4
    assert TensorType("int16", shape=()).get_size(()) == 2
    zeros = t.value_zeros((2, 2))
    assert zeros.dtype == np.float32 and zeros.shape == (2, 2) and not zeros.any()


# ---------------------------------------------------------------------- filter: strict


def test_strict_returns_the_same_object(t_n3: TensorType) -> None:
    value = np.zeros((2, 3))
    assert t_n3.filter(value, strict=True) is value


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ([[1.0, 2.0, 3.0]], "strict.*expected a numpy.ndarray of dtype float64, got list"),
        (np.zeros((2, 3), dtype="float32"), "strict.*dtype float64, got dtype float32"),
        (np.zeros((2, 3), dtype="int64"), "strict.*dtype float64, got dtype int64"),
        (np.zeros(3), "expected 2 dimension"),
        (np.zeros((2, 4)), "does not match the static shape"),
    ],
)
def test_strict_rejections(t_n3: TensorType, value: object, match: str) -> None:
    with pytest.raises(TypeError, match=F64_N3 + ".*" + match):
        t_n3.filter(value, strict=True)


def test_strict_rejects_numpy_scalar() -> None:
    with pytest.raises(TypeError, match=r"TensorType\(float64, shape=\(\)\).*got float64"):
        TensorType("float64", shape=()).filter(np.float64(1.0), strict=True)


def test_is_valid_value_is_strict(t_n3: TensorType) -> None:
    assert t_n3.is_valid_value(np.zeros((4, 3)))
    assert not t_n3.is_valid_value([[0.0, 0.0, 0.0]])
    assert not t_n3.is_valid_value(np.zeros((4, 3), dtype="float32"))


# ---------------------------------------------------------------------- filter: conversions


def test_matching_array_passes_through(t_n3: TensorType) -> None:
    value = np.zeros((1, 3))
    assert t_n3.filter(value) is value


def test_lists_and_numbers_convert() -> None:
    out = TensorType("float64", shape=(None, 2)).filter([[1, 2], [3, 4]])
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == (2, 2)
    zero_d = TensorType("int32", shape=()).filter(7)
    assert isinstance(zero_d, np.ndarray) and zero_d.shape == () and zero_d.dtype == np.int32
    assert zero_d == 7


def test_numpy_scalar_becomes_0d_array() -> None:
    out = TensorType("float64", shape=()).filter(np.float64(2.5))
    assert type(out) is np.ndarray and out.shape == () and out == 2.5
    out32 = TensorType("float32", shape=()).filter(np.float32(1.5))
    assert type(out32) is np.ndarray and out32.dtype == np.float32


def test_safe_array_upcast_is_allowed() -> None:
    out = TensorType("float64", shape=(None,)).filter(np.array([1, 2], dtype="int32"))
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0]
    out = TensorType("int64", shape=(None,)).filter(np.array([1, 2], dtype="uint8"))
    assert out.dtype == np.int64


def test_lossy_array_dtype_needs_allow_downcast() -> None:
    t = TensorType("int32", shape=(None,))
    value = np.array([1, 2], dtype="int64")
    with pytest.raises(TypeError, match=r"TensorType\(int32, shape=\(None,\)\).*dtype int64"):
        t.filter(value)
    with pytest.raises(TypeError, match="loss of precision"):
        t.filter(value, allow_downcast=False)
    out = t.filter(value, allow_downcast=True)
    assert out.dtype == np.int32 and out.tolist() == [1, 2]


def test_float64_array_to_float32_rules() -> None:
    t = TensorType("float32", shape=(None,))
    exact = np.array([0.5, 1.0])  # the dtype decides for arrays, not the values
    with pytest.raises(TypeError, match=r"TensorType\(float32, shape=\(None,\)\).*float64"):
        t.filter(exact)
    with opweave.config.change_flags(floatX="float32"):
        with pytest.raises(TypeError, match="dtype float64"):
            t.filter(exact)
    assert t.filter(exact, allow_downcast=True).dtype == np.float32


def test_python_float_to_float32_rules() -> None:
    t = TensorType("float32", shape=())
    # Exactly representable values are always accepted.
    assert t.filter(0.5).dtype == np.float32
    assert t.filter([0.25][0]) == np.float32(0.25)
    # 0.1 is not exact in float32: refused unless float32 is floatX or downcasting is allowed.
    with opweave.config.change_flags(floatX="float64"):
        with pytest.raises(TypeError, match=r"TensorType\(float32, shape=\(\)\).*0\.1 exactly"):
            t.filter(0.1)
    with opweave.config.change_flags(floatX="float32"):
        out = t.filter(0.1)
        assert out.dtype == np.float32 and out == np.float32(0.1)
        with pytest.raises(TypeError, match="exactly"):
            t.filter(0.1, allow_downcast=False)
    assert t.filter(0.1, allow_downcast=True) == np.float32(0.1)


def test_python_list_of_floats_to_float32_value_rule() -> None:
    t = TensorType("float32", shape=(None,))
    assert t.filter([0.5, 2.0]).dtype == np.float32
    with pytest.raises(TypeError, match="exactly"):
        t.filter([0.5, 0.1])
    with pytest.raises(TypeError, match="exactly"):
        t.filter([2**24 + 1])
    nan = t.filter([float("nan"), 1.0])  # NaN survives the cast
    assert np.isnan(nan[0])


@pytest.mark.parametrize("value", [[128], [-129], [1.5], [float("nan")]])
def test_integer_value_loss_is_refused(value: list) -> None:
    with pytest.raises(TypeError, match=r"TensorType\(int8, shape=\(None,\)\).*exactly"):
        TensorType("int8", shape=(None,)).filter(value)


def test_integer_exact_values_are_accepted() -> None:
    t = TensorType("int8", shape=(None,))
    assert t.filter([1.0, -128, 127]).tolist() == [1, -128, 127]
    assert TensorType("uint64", shape=()).filter(2**64 - 1) == 2**64 - 1
    with pytest.raises(TypeError, match="exactly"):
        TensorType("uint8", shape=()).filter(-1)


def test_complex_to_real() -> None:
    t = TensorType("float64", shape=(None,))
    assert t.filter([1 + 0j]).tolist() == [1.0]
    with pytest.raises(TypeError, match="exactly"):
        t.filter([1 + 2j])
    with pytest.raises(TypeError, match="dtype complex128"):
        t.filter(np.array([1 + 0j]))


# ---------------------------------------------------------------------- filter: bad input


def test_wrong_rank(t_n3: TensorType) -> None:
    with pytest.raises(TypeError, match=F64_N3 + r" expected 2 dimension.*got a value with 1"):
        t_n3.filter([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"TensorType\(float64, shape=\(\)\) expected 0 dim"):
        TensorType("float64", shape=()).filter([1.0])


def test_wrong_static_shape(t_n3: TensorType) -> None:
    with pytest.raises(TypeError, match=F64_N3 + r".*shape \(2, 4\).*static shape"):
        t_n3.filter(np.zeros((2, 4)))
    with pytest.raises(TypeError, match="wrong shape"):
        t_n3.filter([[1.0, 2.0]])


def test_none_is_rejected(t_n3: TensorType) -> None:
    with pytest.raises(TypeError, match=F64_N3 + " cannot hold None"):
        t_n3.filter(None)
    with pytest.raises(TypeError, match="cannot hold None"):
        t_n3.filter(None, strict=True)


def test_ragged_lists_are_rejected(t_n3: TensorType) -> None:
    with pytest.raises(ValueError, match=F64_N3 + ".*ragged"):
        t_n3.filter([[1.0, 2.0, 3.0], [4.0, 5.0]])


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (object(), "expected a numeric value, got object"),
        ([[1.0, None, 3.0]], "dtype object"),
        ("1.0", "got the string '1.0'"),
        (b"12", "got the string"),
        ([["a", "b", "c"]], "not numeric"),
        ({"a": 1}, "got dict"),
    ],
)
def test_non_numeric_values_are_rejected(t_n3: TensorType, value: object, match: str) -> None:
    with pytest.raises(TypeError, match=F64_N3 + ".*" + match):
        t_n3.filter(value)


def test_variables_and_masked_arrays_are_rejected() -> None:
    t = TensorType("float64", shape=(None,))
    with pytest.raises(TypeError, match=r"TensorType\(float64, shape=\(None,\)\).*symbolic"):
        t.filter(t("x"))
    with pytest.raises(TypeError, match="masked"):
        t.filter(np.ma.masked_array([1.0, 2.0], mask=[True, False]))


def test_unaligned_array_is_copied() -> None:
    raw = np.zeros(8 * 4 + 1, dtype=np.uint8)[1:]
    unaligned = raw.view(np.float64)
    assert not unaligned.flags.aligned
    t = TensorType("float64", shape=(None,))
    out = t.filter(unaligned)
    assert out.flags.aligned and out.shape == (4,)
    with pytest.raises(TypeError, match="aligned"):
        t.filter(unaligned, strict=True)


# ---------------------------------------------------------------------- filter_inplace


def test_filter_inplace_reuses_storage() -> None:
    t = TensorType("float64", shape=(None,))
    storage = np.zeros(3)
    out = t.filter_inplace([1, 2, 3], storage)
    assert out is storage and storage.tolist() == [1.0, 2.0, 3.0]
    new = np.array([4.0, 5.0, 6.0])
    assert t.filter_inplace(new, storage) is storage
    assert not np.may_share_memory(storage, new) and storage.tolist() == [4.0, 5.0, 6.0]


def test_filter_inplace_falls_back_when_storage_does_not_fit() -> None:
    t = TensorType("float64", shape=(None,))
    storage = np.zeros(3)
    out = t.filter_inplace([1.0, 2.0], storage)
    assert out is not storage and out.tolist() == [1.0, 2.0] and not storage.any()
    readonly = np.zeros(2)
    readonly.flags.writeable = False
    assert t.filter_inplace([1.0, 2.0], readonly) is not readonly
    assert t.filter_inplace([1.0, 2.0], None).tolist() == [1.0, 2.0]


def test_filter_inplace_filters() -> None:
    t = TensorType("float64", shape=(None,))
    storage = np.zeros(2)
    with pytest.raises(TypeError, match=r"TensorType\(float64, shape=\(None,\)\).*dimension"):
        t.filter_inplace(np.zeros((2, 2)), storage)
    with pytest.raises(TypeError, match="strict"):
        t.filter_inplace([1.0, 2.0], storage, strict=True)
    assert not storage.any()


# ---------------------------------------------------------------------- variables and Types


def test_filter_variable_and_is_super() -> None:
    general = TensorType("float64", shape=(None, None))
    specific = TensorType("float64", shape=(2, None))
    x = specific("x")
    assert general.is_super(specific) and not specific.is_super(general)
    assert general.filter_variable(x) is x
    same = general("y")
    assert general.filter_variable(same) is same
    with pytest.raises(TypeError, match=r"TensorType\(float32, shape=\(None, None\)\)"):
        TensorType("float32", shape=(None, None)).filter_variable(x)
    with pytest.raises(TypeError, match="cannot convert"):
        TensorType("float64", shape=(3, None)).filter_variable(x)  # incompatible lengths
    with pytest.raises(TypeError, match="cannot convert"):
        TensorType("float64", shape=(None,)).filter_variable(x)


def test_filter_variable_makes_constants_from_values() -> None:
    t = TensorType("float64", shape=(None,))
    c = t.filter_variable([1, 2])
    # as in PyTensor, a constant takes the shape of its value
    assert isinstance(c, TensorConstant) and c.data.tolist() == [1.0, 2.0]
    assert c.type == TensorType("float64", shape=(2,)) and t.is_super(c.type)


def test_in_same_class() -> None:
    t = TensorType("float64", shape=(None, 1))
    assert t.in_same_class(TensorType("float64", shape=(3, 1)))
    assert not t.in_same_class(TensorType("float64", shape=(None, None)))


# ---------------------------------------------------------------------- value comparison


def test_values_eq_exact_with_nans() -> None:
    t = TensorType("float64", shape=(None,))
    nan = float("nan")
    assert t.values_eq(np.array([1.0, nan]), np.array([1.0, nan]))
    assert not t.values_eq(np.array([1.0, nan]), np.array([nan, 1.0]))
    assert not t.values_eq(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]))
    assert not t.values_eq(np.zeros(2), np.zeros(3))
    assert not t.values_eq(np.zeros(2), np.zeros(2, dtype="float32"))
    assert t.values_eq(np.zeros(2), np.zeros(2, dtype="float32"), force_same_dtype=False)


def test_values_eq_approx_tolerances() -> None:
    t = TensorType("float64", shape=(None,))
    a = np.array([1.0, 2.0])
    assert t.values_eq_approx(a, a + 1e-9)
    assert not t.values_eq_approx(a, a + 1e-3)
    assert t.values_eq_approx(a, a + 1e-3, rtol=1e-2)
    assert t.values_eq_approx(a, a + 0.5, atol=1.0)
    assert not t.values_eq_approx(a, np.array([1.0, 2.0, 3.0]))
    assert not t.values_eq_approx(a, a.astype("float32"))
    loose = np.array([1.0], dtype="float32")
    assert t.values_eq_approx(loose, loose + np.float32(5e-6))  # float32 default tolerance
    assert not t.values_eq_approx(a, [1.0, 2.0])  # not an array


def test_values_eq_approx_nan_and_inf() -> None:
    eq = TensorType("float64", shape=(None,)).values_eq_approx
    nan, inf = float("nan"), float("inf")
    assert eq(np.array([nan, 1.0]), np.array([nan, 1.0]))
    assert not eq(np.array([nan, 1.0]), np.array([1.0, 1.0]))
    assert not eq(np.array([1.0, 1.0]), np.array([nan, 1.0]))
    assert eq(np.array([nan, 1.0]), np.array([5.0, 1.0]), allow_remove_nan=True)
    assert eq(np.array([inf, -inf]), np.array([inf, -inf]))
    assert not eq(np.array([inf]), np.array([-inf]))
    assert not eq(np.array([inf]), np.array([1e308]))
    assert eq(np.array([inf]), np.array([-inf]), allow_remove_inf=True)
    assert eq(np.array([inf]), np.array([3.0]), allow_remove_inf=True)


def test_values_eq_approx_discrete_is_exact() -> None:
    eq = TensorType("int64", shape=(None,)).values_eq_approx
    assert eq(np.array([1, 2]), np.array([1, 2]))
    assert not eq(np.array([1, 2]), np.array([1, 3]))


def test_may_share_memory() -> None:
    t = TensorType("float64", shape=(None,))
    a = np.arange(10.0)
    assert t.may_share_memory(a, a)
    assert t.may_share_memory(a, a[2:5])
    assert t.may_share_memory(a[::2], a[1::2])  # interleaved views share the buffer
    assert not t.may_share_memory(a, a.copy())
    assert not t.may_share_memory(a, [1.0])
    assert not t.may_share_memory(1.0, 1.0)


# ---------------------------------------------------------------------- constructors


TYPED = [
    ("bscalar", "int8", ()),
    ("wscalar", "int16", ()),
    ("iscalar", "int32", ()),
    ("lscalar", "int64", ()),
    ("ubscalar", "uint8", ()),
    ("uwscalar", "uint16", ()),
    ("uiscalar", "uint32", ()),
    ("ulscalar", "uint64", ()),
    ("fscalar", "float32", ()),
    ("dscalar", "float64", ()),
    ("cscalar", "complex64", ()),
    ("zscalar", "complex128", ()),
    ("bvector", "int8", (None,)),
    ("wvector", "int16", (None,)),
    ("ivector", "int32", (None,)),
    ("lvector", "int64", (None,)),
    ("fvector", "float32", (None,)),
    ("dvector", "float64", (None,)),
    ("cvector", "complex64", (None,)),
    ("zvector", "complex128", (None,)),
    ("bmatrix", "int8", (None, None)),
    ("imatrix", "int32", (None, None)),
    ("lmatrix", "int64", (None, None)),
    ("fmatrix", "float32", (None, None)),
    ("dmatrix", "float64", (None, None)),
    ("zmatrix", "complex128", (None, None)),
    ("drow", "float64", (1, None)),
    ("irow", "int32", (1, None)),
    ("fcol", "float32", (None, 1)),
    ("lcol", "int64", (None, 1)),
    ("dtensor3", "float64", (None,) * 3),
    ("wtensor3", "int16", (None,) * 3),
    ("ftensor4", "float32", (None,) * 4),
    ("ctensor4", "complex64", (None,) * 4),
    ("ltensor5", "int64", (None,) * 5),
    ("itensor6", "int32", (None,) * 6),
    ("dtensor7", "float64", (None,) * 7),
]


@pytest.mark.parametrize(("name", "dtype", "shape"), TYPED)
def test_typed_shortcuts(name: str, dtype: str, shape: tuple) -> None:
    ttype = getattr(ot, name)
    assert isinstance(ttype, TensorType)
    assert ttype == TensorType(dtype, shape=shape)
    var = ttype("v")
    assert isinstance(var, TensorVariable) and var.type == ttype and var.name == "v"
    assert var.dtype == dtype and var.ndim == len(shape)
    assert var.broadcastable == tuple(s == 1 for s in shape)


@pytest.mark.parametrize(
    ("fn", "shape"),
    [
        (ot.scalar, ()),
        (ot.vector, (None,)),
        (ot.matrix, (None, None)),
        (ot.row, (1, None)),
        (ot.col, (None, 1)),
        (ot.tensor3, (None,) * 3),
        (ot.tensor4, (None,) * 4),
    ],
)
def test_constructor_functions(fn: object, shape: tuple) -> None:
    x = fn("x")  # type: ignore[operator]
    assert isinstance(x, TensorVariable) and x.name == "x"
    assert x.type == TensorType("float64", shape=shape)
    assert fn(dtype="int32").type == TensorType("int32", shape=shape)  # type: ignore[operator]
    with opweave.config.change_flags(floatX="float32"):
        assert fn().dtype == "float32"  # type: ignore[operator]


def test_constructor_static_shapes() -> None:
    assert ot.vector(shape=(3,)).type.shape == (3,)
    assert ot.matrix(shape=(None, 4)).broadcastable == (False, False)
    assert ot.matrix(shape=(1, 4)).broadcastable == (True, False)
    with pytest.raises(ValueError, match="length 2"):
        ot.matrix(shape=(3,))
    with pytest.raises(ValueError, match="first dimension"):
        ot.row(shape=(2, None))
    with pytest.raises(ValueError, match="second dimension"):
        ot.col(shape=(None, 2))
    with pytest.raises(ValueError, match="length 0"):
        ot.scalar(shape=(1,))


def test_tensor_constructor() -> None:
    x = ot.tensor("x", dtype="int16", shape=(None, 2, 1))
    assert x.type == TensorType("int16", shape=(None, 2, 1)) and x.broadcastable[2]
    assert ot.tensor(dtype="float32", broadcastable=(True,)).type.shape == (1,)
    with pytest.raises(TypeError, match="static shape"):
        ot.tensor("x")
    with pytest.raises(ValueError, match="looks like a dtype"):
        ot.tensor("float32", shape=(None,))
    with pytest.raises(ValueError, match="dtype="):
        ot.vector("int64")
    with pytest.raises(TypeError, match="name"):
        ot.vector(3)  # type: ignore[arg-type]


def test_plural_constructors() -> None:
    a, b = ot.dmatrices("a", "b")
    assert a.name == "a" and b.name == "b" and a.type == ot.dmatrix
    three = ot.fvectors(3)
    assert len(three) == 3 and all(v.type == ot.fvector and v.name is None for v in three)
    only = ot.scalars("s")  # one name of one character: the variable itself, as in PyTensor
    assert only.type == TensorType(opweave.config.floatX, shape=())


# ---------------------------------------------------------------------- tensor variables


def test_variable_static_facts() -> None:
    x = ot.tensor("x", dtype="int32", shape=(None, 1))
    assert x.ndim == 2 and x.dtype == "int32" and x.broadcastable == (False, True)
    assert str(x) == "x"
    assert isinstance(x.clone(), TensorVariable) and x.clone().type == x.type


def test_variables_have_no_truth_value() -> None:
    x = ot.dscalar("x")
    with pytest.raises(TypeError, match="no truth value"):
        bool(x)
    with pytest.raises(TypeError, match="no truth value"):
        if x:
            pass


def test_variables_compare_by_identity() -> None:
    x, y = ot.dscalar("x"), ot.dscalar("y")
    assert x == x and x != y  # identity, no symbolic equality
    assert len({x, y, x}) == 2


def test_iteration_needs_a_static_length() -> None:
    with pytest.raises(TypeError, match=r"cannot iterate.*builtins\.sum"):
        iter(ot.dvector("v"))
    with pytest.raises(TypeError, match="cannot iterate"):
        iter(ot.dscalar("s"))


def test_item_assignment_is_refused() -> None:
    x = ot.dvector("x")
    with pytest.raises(TypeError, match="set_subtensor"):
        x[0] = 1.0


def test_shape_property_builds_a_shape_graph() -> None:
    x = ot.dmatrix("x")
    s = x.shape
    assert isinstance(s, TensorVariable) and s.type == TensorType("int64", shape=(2,))
    assert s.owner is not None and s.owner.inputs == [x]


def test_transfer() -> None:
    x = ot.dvector("x")
    assert x.transfer("cpu") is x
    with pytest.raises(ValueError, match="'nowhere'"):
        x.transfer("nowhere")


def _fake_module(monkeypatch: pytest.MonkeyPatch, name: str, **functions: object) -> None:
    """Replace functions of the real ``opweave.tensor.<name>`` module for one test."""
    module = sys.modules[f"opweave.tensor.{name}"]
    for key, fn in functions.items():
        monkeypatch.setattr(module, key, fn)


def test_operators_delegate_to_tensor_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    def record(fname: str) -> object:
        return lambda *args, **kwargs: (fname, args, kwargs)

    names = ["add", "sub", "mul", "true_div", "pow", "matmul", "lt", "neg", "sum", "max", "dot"]
    _fake_module(monkeypatch, "math", **{n: record(n) for n in names})
    _fake_module(monkeypatch, "basic", transpose=record("transpose"), cast=record("cast"))
    _fake_module(monkeypatch, "subtensor", getitem=record("getitem"))
    _fake_module(monkeypatch, "shape", reshape=record("reshape"), shape=record("shape"))
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    assert x + y == ("add", (x, y), {})
    assert 2 + x == ("add", (2, x), {})
    assert x - 1 == ("sub", (x, 1), {})
    assert 1 - x == ("sub", (1, x), {})
    assert 3 * x == ("mul", (3, x), {})
    assert x / y == ("true_div", (x, y), {})
    assert 2**x == ("pow", (2, x), {})
    assert x @ y == ("matmul", (x, y), {})
    assert (x < y) == ("lt", (x, y), {})
    assert -x == ("neg", (x,), {})
    assert np.float64(2.0) * x == ("mul", (np.float64(2.0), x), {})
    assert x.sum(axis=0) == (
        "sum",
        (x,),
        {"axis": 0, "dtype": None, "keepdims": False, "acc_dtype": None},
    )
    assert x.max() == ("max", (x, None), {"keepdims": False})
    assert x.dot(y) == ("dot", (x, y), {})
    assert x.T == ("transpose", (x,), {})
    assert x.transpose(1, 0) == ("transpose", (x, (1, 0)), {})
    assert x.astype("int32") == ("cast", (x, "int32"), {})
    assert x[0, 1:] == ("getitem", (x, (0, slice(1, None))), {})
    assert x.reshape((4,)) == ("reshape", (x, (4,)), {"ndim": None})
    assert x.shape == ("shape", (x,), {})


def test_dimshuffle_delegates_to_elemwise(monkeypatch: pytest.MonkeyPatch) -> None:
    class FakeDimShuffle:
        def __init__(self, input_ndim: int, new_order: tuple) -> None:
            self.args = (input_ndim, tuple(new_order))

        def __call__(self, x: object) -> object:
            return (self.args, x)

    _fake_module(monkeypatch, "elemwise", DimShuffle=FakeDimShuffle)
    x = ot.dmatrix("x")
    assert x.dimshuffle(1, "x", 0) == ((2, (1, "x", 0)), x)
    assert x.dimshuffle([1, 0]) == ((2, (1, 0)), x)


def test_extra_ops_methods_delegate_to_extra_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    def record(fname: str) -> object:
        return lambda *args, **kwargs: (fname, args, kwargs)

    names = ["cumsum", "cumprod", "repeat", "squeeze", "searchsorted", "compress"]
    _fake_module(monkeypatch, "extra_ops", **{n: record(n) for n in names})
    x, c = ot.dvector("x"), ot.bvector("c")
    assert x.cumsum() == ("cumsum", (x, None), {})
    assert x.cumprod(0) == ("cumprod", (x, 0), {})
    assert x.repeat(2, axis=0) == ("repeat", (x, 2, 0), {})
    assert x.squeeze() == ("squeeze", (x,), {"axis": None})
    assert x.searchsorted(1.0, side="right") == ("searchsorted", (x, 1.0, "right", None), {})
    assert c.compress(x) == ("compress", (c, x), {"axis": None})
    assert issubclass(OperatorUnavailableError, NotImplementedError)


def test_non_tensor_variables_get_the_operator_first(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_module(monkeypatch, "math", add=lambda a, b: "tensor add")

    class Other(Variable):
        def __radd__(self, other: object) -> str:
            return "other radd"

    x = ot.dvector("x")
    assert x + Other(generic) == "other radd"
    with pytest.raises(TypeError, match="unsupported operand"):
        x + generic("g")


# ---------------------------------------------------------------------- constants


def test_constant_dtypes_follow_cast_policy_and_floatx() -> None:
    # Default cast_policy "custom": Python numbers get the narrowest dtype holding them.
    assert ot.constant(3).dtype == "int8"
    assert ot.constant(2**63).dtype == "uint64"
    assert ot.constant(True).dtype == "int8"
    assert ot.constant(1.5).dtype == "float32"
    assert ot.constant(1.1).dtype == "float64"
    assert ot.constant(1j).dtype == "complex128"
    assert ot.constant(np.float32(1.5)).dtype == "float32"
    assert ot.constant(np.int8(3)).dtype == "int8"
    assert ot.constant([1, 2]).dtype == "int64"  # sequences follow NumPy
    assert ot.constant([]).dtype == opweave.config.floatX
    with opweave.config.change_flags(floatX="float32"):
        assert ot.constant(1.1).dtype == "float32"
        assert ot.constant(np.float64(1.5)).dtype == "float64"
        assert ot.constant([]).dtype == "float32"
    with opweave.config.change_flags(cast_policy="numpy+floatX"):
        assert ot.constant(3).dtype == "int64"
        assert ot.constant(True).dtype == "bool"
        assert ot.constant(1.5).dtype == "float64"
    with pytest.raises(TypeError, match="does not fit"):
        ot.constant(2**64)


def test_constant_type_has_the_full_static_shape() -> None:
    c = ot.constant([[1.0, 2.0, 3.0]], name="c")
    assert isinstance(c, TensorConstant) and isinstance(c, TensorVariable)
    assert c.type == TensorType("float64", shape=(1, 3)) and c.name == "c"
    assert c.owner is None and c.broadcastable == (True, False)


def test_constant_dtype_and_ndim_arguments() -> None:
    assert ot.constant(1.7, dtype="int32").data == 1  # the caller forces the dtype
    assert ot.constant([1, 2], dtype="float32").dtype == "float32"
    assert ot.constant(5, ndim=2).type.shape == (1, 1)
    assert ot.constant([[[1.0, 2.0]]], ndim=1).type.shape == (2,)
    with pytest.raises(ValueError, match="only leading dimensions of length 1"):
        ot.constant([[1.0], [2.0]], ndim=1)
    with pytest.raises(TypeError, match="ndim"):
        ot.constant(1.0, ndim=-1)


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (None, TypeError, "None"),
        ("text", TypeError, "'text'"),
        (object(), TypeError, "dtype object"),
        ([[1, 2], [3]], ValueError, "ragged"),
        (ot.dscalar("x"), TypeError, "as_tensor_variable"),
    ],
)
def test_constant_rejects(value: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ot.constant(value)


def test_constant_data_is_a_private_read_only_copy() -> None:
    source = np.arange(3.0)
    c = ot.constant(source)
    source[0] = 100.0
    assert c.data[0] == 0.0
    assert not c.data.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        c.data[0] = 5.0
    with pytest.raises(AttributeError, match="read-only"):
        c.data = np.zeros(3)  # type: ignore[misc]
    view_source = np.arange(6.0)[::2]
    assert not np.may_share_memory(ot.constant(view_source).data, view_source)


def test_constant_signature_equals_and_clone() -> None:
    a, b = ot.constant([1.0, 2.0]), ot.constant(np.array([1.0, 2.0]))
    assert a.signature() == b.signature() and hash(a.signature()) == hash(b.signature())
    assert a.equals(b)
    assert a.signature() != ot.constant([1.0, 3.0]).signature()
    assert a.signature() != ot.constant([1.0, 2.0], dtype="float32").signature()
    nan_a, nan_b = ot.constant([float("nan")]), ot.constant([float("nan")])
    assert nan_a.signature() == nan_b.signature() and nan_a.equals(nan_b)
    clone = a.clone()
    assert clone is not a and clone.data is a.data and clone.type == a.type


def test_constant_str() -> None:
    assert str(ot.constant(2.5)) == "2.5"
    assert str(ot.constant([1, 2])) == "[1, 2]"
    assert str(ot.constant(np.zeros((10, 10)))) == "TensorConstant{float64, shape=(10, 10)}"
    assert str(ot.constant(1, name="one")) == "one"


# ---------------------------------------------------------------------- as_tensor_variable


def test_as_tensor_variable_passes_tensor_variables_through() -> None:
    x = ot.dmatrix("x")
    assert ot.as_tensor_variable(x) is x
    assert ot.as_tensor_variable(x, ndim=2) is x
    assert ot.as_tensor is ot.as_tensor_variable


def test_as_tensor_variable_makes_constants() -> None:
    c = ot.as_tensor_variable([[1, 2], [3, 4]], name="c")
    assert isinstance(c, TensorConstant) and c.type == TensorType("int64", shape=(2, 2))
    assert c.name == "c"
    assert ot.as_tensor_variable(1.5).type == TensorType("float32", shape=())
    assert ot.as_tensor_variable(1.1).type == TensorType("float64", shape=())
    arr = np.ones(3, dtype="float32")
    assert ot.as_tensor_variable(arr).type == TensorType("float32", shape=(3,))
    assert ot.as_tensor_variable(np.int16(3)).dtype == "int16"
    assert ot.as_tensor_variable(3, dtype="float32").dtype == "float32"
    assert ot.as_tensor_variable(3, ndim=1).type.shape == (1,)


def test_as_tensor_variable_uses_default_outputs_and_conversion_methods() -> None:
    class MakeVector(Op):
        def make_node(self) -> Apply:
            return Apply(self, [], [ot.dvector()])

    node = MakeVector().make_node()
    assert ot.as_tensor_variable(node) is node.outputs[0]

    target = ot.dvector("converted")

    class Convertible(Variable):
        def _as_TensorVariable(self) -> Variable:
            return target

    assert ot.as_tensor_variable(Convertible(generic)) is target


def test_as_tensor_variable_errors() -> None:
    with pytest.raises(TypeError, match=r"variable g of type generic.*_as_TensorVariable"):
        ot.as_tensor_variable(generic("g"))
    with pytest.raises(TypeError, match=r"Python bool.*eq"):
        ot.as_tensor_variable(True)
    with pytest.raises(TypeError, match="cannot convert str"):
        ot.as_tensor_variable("abc")
    with pytest.raises(TypeError, match="cannot convert NoneType"):
        ot.as_tensor_variable(None)
    with pytest.raises(ValueError, match="ragged"):
        ot.as_tensor_variable([[1, 2], [3]])
    with pytest.raises(ValueError, match="cannot be used as a 1-d tensor"):
        ot.as_tensor_variable(ot.dmatrix("m"), ndim=1)
    with pytest.raises(TypeError, match="ndim"):
        ot.as_tensor_variable(ot.dmatrix("m"), ndim="2")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- scalar constants


def test_get_underlying_scalar_constant() -> None:
    get = ot.get_underlying_scalar_constant
    assert get(3) == 3 and get(3).shape == ()
    assert get(np.float32(2.5)).dtype == np.float32
    assert get(ot.constant(4.0)) == 4.0
    same = get(ot.constant(np.full((2, 2), 7, dtype="int8")))
    assert same == 7 and same.shape == () and same.dtype == np.int8
    assert get(deep_copy_op(ot.constant(1.5))) == 1.5
    x = ot.tensor("x", dtype="float64", shape=(None, 5))
    assert get(Shape_i(1)(x)) == 5
    assert ot.constant(9).get_underlying_scalar_constant() == 9


@pytest.mark.parametrize(
    "value",
    [
        ot.constant([1.0, 2.0]),
        ot.constant(np.zeros((0,))),
        ot.dscalar("free"),
        "text",
        None,
    ],
)
def test_get_underlying_scalar_constant_refuses(value: object) -> None:
    with pytest.raises(NotScalarConstantError):
        ot.get_underlying_scalar_constant(value)


def test_get_underlying_scalar_constant_limits() -> None:
    x = ot.tensor("x", dtype="float64", shape=(None, 5))
    with pytest.raises(NotScalarConstantError):
        ot.get_underlying_scalar_constant(Shape_i(0)(x))  # unknown length
    with pytest.raises(NotScalarConstantError):
        ot.get_underlying_scalar_constant(
            deep_copy_op(ot.constant(1.0)), only_process_constants=True
        )


def test_iteration_over_a_static_length(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_module(monkeypatch, "subtensor", getitem=lambda x, i: ("getitem", i))
    x = ot.vector("x", shape=(3,))
    assert list(x) == [("getitem", 0), ("getitem", 1), ("getitem", 2)]
    first, *_ = x
    assert first == ("getitem", 0)


def test_as_tensor_variable_delegates_stack_cast_and_dimshuffle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = ot.dvector("stacked")
    calls: list[tuple] = []

    def stack(items: list) -> Variable:
        calls.append(("stack", items))
        return out

    def cast(x: Variable, dtype: str) -> Variable:
        calls.append(("cast", x, dtype))
        return ot.fmatrix("cast")

    class FakeDimShuffle:
        def __init__(self, input_ndim: int, new_order: tuple) -> None:
            calls.append(("dimshuffle", input_ndim, tuple(new_order)))

        def __call__(self, x: Variable) -> Variable:
            return ot.dvector("dropped")

    _fake_module(monkeypatch, "basic", stack=stack, cast=cast)
    _fake_module(monkeypatch, "elemwise", DimShuffle=FakeDimShuffle)
    x = ot.dscalar("x")
    assert ot.as_tensor_variable([x, 2.0]) is out
    assert calls[0][0] == "stack" and calls[0][1][0] is x
    assert isinstance(calls[0][1][1], TensorConstant) and calls[0][1][1].data == 2.0
    m = ot.dmatrix("m")
    # As in PyTensor, dtype only types constants made from values: a variable is kept.
    assert ot.as_tensor_variable(m, dtype="float32") is m
    assert ot.as_tensor_variable(m, dtype="float64") is m
    r = ot.drow("r")
    assert ot.as_tensor_variable(r, ndim=1).name == "dropped"
    assert calls[1] == ("dimshuffle", 2, (1,))
    assert not any(call[0] == "cast" for call in calls)


def test_pickling_types_and_constants() -> None:
    t = TensorType("int16", shape=(None, 2))
    assert pickle.loads(pickle.dumps(t)) == t
    c = ot.constant([1.0, 2.0], name="c")
    c2 = pickle.loads(pickle.dumps(c))
    assert c2.type == c.type and c2.equals(c) and c2.name == "c"
    assert not c2.data.flags.writeable


def test_sort_argsort_and_trace_methods_compute() -> None:
    import opweave

    x, m = ot.dvector("x"), ot.dmatrix("m")
    f = opweave.function([x, m], [x.sort(), x.argsort(), m.trace()], mode="FAST_COMPILE")
    xv, mv = np.array([3.0, -1.0, 2.0]), np.arange(9.0).reshape(3, 3)
    got_sort, got_argsort, got_trace = f(xv, mv)
    np.testing.assert_array_equal(got_sort, np.sort(xv))
    np.testing.assert_array_equal(got_argsort, np.argsort(xv))
    assert float(got_trace) == np.trace(mv)
