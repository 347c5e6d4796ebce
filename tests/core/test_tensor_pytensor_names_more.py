"""PyTensor's names of ``tensor.basic``, ``tensor.shape``, ``tensor.variable``,
``tensor.elemwise``, ``tensor.sharedvar``, ``tensor.utils``, ``tensor.einsum`` and the
``tensor`` package, at PyTensor's paths."""

from __future__ import annotations

import importlib
import typing
import warnings

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.graph.fg import FunctionGraph
from opweave.graph.replace import vectorize_graph
from opweave.printing import PrinterState, pprint

# by module path: the package's attributes ``shape``, ``einsum``... are functions
basic = importlib.import_module("opweave.tensor.basic")
basic_extra = importlib.import_module("opweave.tensor.basic_extra")
einsum_module = importlib.import_module("opweave.tensor.einsum")
elemwise = importlib.import_module("opweave.tensor.elemwise")
extra_ops = importlib.import_module("opweave.tensor.extra_ops")
shape_module = importlib.import_module("opweave.tensor.shape")
sharedvar = importlib.import_module("opweave.tensor.sharedvar")
tutils = importlib.import_module("opweave.tensor.utils")
variable = importlib.import_module("opweave.tensor.variable")

LINKERS = ["py", "vm", "cvm"]

BASIC_EXTRA_NAMES = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "atleast_Nd",
    "empty",
    "empty_like",
    "expand_dims",
    "extract_diag",
    "horizontal_stack",
    "identity",
    "identity_like",
    "inverse_permutation",
    "is_flat",
    "mgrid",
    "moveaxis",
    "ogrid",
    "permute_row_elements",
    "stacklists",
    "take_along_axis",
    "trace",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
    "vertical_stack",
]


def _run(inputs, outputs, linker, *values):
    if linker == "cvm":
        pytest.importorskip("opweave_c", reason="the C backend (opweave-c) is not installed")
    return opweave.function(inputs, outputs, mode=Mode(linker=linker))(*values)


# ---------------------------------------------------------------------- tensor.basic


@pytest.mark.parametrize("name", BASIC_EXTRA_NAMES)
def test_basic_reexports_the_basic_extra_objects(name: str) -> None:
    assert name in basic.__all__
    assert getattr(basic, name) is getattr(basic_extra, name)


def test_basic_reexports_roll_transfer_and_identity() -> None:
    assert basic.roll is extra_ops.roll
    assert basic.transfer is importlib.import_module("opweave.transfer").transfer
    assert basic.identity is basic.tensor_copy
    namespace: dict[str, object] = {}
    exec("from opweave.tensor.basic import *", namespace)
    assert namespace["roll"] is extra_ops.roll and namespace["mgrid"] is basic_extra.mgrid


def test_basic_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'not_a_name'"):
        basic.not_a_name  # noqa: B018
    assert not hasattr(basic, "__not_there__")


@pytest.mark.parametrize("linker", LINKERS)
def test_basic_reexported_functions_compute_numpy_values(linker: str) -> None:
    x = ot.dmatrix("x")
    v = np.arange(12.0).reshape(3, 4)
    outs = [
        basic.roll(x, 1, axis=1),
        basic.moveaxis(x, 0, 1),
        basic.trace(x),
        basic.atleast_3d(x, left=False),
        basic.take_along_axis(x, ot.as_tensor(np.array([[0], [2], [1]])), axis=1),
    ]
    got = _run([x], outs, linker, v)
    np.testing.assert_allclose(got[0], np.roll(v, 1, axis=1))
    np.testing.assert_allclose(got[1], np.moveaxis(v, 0, 1))
    np.testing.assert_allclose(got[2], np.trace(v))
    np.testing.assert_allclose(got[3], np.atleast_3d(v))  # NumPy pads on the right
    np.testing.assert_allclose(got[4], np.take_along_axis(v, np.array([[0], [2], [1]]), axis=1))
    rows, cols = basic.tril_indices(4, -1, 5)
    expected = np.tril_indices(4, -1, 5)
    np.testing.assert_array_equal(rows.eval(), expected[0])
    np.testing.assert_array_equal(cols.eval(), expected[1])


# ---------------------------------------------------------------------- tensor.shape


def test_shape_names() -> None:
    assert shape_module.register_shape_c_code is opweave.compile.ops.register_shape_c_code
    assert shape_module.register_shape_i_c_code is opweave.compile.ops.register_shape_i_c_code
    assert int in typing.get_args(shape_module.ShapeValueType)
    assert type(...) in typing.get_args(shape_module.ShapeValueType)


@pytest.mark.parametrize("linker", LINKERS)
def test_vectorize_shape_repeats_the_core_shape(linker: str) -> None:
    x = ot.dmatrix("x")
    batched = ot.tensor("b", dtype="float64", shape=(None, None, None, 4))
    out = vectorize_graph(ot.shape(x), {x: batched})
    assert isinstance(out.owner.op, basic.Alloc)
    assert out.type.shape == (None, None, 2)
    value = np.zeros((2, 5, 3, 4))
    np.testing.assert_array_equal(
        _run([batched], out, linker, value), np.broadcast_to([3, 4], (2, 5, 2))
    )


def test_vectorize_shape_without_batch_dims_and_bad_input() -> None:
    x = ot.dmatrix("x")
    node = ot.shape(x).owner
    other = ot.dmatrix("y")
    same = shape_module.vectorize_shape(node.op, node, other)
    assert isinstance(same.op, shape_module.Shape) and same.inputs == [other]
    with pytest.raises(ValueError, match="fewer dimensions"):
        shape_module.vectorize_shape(node.op, node, ot.dvector("v"))


# ---------------------------------------------------------------------- tensor.variable


def test_unique_value_matches_pytensor() -> None:
    # expected kinds computed with PyTensor 2.38.3: a 0-d array for one element, a NumPy
    # scalar for several equal elements, None for differing or no elements
    one = ot.constant(np.array(3.0)).unique_value
    assert isinstance(one, np.ndarray) and one.shape == () and one == 3.0
    assert not one.flags.writeable
    many = ot.constant(np.array([2, 2, 2])).unique_value
    assert isinstance(many, np.integer) and many == 2
    assert ot.constant(np.array([1, 2])).unique_value is None
    assert ot.constant(np.zeros((0,))).unique_value is None


def test_get_unique_constant_value_is_deprecated() -> None:
    with pytest.warns(FutureWarning, match="deprecated"):
        assert variable.get_unique_constant_value(ot.constant(np.full(3, 4.0))) == 4.0
    with pytest.warns(FutureWarning):
        assert variable.get_unique_constant_value(ot.dvector()) is None


def test_tensor_constant_signature_compares_values_with_nans() -> None:
    sig = variable.TensorConstantSignature
    t = ot.dvector().type
    a = sig((t, np.array([1.0, np.nan, np.inf])))
    b = sig((t, np.array([1.0, np.nan, np.inf])))
    assert a == b and hash(a) == hash(b) and a.has_nan
    assert a.sum == 1.0  # the finite elements only
    assert a != sig((t, np.array([1.0, 2.0, np.inf])))
    assert sig((t, np.array([0.0]))) == sig((t, np.array([-0.0])))
    assert sig((t, np.array([1.0]))) != sig((ot.fvector().type, np.array([1.0])))
    assert sig((t, np.array([1.0]))) != (t, np.array([1.0]))
    assert sig((t, np.zeros(2))) != sig((t, np.zeros(3)))


def test_dense_tensor_names_match_only_plain_classes() -> None:
    assert isinstance(ot.dvector(), variable.DenseTensorVariable)
    assert not isinstance(ot.constant(1.0), variable.DenseTensorVariable)
    assert not isinstance(opweave.shared(np.ones(2)), variable.DenseTensorVariable)
    assert isinstance(ot.constant(1.0), variable.DenseTensorConstant)
    assert not isinstance(ot.dvector(), variable.DenseTensorConstant)
    assert isinstance(variable.DenseTensorVariable, variable.DenseVariableMeta)
    assert isinstance(variable.DenseTensorConstant, variable.DenseConstantMeta)


# ---------------------------------------------------------------------- tensor.elemwise


@pytest.mark.parametrize("linker", LINKERS)
def test_scalar_elemwise_builds_the_scalar_ops_elemwise(linker: str) -> None:
    @elemwise.scalar_elemwise
    def exp(a):
        """The exponential."""

    @elemwise.scalar_elemwise(symbolname="log1p")
    def my_log1p(a):
        """log(1 + a)."""

    assert exp == elemwise.Elemwise(opweave.scalar.exp) and exp.__doc__ == "The exponential."
    assert my_log1p.scalar_op == opweave.scalar.log1p
    x = ot.dvector("x")
    v = np.array([0.0, 0.5, 2.0])
    got = _run([x], [exp(x), my_log1p(x)], linker, v)
    np.testing.assert_allclose(got[0], np.exp(v))
    np.testing.assert_allclose(got[1], np.log1p(v))


def test_scalar_elemwise_bad_names() -> None:
    with pytest.raises(ValueError, match="inplace"):
        elemwise.scalar_elemwise(symbolname="exp_inplace")(lambda a: a)
    with pytest.raises(AttributeError, match="no scalar Op 'not_an_op'"):
        elemwise.scalar_elemwise(symbolname="not_an_op")(lambda a: a)
    with pytest.raises(TypeError, match="not a scalar Op"):
        elemwise.scalar_elemwise(symbolname="ScalarType")(lambda a: a)


def test_get_normalized_batch_axes() -> None:
    assert elemwise.get_normalized_batch_axes(None, 2, 4) == (4, 5)
    assert elemwise.get_normalized_batch_axes(0, 2, 2) == (2,)
    assert elemwise.get_normalized_batch_axes((0, -1), 3, 1) == (1, 3)
    with pytest.raises(np.exceptions.AxisError):
        elemwise.get_normalized_batch_axes(2, 2, 1)


@pytest.mark.parametrize("linker", LINKERS)
def test_vectorized_reduction_sums_the_core_axes(linker: str) -> None:
    x = ot.dmatrix("x")
    batched = ot.tensor3("b", dtype="float64")
    out = vectorize_graph(ot.sum(x, axis=-1), {x: batched})
    value = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(_run([batched], out, linker, value), value.sum(-1))


def test_dimshuffle_printer() -> None:
    printer = elemwise.DimShufflePrinter()
    x = ot.dmatrix("x")

    def text(var):
        return printer.process(var, PrinterState(pprinter=pprint))

    assert text(x.T) == "x.T"
    assert text(x.dimshuffle("x", 0, 1)) == "x"
    assert text(x.dimshuffle(1, "x", 0)) == "DimShuffle{1, x, 0}(x)"
    with pytest.raises(TypeError, match="Can only print DimShuffle"):
        text(ot.exp(x))
    with pytest.raises(TypeError, match="Can only print DimShuffle"):
        text(x)


# ---------------------------------------------------------------------- tensor.sharedvar


def test_tensor_constructor() -> None:
    value = np.ones((2, 3))
    var = sharedvar.tensor_constructor(value, name="w", borrow=True)
    assert isinstance(var, sharedvar.TensorSharedVariable) and var.name == "w"
    assert var.type.shape == (None, None) and var.get_value(borrow=True) is value
    assert sharedvar.tensor_constructor(value, shape=(2, 3)).type.shape == (2, 3)
    copy = sharedvar.tensor_constructor(value)
    value[0, 0] = 5.0
    assert copy.get_value()[0, 0] == 1.0
    with pytest.warns(DeprecationWarning, match="broadcastable"):
        flagged = sharedvar.tensor_constructor(np.zeros((1, 2)), broadcastable=(True, False))
    assert flagged.type.shape == (1, None)
    with pytest.raises(TypeError, match=r"expected a numpy\.ndarray"):
        sharedvar.tensor_constructor([1.0, 2.0])
    loaded = sharedvar.load_shared_variable(np.arange(3))
    assert loaded.type.dtype == "int64" and loaded.type.shape == (None,)


def test_scalar_constructor() -> None:
    # dtypes as PyTensor 2.38.3 gives them
    for value, dtype in [
        (3, "int64"),
        (np.float32(3), "float32"),
        (True, "bool"),
        (2j, "complex128"),
    ]:
        var = sharedvar.scalar_constructor(value)
        assert var.type.dtype == dtype and var.type.ndim == 0
        assert var.get_value() == value
    with pytest.raises(TypeError, match="0-d"):
        sharedvar.scalar_constructor(np.ones(2))
    with pytest.raises(TypeError):
        sharedvar.scalar_constructor("a")


# ---------------------------------------------------------------------- tensor.utils


def test_normalize_reduce_axis() -> None:
    assert tutils.normalize_reduce_axis(None, 3) is None
    assert tutils.normalize_reduce_axis(None, 3, normalize_none=True) == (0, 1, 2)
    assert tutils.normalize_reduce_axis((0, -1), 3) == (0, 2)
    assert tutils.normalize_reduce_axis(-1, 0) == (0,)  # a 0-d input takes 1-d axes
    with pytest.raises(np.exceptions.AxisError):
        tutils.normalize_reduce_axis(3, 2)
    with pytest.raises(ValueError, match="repeated"):
        tutils.normalize_reduce_axis((0, 0), 2)


def test_hash_from_ndarray() -> None:
    # digests computed with PyTensor 2.38.3's hash_from_ndarray
    value = np.arange(6, dtype="int32").reshape(2, 3)
    assert (
        tutils.hash_from_ndarray(value)
        == "m9f6104b524118f88ff3f0d8263b8b6eddfde5e4afebb685b41199b0f39ce3714"
    )
    assert (
        tutils.hash_from_ndarray(value.T)
        == "mcc80d81b02f0fcf018348a65706db1f62b2fc18e008cb64ca6f124a6c8e7bd19"
    )
    assert tutils.hash_from_ndarray(np.zeros((1, 0))) != tutils.hash_from_ndarray(np.zeros((2, 0)))
    with pytest.raises(TypeError, match=r"numpy\.ndarray"):
        tutils.hash_from_ndarray([1, 2])


def test_shape_of_variables() -> None:
    x = ot.dmatrix("x")
    y = x[512:]
    z = ot.exp(y).sum(axis=0)
    fgraph = FunctionGraph([x], [z], clone=False)
    shapes = tutils.shape_of_variables(fgraph, {x: (1024, 1000)})
    reference = np.zeros((1024, 1000))
    assert tuple(map(int, shapes[x])) == reference.shape
    assert tuple(map(int, shapes[y])) == reference[512:].shape
    assert tuple(map(int, shapes[z])) == reference[512:].sum(0).shape
    with pytest.raises(ValueError, match="not inputs"):
        tutils.shape_of_variables(fgraph, {ot.dmatrix(): (1, 1)})
    with pytest.raises(ValueError, match="no shape given"):
        tutils.shape_of_variables(fgraph, {})


def test_numpy_helpers() -> None:
    x = np.arange(3.0)
    view = tutils.faster_broadcast_to(x, (2, 3))
    np.testing.assert_array_equal(view, np.broadcast_to(x, (2, 3)))
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        tutils.faster_broadcast_to(x, (2, 4))
    assert list(tutils.faster_ndindex((2, 3))) == list(np.ndindex(2, 3))
    assert tutils.import_func_from_string("cumsum") is np.cumsum
    assert tutils.import_func_from_string("numpy.linalg.norm") is np.linalg.norm
    assert tutils.import_func_from_string("numpy.not_a_function") is None
    assert tutils.import_func_from_string("no_such_module_here.f") is None


def test_get_static_shape_from_size_variables() -> None:
    n = ot.lscalar("n")
    sizes = [ot.constant(3), n, ot.constant(2) + 1, 4]
    assert tutils.get_static_shape_from_size_variables(sizes) == (3, None, 3, 4)


# ---------------------------------------------------------------------- einsum, package


def test_einsum_path_aliases_describe_numpy_paths() -> None:
    assert einsum_module.PATH == tuple[tuple[int] | tuple[int, int], ...]
    assert typing.get_origin(einsum_module.CONTRACTION_STEP) is tuple
    path, _ = np.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)))
    assert all(len(step) in (1, 2) for step in path[1:])


def test_tensor_package_reexports() -> None:
    assert ot.Constant is opweave.graph.basic.Constant
    assert ot.Op is opweave.graph.op.Op
    assert opweave.graph.basic.Variable in typing.get_args(ot.TensorLike)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert {"Constant", "Op", "TensorLike"} <= set(ot.__all__)


# ---------------------------------------------------------------------- tensor.interpolate

interpolate = importlib.import_module("opweave.tensor.interpolate")
XP = np.array([3.0, 1.0, 2.0, 5.0])  # unsorted: interpolate1d sorts the data points
FP = np.array([30.0, 10.0, 20.0, 50.0])
QUERIES = np.array([[0.0, 1.0, 1.5], [2.2, 5.0, 7.0]])


@pytest.mark.parametrize("linker", LINKERS)
def test_interp_matches_numpy(linker: str) -> None:
    assert ot.interp is interpolate.interp and ot.interpolate1d is interpolate.interpolate1d
    order = np.argsort(XP)
    q = ot.dmatrix("q")
    outs = [interpolate.interp(q, XP[order], FP[order]), ot.interp(q, XP, FP, left=-1, right=99)]
    got = _run([q], outs, linker, QUERIES)
    np.testing.assert_allclose(got[0], np.interp(QUERIES, XP[order], FP[order]))
    np.testing.assert_allclose(got[1], np.interp(QUERIES, XP[order], FP[order], left=-1, right=99))


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        # computed with PyTensor 2.38.3's interpolate1d (extrapolating)
        ("linear", [[0.0, 10.0, 15.0], [22.0, 50.0, 70.0]]),
        ("nearest", [[10.0, 10.0, 10.0], [20.0, 50.0, 50.0]]),
        ("first", [[10.0, 10.0, 10.0], [20.0, 30.0, 50.0]]),
        ("last", [[10.0, 10.0, 20.0], [30.0, 50.0, 50.0]]),
        ("mean", [[15.0, 15.0, 15.0], [25.0, 40.0, 40.0]]),
    ],
)
def test_interpolate1d_methods(method: str, expected: list[list[float]]) -> None:
    f = interpolate.interpolate1d(XP, FP, method=method)
    np.testing.assert_allclose(f(QUERIES).eval(), expected)


def test_interpolate1d_pads_and_errors() -> None:
    f = interpolate.interpolate1d(XP, FP, method="last", extrapolate=False, left_pad=-1.0)
    # below x[0]: the left pad; above x[-1]: y[-1] (the default right pad)
    np.testing.assert_allclose(f(np.array([0.5, 1.0, 9.0])).eval(), [-1.0, 10.0, 50.0])
    with pytest.raises(NotImplementedError, match=r"Did you mean \['linear'\]"):
        interpolate.interpolate1d(XP, FP, method="lineal")
    with pytest.raises(ValueError, match="must be vectors"):
        interpolate.interpolate1d(np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(NotImplementedError, match="period"):
        interpolate.interp(QUERIES, XP, FP, period=2.0)
    assert interpolate.valid_methods == ("linear", "nearest", "first", "last", "mean")


# ---------------------------------------------------------------------- tensor.pad

pad_module = importlib.import_module("opweave.tensor.pad")
PAD_MODES = [
    "constant",
    "edge",
    "wrap",
    "symmetric",
    "reflect",
    "linear_ramp",
    "maximum",
    "minimum",
    "mean",
    "median",
]


@pytest.mark.parametrize("linker", LINKERS)
def test_pad_modes_match_numpy(linker: str) -> None:
    assert ot.pad is pad_module.pad and pad_module.flip is ot.flip
    x = ot.dmatrix("x")
    widths = ((1, 2), (4, 0))  # wider than the 3-long axis: reflections repeat
    value = np.arange(6.0).reshape(2, 3) ** 2
    got = _run([x], [pad_module.pad(x, widths, mode=m) for m in PAD_MODES], linker, value)
    for mode, out in zip(PAD_MODES, got, strict=True):
        np.testing.assert_allclose(out, np.pad(value, widths, mode=mode), err_msg=mode)


@pytest.mark.parametrize(
    ("mode", "kwargs"),
    [
        ("constant", {"constant_values": ((1, 2), (3, 4))}),
        ("linear_ramp", {"end_values": (5, -5)}),
        ("mean", {"stat_length": 2}),
        ("maximum", {"stat_length": ((1, 2), (3, 1))}),
        ("median", {"stat_length": 1}),
        ("edge", {}),
    ],
)
def test_pad_options_and_integer_rounding_match_numpy(mode: str, kwargs: dict) -> None:
    value = np.array([[3, 8, 1, 6], [0, 9, 2, 7], [5, 4, 4, 1]])
    for array in (value, value.astype("float64")):
        got = pad_module.pad(array, (2, 3), mode=mode, **kwargs).eval()
        expected = np.pad(array, (2, 3), mode=mode, **kwargs)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected)


def test_pad_symbolic_widths_static_shape_and_gradient() -> None:
    x = ot.dmatrix("x")
    w = ot.lmatrix("w")
    value = np.arange(12.0).reshape(3, 4)
    widths = np.array([[1, 2], [0, 3]])
    f = opweave.function([x, w], pad_module.pad(x, w, mode="symmetric"))
    np.testing.assert_allclose(f(value, widths), np.pad(value, widths, mode="symmetric"))
    assert pad_module.pad(ot.tensor(shape=(3, 4)), ((1, 2), (0, 3))).type.shape == (6, 7)
    # d sum(pad(x)) / dx counts how often each entry is copied
    grad = ot.grad(pad_module.pad(x, 2, mode="reflect").sum(), x).eval({x: value})
    copies = np.pad(np.arange(12).reshape(3, 4), 2, mode="reflect")
    np.testing.assert_allclose(grad, np.bincount(copies.ravel(), minlength=12).reshape(3, 4))


def test_pad_bad_arguments() -> None:
    x = ot.dmatrix("x")
    with pytest.raises(ValueError, match="negative"):
        pad_module.pad(x, -1)
    with pytest.raises(TypeError, match="integers"):
        pad_module.pad(x, 1.5)
    with pytest.raises(ValueError, match="Invalid mode: foo"):
        pad_module.pad(x, 1, mode="foo")
    with pytest.raises(ValueError, match=r"Invalid keyword arguments for mode 'edge'"):
        pad_module.pad(x, 1, mode="edge", constant_values=1)
    with pytest.raises(NotImplementedError, match="odd"):
        pad_module.pad(x, 1, mode="reflect", reflect_type="odd")
    with pytest.raises(ValueError, match="each of the 2 axes"):
        pad_module.pad(x, (1, 2, 3))
