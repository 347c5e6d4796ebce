"""PyTensor's contract for TensorType details, tensor constructors and a few named rewrites:
``TensorType.__call__(shape=...)``, the deprecated ``broadcastable`` keyword, the errors of
the constructors, ``local_dimshuffle_lift`` and the two ``Reshape`` rewrites."""

from __future__ import annotations

import numpy as np
import pytest

import opweave.tensor as ot
from opweave.graph.basic import equal_computations
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import out2in
from opweave.graph.rewriting.utils import rewrite_graph
from opweave.scalar import Composite
from opweave.tensor.basic import MakeVector
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.rewriting.elemwise import (
    FusionOptimizer,
    apply_local_dimshuffle_lift,
    is_dimshuffle_useless,
    local_dimshuffle_lift,
    local_useless_dimshuffle_makevector,
)
from opweave.tensor.rewriting.shape import (
    local_fuse_squeeze_reshape,
    local_useless_expand_dims_in_reshape,
)
from opweave.tensor.shape import Reshape, reshape
from opweave.tensor.type import (
    StaticShapeEntryError,
    TensorType,
    col,
    dmatrix,
    drow,
    fmatrix,
    frow,
    matrix,
    row,
    tensor,
    vector,
)

# ---------------------------------------------------------------------- TensorType


def test_call_with_shape_specialises_the_type() -> None:
    x = fmatrix("x", shape=(1, None))
    assert x.type == frow and x.name == "x"
    assert drow(shape=(1, 5)).type == TensorType("float64", shape=(1, 5))
    assert dmatrix(shape=(1, 5)).type == drow(shape=(1, 5)).type


@pytest.mark.parametrize(
    ("base", "shape"),
    [(fmatrix, (None, None, None)), (drow, (None, None)), (TensorType("float32", (3, 5)), (4, 5))],
)
def test_call_with_incompatible_shape_raises(base: TensorType, shape: tuple) -> None:
    with pytest.raises(ValueError, match="incompatible with the static shape"):
        base(shape=shape)


def test_broadcastable_keyword_warns_deprecated() -> None:
    with pytest.warns(DeprecationWarning, match="The `broadcastable` keyword is deprecated"):
        t = TensorType("float64", broadcastable=(True, False))
    assert t.shape == (1, None)
    with pytest.warns(DeprecationWarning, match="broadcastable"):
        assert t.clone(broadcastable=(False, True)).shape == (None, 1)
    with pytest.warns(DeprecationWarning, match="broadcastable"):
        assert tensor(dtype="int64", broadcastable=(True,)).type.shape == (1,)


def test_shape_entry_of_wrong_type_is_type_and_value_error() -> None:
    msg = "TensorType broadcastable/shape must be a boolean, integer or None"
    with pytest.raises(ValueError, match=msg):
        TensorType("float64", shape=("1", "2"))
    with pytest.raises(TypeError, match="None or a non-negative int"):
        TensorType("float64", shape=(2.5,))
    assert issubclass(StaticShapeEntryError, TypeError)


def test_numpy_shape_entries_become_python_ints() -> None:
    t = TensorType("float64", shape=np.array([3], dtype=np.int32))
    assert t.shape == (3,) and type(t.shape[0]) is int


# ---------------------------------------------------------------------- constructors


@pytest.mark.parametrize("dtype", ["floatX", "float64", "int", bool, np.int64])
def test_tensor_name_that_looks_like_a_dtype(dtype: object) -> None:
    with pytest.raises(ValueError, match="This name looks like a dtype"):
        tensor(dtype, shape=(None,))  # type: ignore[arg-type]
    assert tensor(dtype=dtype, shape=(None,)).type.ndim == 1


def test_short_names_are_names() -> None:
    assert tensor("a", shape=(None,)).name == "a"
    assert vector("f8").name == "f8"
    with pytest.raises(TypeError, match="name must be a str"):
        vector(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(("make", "ndim"), [(vector, 1), (matrix, 2), (row, 2), (col, 2)])
def test_constructor_shape_errors(make: object, ndim: int) -> None:
    with pytest.raises(TypeError, match="Shape must be a tuple, got list"):
        make(shape=[None] * ndim)  # type: ignore[operator]
    with pytest.raises(ValueError, match=f"Shape must be a tuple of length {ndim}"):
        make(shape=(None,) * (ndim + 1))  # type: ignore[operator]
    with pytest.raises(TypeError, match="Shape entries must be None or integer"):
        make(shape=(1.0,) * ndim)  # type: ignore[operator]


def test_row_and_col_need_length_one() -> None:
    with pytest.raises(ValueError, match="The first dimension of a `row` must have shape 1, got 2"):
        row(shape=(2, 5))
    with pytest.raises(
        ValueError, match="The second dimension of a `col` must have shape 1, got 5"
    ):
        col(shape=(2, 5))


# ---------------------------------------------------------------------- local_dimshuffle_lift


def _inputs(*shapes: tuple) -> list:
    return [TensorType("float64", shape=s)(n) for n, s in zip("xyz", shapes)]


def test_dimshuffle_lift_merges_and_removes() -> None:
    (x,) = _inputs((None, None))
    g = FunctionGraph([x], [x.dimshuffle(1, 0).dimshuffle(1, 0)], clone=False)
    out2in(local_dimshuffle_lift).rewrite(g)
    assert g.outputs[0] is x
    g = FunctionGraph([x], [x.dimshuffle(1, "x", 0).dimshuffle(2, 0, "x", 1)], clone=False)
    out2in(local_dimshuffle_lift).rewrite(g)
    assert equal_computations(g.outputs, [x.dimshuffle(0, 1, "x", "x")])


def test_dimshuffle_lift_through_elemwise() -> None:
    x, y = _inputs((None,), (None, None))
    g = FunctionGraph([x, y], [(x + y).T], clone=False)
    out2in(local_dimshuffle_lift).rewrite(g)
    assert equal_computations(g.outputs, [x.dimshuffle(0, "x") + y.T])


def test_dimshuffle_lift_leaves_shared_elemwise_alone() -> None:
    x, y = _inputs((None, None), (None, None))
    s = x + y
    g = FunctionGraph([x, y], [s.T, s], clone=False)
    assert not local_dimshuffle_lift.transform(g, g.outputs[0].owner)


def test_is_dimshuffle_useless() -> None:
    (x,) = _inputs((1, None, 1))
    assert is_dimshuffle_useless((0, 1, 2), x)
    assert is_dimshuffle_useless((2, 1, 0), x)  # swaps two dimensions of length 1
    assert is_dimshuffle_useless(("x", 1, 2), x)
    assert not is_dimshuffle_useless((1, 0, 2), x)
    assert not is_dimshuffle_useless((0, 1), x)
    y = x.dimshuffle(2, 1, 0)
    assert apply_local_dimshuffle_lift(None, y) is x
    assert apply_local_dimshuffle_lift(None, x) is x


# ---------------------------------------------------------------------- Reshape rewrites


def test_expand_dims_and_squeeze_in_reshape_are_removed() -> None:
    v = TensorType("float64", shape=(None,))("v")
    m = TensorType("float64", shape=(None, None))("m")
    c = TensorType("float64", shape=(None, 1))("c")
    outs = [
        reshape(v.dimshuffle("x", 0), v.shape),
        reshape(m.dimshuffle("x", 1, "x", 0), m.shape),
        reshape(c.dimshuffle(0), c.shape),
    ]
    g = FunctionGraph([v, m, c], outs, clone=False)
    out2in(local_useless_expand_dims_in_reshape, local_fuse_squeeze_reshape).rewrite(g)
    expected = [reshape(v, v.shape), reshape(m.T, m.shape), reshape(c, c.shape)]
    assert equal_computations(g.outputs, expected)
    for out in g.outputs:
        assert isinstance(out.owner.op, Reshape)


def test_reshape_rewrites_ignore_other_inputs() -> None:
    m = TensorType("float64", shape=(None, None))("m")
    out = reshape(m.T, m.shape)
    g = FunctionGraph([m], [out], clone=False)
    node = g.outputs[0].owner
    assert isinstance(m.T.owner.op, DimShuffle)
    assert not local_useless_expand_dims_in_reshape.transform(g, node)
    assert not local_fuse_squeeze_reshape.transform(g, node)


def test_useless_dimshuffle_makevector_in_canonicalize() -> None:
    a = TensorType("float64", shape=())("a")
    b = TensorType("float64", shape=())("b")
    y = MakeVector("float64")(a).dimshuffle(())
    (out,) = rewrite_graph([y], include=("canonicalize",))
    assert out is a
    pair = MakeVector("float64")(a, b)
    assert not local_useless_dimshuffle_makevector.transform(None, y.owner.inputs[0].owner)
    squeezed_pair = DimShuffle(1, ())(pair[:1])
    assert not local_useless_dimshuffle_makevector.transform(None, squeezed_pair.owner)


# ---------------------------------------------------------------------- FusionOptimizer


def test_fusion_apply_returns_profile_tuple_and_rewrite_the_count() -> None:
    a = TensorType("float64", shape=(None, None))("a")
    c = ot.log(ot.exp(a))
    fg = FunctionGraph([a], [c + ot.sin(c)], clone=False)
    assert not hasattr(fg, "replace_all_validate")
    rewriter, nb_fused, nb_replacement, *_ = FusionOptimizer().apply(fg)
    assert isinstance(rewriter, FusionOptimizer)
    assert (nb_fused, nb_replacement) == (1, 4)
    (node,) = fg.apply_nodes
    assert isinstance(node.op.scalar_op, Composite)
    b = TensorType("float64", shape=(None,))("b")
    fg2 = FunctionGraph([b], [ot.exp(b) + 1.0], clone=False)
    assert FusionOptimizer().rewrite(fg2) == 1
    assert FusionOptimizer().rewrite(fg2) == 0


def test_values_eq_approx_remove_nan_accepts_nan_positions() -> None:
    import numpy as np

    from opweave.tensor.type import values_eq_approx_remove_nan

    assert values_eq_approx_remove_nan(np.array([1.0, np.nan]), np.array([1.0, 5.0]))
    assert not values_eq_approx_remove_nan(np.array([1.0, 2.0]), np.array([1.0, 5.0]))
