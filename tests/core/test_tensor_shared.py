"""Shared tensor variables: `opweave.tensor.shared` and `TensorSharedVariable`."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
import opweave.testing
from opweave.compile import SharedVariable
from opweave.tensor import TensorSharedVariable, TensorType, TensorVariable

LINKERS = ["py", "vm"]


# ---------------------------------------------------------------------- construction


def test_shared_from_array() -> None:
    value = np.arange(6, dtype="float32").reshape(2, 3)
    s = ot.shared(value, name="w")
    assert isinstance(s, TensorSharedVariable)
    assert isinstance(s, SharedVariable) and isinstance(s, TensorVariable)
    assert s.name == "w" and s.owner is None
    # Lengths may change later: the static shape is unknown by default.
    assert s.type == TensorType("float32", shape=(None, None))
    assert s.ndim == 2 and s.dtype == "float32" and s.broadcastable == (False, False)
    np.testing.assert_array_equal(s.get_value(), value)


def test_shared_static_shape_argument() -> None:
    s = ot.shared(np.zeros((1, 4)), shape=(1, None))
    assert s.type == TensorType("float64", shape=(1, None)) and s.broadcastable == (True, False)
    with pytest.raises(TypeError, match=r"TensorType\(float64, shape=\(3, None\)\).*shape"):
        ot.shared(np.zeros((1, 4)), shape=(3, None))


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (3, "int64"),
        (2.5, "float64"),
        (True, "bool"),
        (1 + 2j, "complex128"),
        (np.float32(1.5), "float32"),
        (np.int8(-3), "int8"),
        (np.array(4.0), "float64"),
    ],
)
def test_shared_from_scalars(value: object, dtype: str) -> None:
    s = ot.shared(value)
    assert s.type == TensorType(dtype, shape=())
    out = s.get_value()
    assert isinstance(out, np.ndarray) and out.shape == () and out == value


def test_shared_python_float_is_float64_even_with_float32_floatx() -> None:
    with opweave.config.change_flags(floatX="float32"):
        assert ot.shared(0.1).dtype == "float64"


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ([1.0, 2.0], "got list.*np.asarray"),
        (None, "NoneType"),
        ("1.0", "got str"),
        (object(), "got object"),
        (np.array(["a", "b"]), "not numeric"),
        (np.ma.masked_array([1.0], mask=[True]), "masked"),
    ],
)
def test_shared_rejects_non_numeric_values(value: object, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        ot.shared(value)


def test_shared_targets(bare_plugin_manager) -> None:
    """Without a plugin for the target (here: none installed), ``shared`` says what to
    install."""
    assert ot.shared(1.0, target="cpu").type == TensorType("float64", shape=())
    with pytest.raises(ValueError, match=r"no installed plugin.*target 'cuda'.*opweave-cuda"):
        ot.shared(np.zeros(2), target="cuda")
    with pytest.raises(ValueError, match="target 'tpu'"):
        ot.shared(np.zeros(2), target="tpu")


# ---------------------------------------------------------------------- borrow semantics


def test_without_borrow_the_value_is_copied() -> None:
    value = np.zeros(3)
    s = ot.shared(value)
    value[0] = 5.0
    assert s.get_value()[0] == 0.0
    assert not np.may_share_memory(s.get_value(borrow=True), value)


def test_with_borrow_the_array_is_aliased() -> None:
    value = np.zeros(3)
    s = ot.shared(value, borrow=True)
    assert s.get_value(borrow=True) is value
    value[0] = 5.0
    assert s.get_value()[0] == 5.0


def test_borrow_with_a_dtype_conversion_cannot_alias() -> None:
    value = np.zeros(3, dtype="int32")
    s = ot.shared(value, borrow=True)
    assert s.dtype == "int32" and s.get_value(borrow=True) is value
    assert ot.shared(7, borrow=True).get_value() == 7  # a number has nothing to alias


def test_get_value_copies_unless_borrowed() -> None:
    s = ot.shared(np.arange(3.0))
    copy = s.get_value()
    copy[0] = 100.0
    assert s.get_value()[0] == 0.0
    internal = s.get_value(borrow=True)
    assert internal is s.get_value(borrow=True) is s.container.storage[0]
    internal[0] = 100.0
    assert s.get_value()[0] == 100.0
    assert s.get_value(return_internal_type=True)[0] == 100.0


def test_set_value_copies_unless_borrowed() -> None:
    s = ot.shared(np.zeros(3))
    new = np.ones(3)
    s.set_value(new)
    new[0] = 7.0
    assert s.get_value().tolist() == [1.0, 1.0, 1.0]
    aliased = np.full(3, 2.0)
    s.set_value(aliased, borrow=True)
    assert s.get_value(borrow=True) is aliased
    aliased[0] = 9.0
    assert s.get_value()[0] == 9.0


def test_set_value_reuses_its_own_buffer() -> None:
    s = ot.shared(np.zeros(3))
    buffer = s.container.storage[0]
    s.set_value(np.array([1.0, 2.0, 3.0]))
    assert s.container.storage[0] is buffer and buffer.tolist() == [1.0, 2.0, 3.0]
    s.set_value(np.zeros(5))  # another shape: a new array
    assert s.container.storage[0] is not buffer and s.get_value().shape == (5,)


def test_set_value_never_overwrites_arrays_handed_out() -> None:
    handed_in = np.zeros(3)
    s = ot.shared(handed_in, borrow=True)
    s.set_value(np.ones(3))
    assert not handed_in.any()
    borrowed = s.get_value(borrow=True)
    s.set_value(np.full(3, 2.0))
    assert borrowed.tolist() == [1.0, 1.0, 1.0]
    assert s.get_value().tolist() == [2.0, 2.0, 2.0]


def test_set_value_from_a_view_of_the_internal_array() -> None:
    s = ot.shared(np.arange(4.0))
    s.set_value(s.get_value(borrow=True)[::-1])
    assert s.get_value().tolist() == [3.0, 2.0, 1.0, 0.0]


# ---------------------------------------------------------------------- set_value filtering


def test_set_value_converts_compatible_values() -> None:
    s = ot.shared(np.zeros(2))
    s.set_value([1, 2])
    out = s.get_value()
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0]
    s.set_value(np.array([3, 4], dtype="int32"))
    assert s.get_value().dtype == np.float64


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (np.zeros((2, 2)), TypeError, "expected 1 dimension"),
        (None, TypeError, "cannot hold None"),
        ("abc", TypeError, "string"),
        ([[1.0], [2.0, 3.0]], ValueError, "ragged"),
        (np.zeros(2, dtype="complex128"), TypeError, "dtype complex128"),
    ],
)
def test_set_value_rejects_bad_values(value: object, error: type, match: str) -> None:
    s = ot.shared(np.array([1.0, 2.0]))
    with pytest.raises(error, match=r"TensorType\(float64, shape=\(None,\)\).*" + match):
        s.set_value(value)
    assert s.get_value().tolist() == [1.0, 2.0]
    with pytest.raises(error, match=match):
        s.set_value(value, borrow=True)
    assert s.get_value().tolist() == [1.0, 2.0]


def test_set_value_downcast_rules() -> None:
    s = ot.shared(np.zeros(2, dtype="float32"))
    with pytest.raises(TypeError, match="dtype float64"):
        s.set_value(np.array([0.5, 1.0]))
    s.set_value([0.5, 1.0])  # exact values are accepted
    assert s.get_value().dtype == np.float32
    lossy = ot.shared(np.zeros(2, dtype="float32"), allow_downcast=True)
    lossy.set_value(np.array([0.1, 0.2]))
    assert lossy.get_value().dtype == np.float32
    np.testing.assert_allclose(lossy.get_value(), [0.1, 0.2], rtol=1e-6)


def test_set_value_strict() -> None:
    s = ot.shared(np.zeros(2), strict=True)
    with pytest.raises(TypeError, match="strict"):
        s.set_value([1.0, 2.0])
    s.set_value(np.array([1.0, 2.0]))
    assert s.get_value().tolist() == [1.0, 2.0]


def test_set_value_respects_the_static_shape() -> None:
    s = ot.shared(np.zeros(3), shape=(3,))
    with pytest.raises(TypeError, match=r"shape=\(3,\)"):
        s.set_value(np.zeros(4))


def test_zero() -> None:
    s = ot.shared(np.arange(3.0))
    internal = s.get_value(borrow=True)
    s.zero()
    assert not s.get_value().any() and internal.tolist() == [0.0, 1.0, 2.0]
    s2 = ot.shared(np.arange(3.0))
    internal2 = s2.get_value(borrow=True)
    s2.zero(borrow=True)
    assert not internal2.any() and s2.get_value(borrow=True) is internal2


def test_clone_shares_the_value() -> None:
    s = ot.shared(np.zeros(2), name="s")
    c = s.clone()
    assert isinstance(c, TensorSharedVariable) and c is not s and c.type == s.type
    c.set_value(np.ones(2))
    assert s.get_value().tolist() == [1.0, 1.0]
    borrowed = c.get_value(borrow=True)
    s.set_value(np.full(2, 3.0))  # the clone handed the buffer out: it is not overwritten
    assert borrowed.tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------- compiled functions


@pytest.mark.parametrize("linker", LINKERS)
def test_function_returns_a_copy_of_the_shared_value(linker: str) -> None:
    s = ot.shared(np.arange(3.0), name="s")
    f = opweave.function([], s, mode=opweave.Mode(linker=linker))
    out = f()
    np.testing.assert_array_equal(out, [0.0, 1.0, 2.0])
    assert not np.may_share_memory(out, s.get_value(borrow=True))
    out[0] = 50.0
    assert s.get_value()[0] == 0.0
    s.set_value(np.array([7.0, 8.0]))
    np.testing.assert_array_equal(f(), [7.0, 8.0])


@pytest.mark.parametrize("linker", LINKERS)
def test_updates_from_a_tensor_input(linker: str) -> None:
    s = ot.shared(np.zeros(3), name="s")
    x = ot.dvector("x")
    read = opweave.function([], s, mode=opweave.Mode(linker=linker))
    write = opweave.function([x], [], updates=[(s, x)], mode=opweave.Mode(linker=linker))
    arg = np.array([1.0, 2.0, 3.0])
    assert write(arg) == []
    np.testing.assert_array_equal(s.get_value(), arg)
    arg[0] = -1.0  # the shared value does not alias the argument
    assert s.get_value()[0] == 1.0
    np.testing.assert_array_equal(read(), [1.0, 2.0, 3.0])
    write([4, 5])  # lists are filtered by the input's Type
    np.testing.assert_array_equal(read(), [4.0, 5.0])


def test_update_with_an_output() -> None:
    s = ot.shared(np.zeros(2), name="s")
    x = ot.dvector("x")
    f = opweave.function([x], s, updates=[(s, x)])
    np.testing.assert_array_equal(f(np.ones(2)), [0.0, 0.0])  # the value before the update
    np.testing.assert_array_equal(f(np.full(2, 2.0)), [1.0, 1.0])
    np.testing.assert_array_equal(s.get_value(), [2.0, 2.0])


def test_update_with_a_more_specific_type_is_accepted() -> None:
    s = ot.shared(np.zeros(3))
    x = ot.vector("x", dtype="float64", shape=(3,))
    f = opweave.function([x], [], updates=[(s, x)])
    f(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0, 3.0])


def test_update_type_mismatch_is_refused() -> None:
    s = ot.shared(np.zeros(3))
    with pytest.raises(TypeError, match=r"TensorType\(float64, shape=\(None,\)\)"):
        opweave.function([ot.fvector("x")], [], updates=[(s, ot.fvector("y"))])
    with pytest.raises(TypeError, match="cannot convert"):
        opweave.function([], [], updates=[(s, ot.dmatrix("m"))], on_unused_input="ignore")


def test_bad_argument_names_the_expected_type() -> None:
    s = ot.shared(np.zeros(2))
    x = ot.dvector("x")
    f = opweave.function([x], [], updates=[(s, x)])
    with pytest.raises(TypeError, match=r"name 'x'.*TensorType\(float64, shape=\(None,\)\)"):
        f(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="cannot hold None"):
        f(None)
    np.testing.assert_array_equal(s.get_value(), [0.0, 0.0])


@pytest.mark.parametrize("linker", ["py", "vm", "c", "cvm"])
def test_an_update_in_place_of_a_read_only_value_copies_it_first(linker: str) -> None:
    """A shared value that cannot be written (read-only, as the jax linker leaves its
    updated values, or as its owner made it) is copied by a function that updates it in
    place; the read-only array keeps its values."""
    if linker not in opweave.testing.usable_linkers():
        pytest.skip(f"{linker} is not usable here")
    frozen = np.ones(3)
    frozen.flags.writeable = False
    s = ot.shared(frozen, name="s", borrow=True)
    g = ot.dvector("g")
    step = opweave.function([g], [], updates=[(s, s - 0.5 * g)], mode=opweave.Mode(linker=linker))
    step(np.ones(3))
    step(np.ones(3))
    np.testing.assert_array_equal(s.get_value(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(frozen, [1.0, 1.0, 1.0])
