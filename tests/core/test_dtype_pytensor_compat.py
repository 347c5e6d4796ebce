"""Dtype semantics shared with PyTensor: how constants are typed under each ``cast_policy``,
what ``mean(dtype=...)``, ``arange`` and ``as_tensor_variable(..., dtype=...)`` give."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.configdefaults import build_config
from opweave.scalar import NumpyAutocaster, autocast_float, autocast_float_as, convert
from opweave.scalar.basic import autocast_int as basic_autocast_int
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorConstant

POLICIES = ("custom", "numpy+floatX")
FLOATXS = ("float64", "float32")
INT_CANDIDATES = ("int8", "int16", "int32", "int64")


def flags(policy: str, floatx: str = "float64") -> Any:
    return opweave.config.change_flags(cast_policy=policy, floatX=floatx)


# ====================================================================== the default policy


def test_the_default_cast_policy_is_custom() -> None:
    assert build_config(load=False).cast_policy == "custom"
    assert opweave.config.cast_policy == "custom"


def test_the_autocasters_are_spelled_as_in_pytensor() -> None:
    assert basic_autocast_int is ps.autocast_int
    assert ps.basic.autocast_float is autocast_float
    assert ps.basic.convert is convert
    assert ps.autocast_int.dtypes == INT_CANDIDATES
    assert autocast_float.dtypes == ("float16", "float32", "float64")


# ====================================================================== Python ints


def smallest_int_dtype(value: int) -> str:
    """The first of int8..int64 whose range holds ``value`` (NumPy's iinfo), else uint64."""
    for dtype in INT_CANDIDATES:
        info = np.iinfo(dtype)
        if info.min <= value <= info.max:
            return dtype
    return "uint64"


INTS = [0, 1, -1, 2, 127, 128, -128, -129, 1000, 32767, 32768, -32769, 2**31 - 1, 2**31]
INTS += [-(2**31) - 1, 2**40, 2**63 - 1, -(2**63), 2**63, 2**64 - 1]


@pytest.mark.parametrize("value", INTS)
def test_python_ints_take_the_smallest_int_dtype_under_custom(value: int) -> None:
    expected = smallest_int_dtype(value)
    for make in (ps.constant, ot.constant, ot.as_tensor_variable):
        c = make(value)
        assert c.dtype == expected, (make, value)
        assert int(np.asarray(c.data)) == value  # the value itself, never wrapped around


@pytest.mark.parametrize("value", INTS)
def test_python_ints_follow_numpy_under_numpy_floatx(value: int) -> None:
    expected = np.asarray(value).dtype.name  # int64, or uint64 beyond it
    with flags("numpy+floatX"):
        assert ps.constant(value).dtype == expected
        assert ot.constant(value).dtype == expected
        assert int(ot.constant(value).data) == value


def test_the_documented_int_examples() -> None:
    assert ps.constant(2).dtype == "int8"
    assert ot.constant(1000).dtype == "int16"
    assert ps.constant(-129).dtype == "int16"
    assert ot.constant(2**31).dtype == "int64"
    assert ot.constant(2**63).dtype == "uint64"


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**30])
def test_ints_beyond_uint64_are_a_clear_type_error(policy: str, value: int) -> None:
    with flags(policy):
        with pytest.raises(TypeError, match="does not fit in int64 or uint64"):
            ot.constant(value)
        with pytest.raises(TypeError, match="does not fit"):
            ps.constant(value)


def test_python_bools_are_ints_to_the_autocaster() -> None:
    # As in PyTensor: under "custom" a Python bool is the integer 0/1 (int8) ...
    assert ps.constant(True).dtype == "int8"
    assert ot.constant(False).dtype == "int8"
    # ... a NumPy bool or an explicit dtype gives a boolean constant ...
    assert ot.constant(np.True_).dtype == "bool"
    assert ps.constant(True, dtype="bool").dtype == "bool"
    # ... and numpy+floatX keeps NumPy's bool.
    with flags("numpy+floatX"):
        assert ps.constant(True).dtype == "bool"
        assert ot.constant(True).dtype == "bool"
    # Combining a tensor with a Python bool is refused, as in PyTensor.
    with pytest.raises(TypeError, match="bool"):
        ot.as_tensor_variable(True)
    with pytest.raises(TypeError, match="bool"):
        ot.bvector("b") + True


# ====================================================================== Python floats


def narrowest_exact_float(value: float) -> str:
    """float32 if the value survives a round trip through float32 (NaN never does)."""
    with np.errstate(over="ignore"):
        return "float32" if float(np.float32(value)) == value else "float64"


FLOATS = [0.0, 1.5, -2.25, 0.1, 1.1, 1e-50, 1e300, 3.4e38, float("inf"), float("nan"), 2.0**-149]


@pytest.mark.parametrize("value", FLOATS)
def test_python_floats_under_custom_and_float64_floatx(value: float) -> None:
    expected = narrowest_exact_float(value)
    for make in (ps.constant, ot.constant):
        c = make(value)
        assert c.dtype == expected, (make, value)
        np.testing.assert_array_equal(np.asarray(c.data, dtype="float64"), np.float64(value))


@pytest.mark.parametrize("value", FLOATS)
def test_python_floats_under_custom_and_float32_floatx_are_float32(value: float) -> None:
    with flags("custom", "float32"), np.errstate(over="ignore"):
        assert ps.constant(value).dtype == "float32"
        assert ot.constant(value).dtype == "float32"
        np.testing.assert_array_equal(ot.constant(value).data, np.float32(value))


@pytest.mark.parametrize("floatx", FLOATXS)
@pytest.mark.parametrize("value", FLOATS)
def test_python_floats_under_numpy_floatx_are_floatx(floatx: str, value: float) -> None:
    with flags("numpy+floatX", floatx), np.errstate(over="ignore"):
        assert ps.constant(value).dtype == floatx
        assert ot.constant(value).dtype == floatx


def test_float16_floatx_under_custom() -> None:
    with flags("custom", "float16"):
        assert ot.constant(1.5).dtype == "float16"
        assert ot.constant(0.1).dtype == "float16"
    # float16 is a candidate only when floatX is float16.
    assert ot.constant(1.5).dtype == "float32"


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("floatx", FLOATXS)
@pytest.mark.parametrize(
    "value",
    [np.float64(1.5), np.float32(0.1), np.int8(3), np.int64(2), np.uint16(7), np.bool_(True)],
)
def test_numpy_scalars_keep_their_dtype(policy: str, floatx: str, value: np.generic) -> None:
    with flags(policy, floatx):
        assert ps.constant(value).dtype == value.dtype.name
        assert ot.constant(value).dtype == value.dtype.name
        assert ot.as_tensor_variable(value).dtype == value.dtype.name


@pytest.mark.parametrize("policy", POLICIES)
def test_complex_and_sequences_follow_numpy(policy: str) -> None:
    with flags(policy, "float32"):
        assert ps.constant(1 + 2j).dtype == "complex128"
        for seq in ([1, 2], [1.5, 2.5], [[1], [2]], (True, False)):
            assert ot.constant(seq).dtype == np.asarray(seq).dtype.name
        assert ot.constant([]).dtype == "float32"  # empty: floatX


def test_explicit_dtypes_cast_the_value() -> None:
    assert ps.constant(2, dtype="float64").dtype == "float64"
    assert ot.constant(1.7, dtype="int32").data == 1
    assert convert(1.5, "floatX").dtype == opweave.config.floatX
    with opweave.config.change_flags(floatX="float32"):
        assert convert(1.5, "floatX").dtype == "float32"


# ====================================================================== Elemwise results


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("floatx", FLOATXS)
@pytest.mark.parametrize(
    ("dtype", "number"),
    list(itertools.product(["int8", "uint8", "int32", "float32", "float64"], [1, 1000, 1.5, 1.1])),
)
def test_tensor_plus_python_number(policy: str, floatx: str, dtype: str, number: Any) -> None:
    with flags(policy, floatx):
        x = ot.vector("x", dtype=dtype)
        constant_dtype = ot.constant(number).dtype
        out = x + number
        # The number's constant is promoted with the tensor as any two dtypes are.
        assert out.dtype == ps.upcast(dtype, constant_dtype)
        data = np.array([1, 2, 3], dtype=dtype)
        got = opweave.function([x], out)(data)
        expected = (data + np.asarray(number, dtype=constant_dtype)).astype(out.dtype)
        assert got.dtype == out.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_the_documented_elemwise_examples() -> None:
    assert (ot.bvector() + 1000).dtype == "int16"
    assert (ot.bvector() + 1).dtype == "int8"
    assert (ot.dvector() + 1.5).dtype == "float64"
    assert (ot.fvector() + 1.5).dtype == "float32"
    assert (ot.fvector() + 1.1).dtype == "float64"
    assert (ot.fvector() + np.float64(1.5)).dtype == "float64"
    with flags("custom", "float32"):
        assert (ot.fvector() + 1.1).dtype == "float32"
    with flags("numpy+floatX", "float64"):
        assert (ot.bvector() + 1000).dtype == "int64"
        assert (ot.fvector() + 1.5).dtype == "float64"
    with flags("numpy+floatX", "float32"):
        assert (ot.fvector() + 1.1).dtype == "float32"
        assert (ot.ivector() / 2).dtype == "float32"
    # Scalar graphs use the same constants.
    assert (ps.int8("a") + 2).dtype == "int8"
    assert (ps.int8("a") + 1000).dtype == "int16"


def test_bvector_plus_1000_computes_in_int16() -> None:
    x = ot.bvector("x")
    f = opweave.function([x], x + 1000)
    data = np.array([-128, 0, 127], dtype="int8")
    got = f(data)
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got, data.astype("int16") + np.int16(1000))


# ====================================================================== autocast_float_as


def test_autocast_float_as_changes_the_float_candidates_for_a_while() -> None:
    before = autocast_float.dtypes
    with autocast_float_as("float32"):
        assert autocast_float.dtypes == ("float32",)
        assert (ot.fvector() + 1.1).dtype == "float32"
        assert ps.constant(1e300).dtype == "float32"
        assert ps.constant(np.float64(1.1)).dtype == "float64"  # NumPy scalars are kept
        assert ps.constant(3).dtype == "int8"  # ints are not affected
    assert autocast_float.dtypes == before
    assert (ot.fvector() + 1.1).dtype == "float64"
    with autocast_float_as("float64"):
        assert (ot.fvector() + 1.5).dtype == "float64"
    with pytest.raises(RuntimeError), autocast_float_as("float64"):
        raise RuntimeError("inside")
    assert autocast_float.dtypes == before


def test_autocast_float_as_needs_the_custom_policy() -> None:
    with flags("numpy+floatX"):
        with pytest.raises(ValueError, match="cast_policy='custom'"):
            autocast_float_as("float32")
    ctx = autocast_float_as("float32")
    with flags("numpy+floatX"), pytest.raises(ValueError, match="numpy\\+floatX"):
        ctx.__enter__()
    with pytest.raises(TypeError, match="dtype"):
        autocast_float_as("not-a-dtype")
    with pytest.raises(ValueError, match="at least one"):
        autocast_float_as()


def test_numpy_autocaster_candidates_and_errors() -> None:
    caster = NumpyAutocaster(("int16", "int32"))
    assert caster(3).dtype == "int16"
    assert caster(70000).dtype == "int32"
    assert caster(2**40).dtype == "int64"  # no candidate holds it: NumPy's int64, not wrapped
    assert caster(np.int8(3)).dtype == "int8"
    with pytest.raises(TypeError, match="Python int or float"):
        caster("3")
    with pytest.raises(TypeError, match="real number"):
        caster(np.zeros(2))
    with pytest.raises(ValueError, match="at least one"):
        NumpyAutocaster(())
    with pytest.raises(TypeError, match="masked"):
        convert(np.ma.masked_array([1, 2], mask=[0, 1]))


# ====================================================================== arange


ARG_KINDS = ("int8", "int32", "int64", "uint8", "float32", "float64", "pyint", "pyfloat")


def arange_arg(kind: str, value: int) -> Any:
    if kind == "pyint":
        return value
    if kind == "pyfloat":
        return value + 0.5
    return ot.scalar(f"a_{kind}", dtype=kind)


def arg_dtype(kind: str) -> str:
    """The dtype an argument of ``kind`` has once converted (Python numbers as constants)."""
    if kind == "pyint":
        return ot.constant(1).dtype
    if kind == "pyfloat":
        return ot.constant(0.5).dtype
    return kind


def expected_arange_dtype(dtypes: list[str]) -> str:
    """PyTensor's rule, from NumPy primitives: the promoted dtype (kept at float32 under
    numpy+floatX with a float32 floatX and no float64 argument), integers widened to 64 bits;
    under numpy+floatX, NumPy's own arange dtype when it differs (with the same float32 rule).
    """
    numpy_policy = opweave.config.cast_policy == "numpy+floatX"
    keep32 = numpy_policy and opweave.config.floatX == "float32" and "float64" not in dtypes
    promoted = np.result_type(*[np.dtype(d) for d in dtypes])
    if keep32 and promoted == np.float64:
        promoted = np.dtype("float32")
    if promoted.kind == "i":
        promoted = np.dtype("int64")
    elif promoted.kind == "u":
        promoted = np.dtype("uint64")
    if numpy_policy:
        start, stop, step = (np.array(v, dtype=d) for v, d in zip((0, 1, 1), dtypes, strict=True))
        numpy_dtype = np.arange(start, stop, step).dtype
        if numpy_dtype != promoted:
            promoted = np.dtype("float32") if keep32 and numpy_dtype == np.float64 else numpy_dtype
    return promoted.name


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("floatx", FLOATXS)
@pytest.mark.parametrize(("start", "stop"), list(itertools.product(ARG_KINDS, repeat=2)))
def test_arange_dtype_table(policy: str, floatx: str, start: str, stop: str) -> None:
    with flags(policy, floatx):
        out = ot.arange(arange_arg(start, 0), arange_arg(stop, 5))
        assert out.dtype == expected_arange_dtype(
            [arg_dtype(start), arg_dtype(stop), arg_dtype("pyint")]
        )
        single = ot.arange(arange_arg(start, 5))
        assert single.dtype == expected_arange_dtype(
            [arg_dtype("pyint"), arg_dtype(start), arg_dtype("pyint")]
        )
        stepped = ot.arange(arange_arg(start, 0), arange_arg(stop, 5), arange_arg(start, 1))
        assert stepped.dtype == expected_arange_dtype(
            [arg_dtype(start), arg_dtype(stop), arg_dtype(start)]
        )


def test_arange_documented_examples() -> None:
    assert ot.arange(10).dtype == "int64"
    assert ot.arange(ot.iscalar("n")).dtype == "int64"
    assert ot.arange(ot.bscalar("n")).dtype == "int64"
    assert ot.arange(ot.fscalar("n")).dtype == "float32"  # float32 stays float32
    assert ot.arange(ot.fscalar("a"), ot.iscalar("b")).dtype == "float64"
    assert ot.arange(0.5, 2.5).dtype == "float32"
    assert ot.arange(0.1, 2.5).dtype == "float64"
    assert ot.arange(ot.scalar("u", dtype="uint8"), 5, ot.scalar("s", dtype="uint8")).dtype == (
        "int64"  # uint8 with the int8 constant 5 promotes to int16
    )
    with flags("numpy+floatX"):
        assert ot.arange(ot.fscalar("n")).dtype == "float64"  # NumPy: float32 and int64
        assert ot.arange(0.5, 2.5).dtype == "float64"
    with flags("numpy+floatX", "float32"):
        assert ot.arange(ot.fscalar("n")).dtype == "float32"
        assert ot.arange(ot.iscalar("n"), 2.5).dtype == "float32"
        assert ot.arange(ot.dscalar("n")).dtype == "float64"
    assert ot.arange(3, dtype="float32").dtype == "float32"


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    ("start", "stop", "step"), [(0, 7, 1), (0.5, 3.0, 0.5), (1, 2.2, 0.3), (-3, 3, 2)]
)
def test_arange_values_match_numpy(policy: str, start: Any, stop: Any, step: Any) -> None:
    with flags(policy):
        out = ot.arange(start, stop, step)
        got = opweave.function([], out)()
    assert got.dtype == out.dtype
    np.testing.assert_allclose(got, np.arange(start, stop, step), rtol=1e-6)


def test_arange_rejects_non_scalars_and_complex() -> None:
    with pytest.raises(TypeError, match="real scalar"):
        ot.arange(ot.lvector("v"))
    with pytest.raises(TypeError, match="real scalar"):
        ot.arange(ot.zscalar("z"))


# ====================================================================== as_tensor_variable


def test_as_tensor_variable_leaves_variables_as_they_are() -> None:
    x = ot.dvector("x")
    assert ot.as_tensor_variable(x, dtype="int64") is x
    c = ot.constant(np.array([1.5, 2.5]))
    assert ot.as_tensor_variable(c, dtype="int64") is c
    node = (x + 1).owner
    assert ot.as_tensor_variable(node, dtype="int64") is node.outputs[0]
    # ndim still applies to variables.
    assert ot.as_tensor_variable(ot.drow("r"), ndim=1, dtype="int8").dtype == "float64"


def test_as_tensor_variable_types_values_with_dtype() -> None:
    assert ot.as_tensor_variable(1.5, dtype="int64").dtype == "int64"
    assert ot.as_tensor_variable([1.5, 2], dtype="int64").dtype == "int64"
    assert ot.as_tensor_variable(np.float64(2.0), dtype="float32").dtype == "float32"
    c = ot.as_tensor_variable(2.7, dtype="int32")
    assert isinstance(c, TensorConstant) and c.data == 2
    assert c.type == TensorType("int32", shape=())


# ====================================================================== mean


INPUTS = ("bool", "int8", "int32", "int64", "uint8", "float32", "float64")
MEAN_DTYPES = (None, "int64", "int32", "int8", "float32", "float64")


def expected_mean(
    data: np.ndarray, axis: Any, dtype: str | None, keepdims: bool
) -> tuple[np.ndarray, str]:
    """The sum in ``dtype`` divided by a float count (float32 for float32 sums)."""
    total = np.sum(data, axis=axis, dtype=dtype, keepdims=keepdims)
    count_dtype = "float32" if total.dtype in (np.float16, np.float32, np.complex64) else "float64"
    result_dtype = np.result_type(total.dtype, np.dtype(count_dtype))
    count = data.size if axis is None else data.shape[axis]
    return (total.astype(result_dtype) / np.asarray(count, dtype=count_dtype)), result_dtype.name


@pytest.mark.parametrize("in_dtype", INPUTS)
@pytest.mark.parametrize("dtype", MEAN_DTYPES)
@pytest.mark.parametrize(("axis", "keepdims"), [(None, False), (0, False), (1, True)])
def test_mean_divides_the_sum_by_a_float_count(
    in_dtype: str, dtype: str | None, axis: Any, keepdims: bool
) -> None:
    data = np.array([[1, 0, 1], [0, 1, 1]], dtype=in_dtype)
    x = ot.matrix("x", dtype=in_dtype)
    out = x.mean(axis=axis, dtype=dtype, keepdims=keepdims)
    expected, expected_dtype = expected_mean(data, axis, dtype, keepdims)
    assert out.dtype == expected_dtype
    got = opweave.function([x], out)(data)
    assert got.dtype == np.dtype(expected_dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_mean_with_an_integer_dtype_is_not_truncated() -> None:
    x = ot.matrix("x")
    data = np.array([[1.0], [2.0]])
    f = opweave.function([x], [x.mean(dtype="int64"), x.mean(dtype="int32"), x.mean()])
    for value in f(data):
        assert value.dtype == np.float64
        np.testing.assert_allclose(value, data.sum() / data.size)
    ints = ot.lmatrix("i")
    got = opweave.function([ints], ints.mean(dtype="int64"))(np.array([[1], [2]]))
    assert got.dtype == np.float64 and got == 1.5


def test_mean_float_dtypes_and_acc_dtype() -> None:
    x = ot.dmatrix("x")
    assert x.mean(dtype="float32").dtype == "float32"
    assert ot.fmatrix("f").mean().dtype == "float32"
    assert ot.fmatrix("f").mean(dtype="float64").dtype == "float64"
    assert ot.lmatrix("i").mean(acc_dtype="int64").dtype == "float64"
    assert ot.matrix("h", dtype="float16").mean().dtype == "float16"
    assert x.mean(dtype="float16").dtype == "float16"
    assert ot.zmatrix("z").mean().dtype == "complex128"
    assert ot.cmatrix("c").mean().dtype == "complex64"
    assert x.mean(axis=()).dtype == "float64"
    assert ot.lmatrix("i").mean(axis=()).dtype == "float64"
    with pytest.raises(TypeError):
        x.mean(dtype="not-a-dtype")
