"""The xtensor Type, its variables, constants and shared variables, the casts to and from
tensors, and how compiled functions take and return xtensors on every linker."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode
from opweave.graph.basic import Apply
from opweave.link.implementations import core_op_classes
from opweave.link.resolver import NoImplementationError
from opweave.xtensor.basic import (
    Rename,
    TensorFromXTensor,
    XOp,
    XTensorFromTensor,
    rename,
    tensor_from_xtensor,
    xtensor_from_tensor,
)
from opweave.xtensor.type import (
    XTensorConstant,
    XTensorSharedVariable,
    XTensorType,
    XTensorVariable,
    as_xtensor,
    xtensor,
    xtensor_constant,
    xtensor_shared,
)

LINKERS = ["py", "vm", "c", "cvm"]


def test_type_keeps_dtype_dims_and_static_shape() -> None:
    t = XTensorType("float32", dims=("a", "b"), shape=(2, None))
    assert (t.dtype, t.dims, t.shape, t.ndim) == ("float32", ("a", "b"), (2, None), 2)
    assert t == XTensorType(np.float32, dims=["a", "b"], shape=[2, None])
    assert hash(t) == hash(XTensorType("float32", dims=("a", "b"), shape=(2, None)))
    assert t != XTensorType("float32", dims=("b", "a"), shape=(2, None))
    assert XTensorType("floatX", dims=()).dtype == opweave.config.floatX
    assert XTensorType("int8", dims="a").dims == ("a",)
    assert t.clone(dims=("c", "d")).dims == ("c", "d") and t.clone(dtype="int64").shape == (2, None)


def test_type_refuses_repeated_dims_and_a_shape_of_another_length() -> None:
    with pytest.raises(ValueError, match="Dimensions must be unique"):
        XTensorType("float64", dims=("a", "a"))
    with pytest.raises(ValueError, match="must have the same length as dims"):
        XTensorType("float64", dims=("a",), shape=(1, 2))


def test_is_super_needs_same_dims_in_order_and_a_compatible_static_shape() -> None:
    loose = XTensorType("float64", dims=("a", "b"))
    tight = XTensorType("float64", dims=("a", "b"), shape=(2, 3))
    assert loose.is_super(tight) and not tight.is_super(loose)
    assert not loose.is_super(XTensorType("float64", dims=("b", "a")))
    assert not loose.is_super(pt.TensorType("float64", shape=(None, None)))


def test_filter_checks_values_as_a_tensor_type_does() -> None:
    t = XTensorType("float64", dims=("a",), shape=(3,))
    out = t.filter([1, 2, 3])
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    with pytest.raises(TypeError):
        XTensorType("int8", dims=("a",)).filter(np.array([1.5]))
    with pytest.raises((TypeError, ValueError)):
        t.filter(np.zeros(4))


def test_variable_properties() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(2, None), dtype="int32")
    assert isinstance(x, XTensorVariable)
    assert (x.dims, x.ndim, x.dtype, x.name) == (("a", "b"), 2, "int32", "x")
    assert isinstance(x.values.type, pt.TensorType) and x.values.type.shape == (2, None)
    assert set(x.sizes) == {"a", "b"}
    f = opweave.function([x], [x.shape[1], x.size, x.sizes["a"]])
    assert [int(v) for v in f(np.zeros((2, 5), dtype="int32"))] == [5, 10, 2]


def test_variable_refuses_python_truth_numbers_and_item_assignment() -> None:
    x = xtensor("x", dims=("a",))
    with pytest.raises(TypeError, match="boolean"):
        bool(x)
    with pytest.raises(TypeError, match="integer"):
        int(x)
    with pytest.raises(TypeError, match="float"):
        float(x)
    with pytest.raises(TypeError, match=r"x\[idx\]\.set"):
        x[0] = 1
    with pytest.raises(NotImplementedError, match="coords"):
        x.coords  # noqa: B018


def test_as_xtensor_of_variables_values_and_nodes() -> None:
    t = pt.matrix("t")
    x = as_xtensor(t, dims=("a", "b"), name="x")
    assert isinstance(x.owner.op, XTensorFromTensor) and x.dims == ("a", "b") and x.name == "x"
    assert as_xtensor(x) is x and as_xtensor(x, dims=("a", "b")) is x
    assert as_xtensor(x.owner) is x
    assert as_xtensor(pt.scalar("s")).dims == ()
    c = as_xtensor(np.arange(6).reshape(2, 3), dims=("a", "b"))
    assert isinstance(c, XTensorConstant) and c.type.shape == (2, 3)
    assert as_xtensor(3.5).dims == ()
    with pytest.raises(ValueError, match=r"has dims \('a', 'b'\), but requested dims"):
        as_xtensor(x, dims=("b", "a"))
    with pytest.raises(TypeError, match="without dims"):
        as_xtensor(t)
    with pytest.raises(TypeError, match="without specifying dims"):
        as_xtensor(np.zeros(3))
    with pytest.raises(ValueError, match="ambiguous"):
        as_xtensor(pt.linalg.eigh(pt.matrix())[0].owner)


def test_xtensor_constant_fits_its_dims_and_merges_equal_values() -> None:
    c = xtensor_constant(np.ones((2, 3)), dims=("a", "b"), name="c")
    assert c.type == XTensorType("float64", dims=("a", "b"), shape=(2, 3)) and c.name == "c"
    assert not c.data.flags.writeable
    assert c.signature() == xtensor_constant(np.ones((2, 3)), dims=("a", "b")).signature()
    assert c.signature() != xtensor_constant(np.ones((3, 2)).T, dims=("b", "a")).signature()
    with pytest.raises(ValueError, match="name 1 dimensions"):
        xtensor_constant(np.ones((2, 3)), dims=("a",))
    with pytest.raises(ValueError, match="does not match shape of type"):
        XTensorConstant(XTensorType("float64", dims=("a",), shape=(4,)), np.ones(3))


def test_tensors_convert_to_xtensors_only_when_asked() -> None:
    x = xtensor("x", dims=("a",))
    with pytest.raises(TypeError, match="allow_xtensor_conversion"):
        pt.as_tensor_variable(x)
    with pytest.raises(TypeError, match="forbids automatic conversion"):
        pt.exp(x)
    t = pt.as_tensor_variable(x, allow_xtensor_conversion=True)
    assert isinstance(t.owner.op, TensorFromXTensor) and t.owner.inputs == [x]


def test_cast_ops_check_their_inputs() -> None:
    with pytest.raises(TypeError, match="must have an XTensorType"):
        tensor_from_xtensor(pt.vector())
    with pytest.raises(TypeError, match="must have a TensorType"):
        XTensorFromTensor(("a",))(xtensor(dims=("a",)))
    with pytest.raises(ValueError, match="name 2 dimensions"):
        xtensor_from_tensor(pt.vector(), dims=("a", "b"))


@pytest.mark.parametrize("linker", LINKERS)
def test_functions_take_and_return_xtensors(linker: str) -> None:
    x = xtensor("x", dims=("a", "b"))
    doubled = xtensor_from_tensor(x.values * 2, dims=("c", "d"))
    f = opweave.function([x], [doubled, x.values.sum()], mode=Mode(linker=linker))
    value = np.arange(6.0).reshape(2, 3)
    out, total = f(value)
    np.testing.assert_array_equal(out, value * 2)
    assert type(out) is np.ndarray and float(total) == value.sum()
    assert not any(isinstance(node.op, XOp) for node in f.maker.fgraph.toposort())
    with pytest.raises(TypeError):
        f(np.zeros(3))


@pytest.mark.parametrize("mode", [None, "FAST_COMPILE"])
def test_casts_that_cancel_are_removed(mode: str | None) -> None:
    t = pt.matrix("t")
    round_trip = tensor_from_xtensor(xtensor_from_tensor(t, dims=("a", "b")))
    f = opweave.function([t], round_trip * 2, mode=mode)
    ops = [type(node.op) for node in f.maker.fgraph.toposort()]
    assert TensorFromXTensor not in ops and XTensorFromTensor not in ops
    np.testing.assert_array_equal(f(np.ones((2, 2))), np.full((2, 2), 2.0))


def test_rename_renames_dims_and_its_chains_collapse() -> None:
    x = xtensor("x", dims=("a", "b"))
    y = rename(x, a="c")
    assert y.dims == ("c", "b") and rename(x, {"b": "z"}).dims == ("a", "z")
    assert x.rename("new").name == "new" and x.rename(b="q").dims == ("a", "q")
    with pytest.raises(ValueError, match="Cannot rename q to r: q not in"):
        rename(x, q="r")
    with pytest.raises(ValueError, match="both positional and keyword"):
        rename(x, {"a": "c"}, b="d")
    twice = rename(rename(x, a="c"), c="e")
    f = opweave.function([x], twice)
    renames = [node for node in f.maker.fgraph.toposort() if isinstance(node.op, Rename)]
    assert len(renames) <= 1
    np.testing.assert_array_equal(f(np.eye(2)), np.eye(2))
    assert f.maker.fgraph.outputs[0].type.dims == ("e", "b")


def test_shared_xtensor_keeps_and_updates_its_value() -> None:
    s = xtensor_shared(np.arange(3.0), dims=("a",), name="s")
    assert isinstance(s, XTensorSharedVariable) and s.dims == ("a",)
    f = opweave.function([], s.values + 1, updates=[(s, as_xtensor(s.values * 2, dims=("a",)))])
    np.testing.assert_array_equal(f(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(), [1.0, 3.0, 5.0])
    np.testing.assert_array_equal(s.get_value(), [0.0, 4.0, 8.0])
    with pytest.raises(TypeError, match="without specifying dims"):
        xtensor_shared(np.zeros(2))


def test_gradient_goes_through_the_casts() -> None:
    x = xtensor("x", dims=("a", "b"))
    cost = (rename(x, a="c").values ** 2).sum()
    g = opweave.grad(cost, x)
    assert isinstance(g.type, XTensorType) and g.type.dims == ("a", "b")
    value = np.arange(4.0).reshape(2, 2)
    np.testing.assert_allclose(opweave.function([x], g)(value), 2 * value)


class _NeverLowered(XOp):
    __props__ = ()

    def make_node(self, x: XTensorVariable) -> Apply:
        return Apply(self, [x], [x.type()])


def test_an_xtensor_op_without_lowering_names_the_missing_lowering() -> None:
    x = xtensor("x", dims=("a",))
    with pytest.raises(NoImplementationError, match=r"is an xtensor Op.*lower_xtensor"):
        opweave.function([x], _NeverLowered()(x))


def test_backends_are_not_asked_for_xtensor_ops_but_for_the_casts() -> None:
    scope = core_op_classes()
    assert TensorFromXTensor in scope and XTensorFromTensor in scope
    assert not any(issubclass(cls, XOp) for cls in scope)


def test_tensor_operators_with_an_xtensor_give_an_xtensor() -> None:
    x = xtensor("x", dims=("a",))
    n = pt.scalar("n")
    for expr in (n * x, n + x, n - x, n / x):
        assert isinstance(expr, XTensorVariable) and expr.dims == ("a",)
    f = opweave.function([n, x], [n * x, n - x])
    times, minus = f(3.0, np.arange(3.0))
    np.testing.assert_array_equal(times, [0.0, 3.0, 6.0])
    np.testing.assert_array_equal(minus, [3.0, 2.0, 1.0])
    with pytest.raises(TypeError, match="without dims"):
        pt.vector("v") * x


class DataArray:
    """A stand-in for ``xarray.DataArray`` (opweave recognises it by class name and module,
    without importing xarray): dims, values, transpose and name."""

    __module__ = "xarray.core.dataarray"

    def __init__(self, values: np.ndarray, dims: tuple[str, ...], name: str | None = None):
        self.values, self.dims, self.name = np.asarray(values), tuple(dims), name

    def transpose(self, *dims: str) -> DataArray:
        order = [self.dims.index(d) for d in dims]
        return DataArray(self.values.transpose(order), dims, self.name)


def test_data_arrays_keep_their_dims_as_constants_shared_variables_and_arguments() -> None:
    data = DataArray(np.arange(6.0).reshape(2, 3), ("a", "b"), name="d")
    c = opweave.as_symbolic(data)
    assert isinstance(c, XTensorConstant) and c.type.dims == ("a", "b")
    np.testing.assert_array_equal(c.data, data.values)
    s = opweave.shared(data)
    assert isinstance(s, XTensorSharedVariable) and s.dims == ("a", "b") and s.name == "d"
    x = xtensor("x", dims=("b", "a"))
    f = opweave.function([x], x.values)
    np.testing.assert_array_equal(f(data), data.values.T)  # put in the order of x's dims
    with pytest.raises(ValueError, match=r"has dims \('a', 'b'\), the XTensorType expects"):
        xtensor("y", dims=("a", "c")).type.filter(data)


def test_dims_may_be_named_like_the_methods_first_argument() -> None:
    a = xtensor("a", dims=("x", "self"), shape=(3, 4))
    value = np.arange(12.0).reshape(3, 4)
    outs = [
        a.isel(x=0),
        a.head(x=1),
        a.tail(self=2),
        a.thin(x=2),
        a.rename(x="z"),
        a.stack(s=("x", "self")),
        a.expand_dims(y=1),
        a.isel(self=slice(None, 1)).squeeze("self"),
    ]
    got = opweave.function([a], outs)(value)
    want = [
        value[0],
        value[:1],
        value[:, -2:],
        value[::2],
        value,
        value.ravel(),
        value[None],
        value[:, 0],
    ]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    assert outs[4].dims == ("z", "self") and outs[7].dims == ("x",)
