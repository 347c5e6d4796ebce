"""``opweave.xtensor.shape``: transpose, stack/unstack, concat, squeeze, expand_dims,
broadcast and the ``*_like`` constructors, compiled (their lowering to tensor Ops) and
compared with the same operations written with NumPy on explicitly ordered axes."""

from __future__ import annotations

import re
from itertools import combinations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.xtensor import as_xtensor, xtensor
from opweave.xtensor.basic import XOp
from opweave.xtensor.shape import (
    Broadcast,
    Concat,
    ExpandDims,
    Squeeze,
    Stack,
    Transpose,
    UnStack,
    broadcast,
    broadcast_like,
    concat,
    expand_dims,
    full_like,
    ones_like,
    squeeze,
    stack,
    transpose,
    unstack,
    zeros_like,
)

MODES = [None, "FAST_COMPILE", Mode(linker="py")]
MODE_IDS = ["default", "fast_compile", "py"]
# The whole-graph C linker, for graphs that never ask an xtensor for its shape (which
# has no C code: the default linker runs such a node in Python).
C_MODES = [*MODES, Mode(linker="c")]
C_MODE_IDS = [*MODE_IDS, "c"]


def _fn(inputs, outputs, mode=None):
    f = opweave.function(inputs, outputs, mode=mode)
    assert not [node for node in f.maker.fgraph.toposort() if isinstance(node.op, XOp)]
    return f


def _arange(shape, dtype="float64"):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) + 1


def _np_broadcast_to(value, dims, out_dims, sizes):
    """``value`` (axes named ``dims``) moved to ``out_dims``, missing axes broadcast."""
    value = np.transpose(value, [dims.index(d) for d in out_dims if d in dims])
    present = [d for d in out_dims if d in dims]
    for i, d in enumerate(out_dims):
        if d not in dims:
            value = np.expand_dims(value, i)
            present.insert(i, d)
    return np.broadcast_to(value, tuple(sizes[d] for d in out_dims))


# ------------------------------------------------------------------ transpose


@pytest.mark.parametrize("mode", C_MODES, ids=C_MODE_IDS)
def test_transpose_orders_equal_numpy(mode) -> None:
    dims = ("a", "b", "c", "d", "e")
    x = xtensor("x", dims=dims, shape=(2, 3, 5, 7, 11))
    orders = {
        ("e", "d", "c", "b", "a"): (4, 3, 2, 1, 0),
        (): (4, 3, 2, 1, 0),
        ("a", "b", "c", "e", "d"): (0, 1, 2, 4, 3),
        (..., "d", "c"): (0, 1, 4, 3, 2),
        ("b", "a", ..., "e", "d"): (1, 0, 2, 4, 3),
        ("c", "a", ...): (2, 0, 1, 3, 4),
    }
    outs = [transpose(x, *order) for order in orders]
    for out, perm in zip(outs, orders.values(), strict=True):
        assert out.type.dims == tuple(dims[i] for i in perm)
        assert out.type.shape == tuple(x.type.shape[i] for i in perm)
    value = _arange(x.type.shape)
    results = _fn([x], outs, mode=mode)(value)
    for result, perm in zip(results, orders.values(), strict=True):
        np.testing.assert_array_equal(result, np.transpose(value, perm))


def test_transpose_to_same_order_is_the_variable() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    assert transpose(x, "a", "b") is x
    assert transpose(x, ...) is x
    assert transpose(x, "a", ...) is x


def test_transpose_methods() -> None:
    x = xtensor("x", dims=("a", "b", "c"), shape=(2, 3, 4))
    value = _arange(x.type.shape)
    f = _fn([x], [x.transpose(), x.transpose("c", ...), x.T])
    full, c_first, t = f(value)
    np.testing.assert_array_equal(full, value.transpose(2, 1, 0))
    np.testing.assert_array_equal(c_first, value.transpose(2, 0, 1))
    np.testing.assert_array_equal(t, value.transpose(2, 1, 0))


def test_transpose_missing_dims() -> None:
    x = xtensor("x", dims=("a", "b", "c"), shape=(2, 3, 4))
    message = "Dimensions {'d'} do not exist. Expected one or more of: ('a', 'b', 'c')"
    with pytest.raises(ValueError, match=re.escape(message)):
        transpose(x, "d")
    with pytest.raises(ValueError, match=re.escape(message)):
        x.transpose("c", ..., "d")
    ignored = transpose(x, "c", ..., "d", missing_dims="ignore")
    with pytest.warns(UserWarning, match=re.escape(message)):
        warned = transpose(x, "c", ..., "d", missing_dims="warn")
    assert ignored.type.dims == warned.type.dims == ("c", "a", "b")
    value = _arange(x.type.shape)
    np.testing.assert_array_equal(_fn([x], warned)(value), value.transpose(2, 0, 1))
    with pytest.raises(ValueError, match="missing_dims must be one of"):
        transpose(x, "d", missing_dims="skip")  # type: ignore[arg-type]


def test_transpose_errors() -> None:
    x = xtensor("x", dims=("a", "b", "c"), shape=(2, 3, 4))
    with pytest.raises(ValueError, match=re.escape("Ellipsis (...) can only appear once")):
        transpose(x, "a", ..., "b", ...)
    with pytest.raises(ValueError, match="must be a permuted list of"):
        transpose(x, "a", "b")
    with pytest.raises(ValueError, match="must be a permuted list of"):
        Transpose(("a", "b", "b"))(x)


# ------------------------------------------------------------------ stack / unstack


def _np_stack(value, dims, stacked):
    kept = [d for d in dims if d not in stacked]
    order = [dims.index(d) for d in (*kept, *stacked)]
    moved = np.transpose(value, order)
    return moved.reshape(*moved.shape[: len(kept)], int(np.prod(moved.shape[len(kept) :])))


@pytest.mark.parametrize("mode", C_MODES, ids=C_MODE_IDS)
def test_stack_every_group_equals_numpy(mode) -> None:
    dims = ("a", "b", "c", "d")
    x = xtensor("x", dims=dims, shape=(2, 3, 5, 7))
    groups = [g for r in (1, 2, 3, 4) for g in combinations(dims, r)]
    groups += [("c", "a"), ("d", "b", "a")]  # merged in the order given, as in xarray
    outs = [stack(x, new=group) for group in groups]
    value = _arange(x.type.shape)
    results = _fn([x], outs, mode=mode)(value)
    for group, out, result in zip(groups, outs, results, strict=True):
        kept = tuple(d for d in dims if d not in group)
        assert out.type.dims == (*kept, "new")
        assert out.type.shape == (*(x.type.shape[dims.index(d)] for d in kept), result.shape[-1])
        np.testing.assert_array_equal(result, _np_stack(value, dims, group))


def test_stack_several_and_method() -> None:
    x = xtensor("x", dims=("a", "b", "c", "d"), shape=(2, 3, 5, 7))
    out = stack(x, ab=("a", "b"), cd=("c", "d"))
    via_dict = x.stack({"ab": ["a", "b"], "cd": ["c", "d"]})
    assert out.type.dims == via_dict.type.dims == ("ab", "cd")
    assert out.type.shape == (6, 35)
    value = _arange(x.type.shape)
    result, result_dict = _fn([x], [out, via_dict])(value)
    np.testing.assert_array_equal(result, value.reshape(6, 35))
    np.testing.assert_array_equal(result_dict, value.reshape(6, 35))


def test_stack_symbolic_lengths() -> None:
    x = xtensor("x", dims=("a", "b", "c"), shape=(None, 3, None))
    out = stack(x, ac=("a", "c"))
    assert out.type.shape == (3, None)
    value = _arange((2, 3, 4))
    np.testing.assert_array_equal(
        _fn([x], out)(value), _np_stack(value, ("a", "b", "c"), ("a", "c"))
    )


def test_stack_zero_lengths() -> None:
    x = xtensor("x", dims=("a", "b", "c"))
    f = _fn([x], stack(x, ca=("c", "a")))
    for shape in [(0, 3, 4), (2, 0, 4), (2, 3, 0)]:
        value = np.zeros(shape)
        expected = _np_stack(value, ("a", "b", "c"), ("c", "a"))
        np.testing.assert_array_equal(f(value), expected)
        assert f(value).shape == expected.shape


def test_stack_errors() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    with pytest.raises(TypeError, match="a single string: ab"):
        stack(x, new="ab")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"must be a subset of \('a', 'b'\)"):
        stack(x, new=("a", "z"))
    with pytest.raises(ValueError, match=r"Stacking dim b must not be in \('a', 'b'\)"):
        stack(x, b=("a",))
    with pytest.raises(ValueError, match="Stacking dim a must not be in"):
        Stack("a", ("a", "b"))
    with pytest.raises(ValueError, match="must not be empty"):
        stack(x, new=())
    with pytest.raises(ValueError, match=re.escape("must not repeat: got ('a', 'a')")):
        stack(x, new=("a", "a"))
    with pytest.raises(ValueError, match="Cannot use both positional dim and keyword dims"):
        stack(x, {"n": ("a", "b")}, m=("a",))


@pytest.mark.parametrize("mode", C_MODES, ids=C_MODE_IDS)
def test_unstack_constant_lengths(mode) -> None:
    x = xtensor("x", dims=("a", "bc", "d"), shape=(2, 15, 7))
    out = unstack(x, bc={"b": 3, "c": 5})
    assert out.type.dims == ("a", "d", "b", "c")
    assert out.type.shape == (2, 7, 3, 5)
    value = _arange(x.type.shape)
    expected = value.transpose(0, 2, 1).reshape(2, 7, 3, 5)
    np.testing.assert_array_equal(_fn([x], out, mode=mode)(value), expected)


def test_unstack_symbolic_lengths() -> None:
    x = xtensor("x", dims=("a", "b", "c"))
    stacked = stack(x, bc=("b", "c"))
    out = unstack(stacked, bc={"b": x.sizes["b"], "c": x.sizes["c"]})
    assert out.type.dims == ("a", "b", "c")
    assert out.type.shape == (None, None, None)
    n = ot.scalar("n", dtype="int64")
    y = xtensor("y", dims=("ab",), shape=(None,))
    split = y.unstack(ab={"a": n, "b": 3})
    assert split.type.shape == (None, 3)
    f = _fn([x, y, n], [out, split])
    value = _arange((2, 3, 5))
    result, result_split = f(value, np.arange(12.0), 4)
    np.testing.assert_array_equal(result, value)
    np.testing.assert_array_equal(result_split, np.arange(12.0).reshape(4, 3))
    with pytest.raises(Exception):  # noqa: B017 (the backends word the reshape error)
        f(value, np.arange(12.0), 5)


def test_stack_then_unstack_in_another_order() -> None:
    x = xtensor("x", dims=("a", "b", "c", "d"), shape=(2, 3, 5, 7))
    out = unstack(stack(x, db=("d", "b")), db={"d": 7, "b": 3})
    assert out.type.dims == ("a", "c", "d", "b")
    value = _arange(x.type.shape)
    np.testing.assert_array_equal(_fn([x], out)(value), value.transpose(0, 2, 3, 1))


def test_unstack_errors() -> None:
    x = xtensor("x", dims=("a", "bc"), shape=(2, 15))
    with pytest.raises(ValueError, match=r"Dim to unstack z must be in \('a', 'bc'\)"):
        unstack(x, z={"b": 3, "c": 5})
    with pytest.raises(ValueError, match="must not be in"):
        unstack(x, bc={"a": 3, "c": 5})
    with pytest.raises(ValueError, match="use rename instead"):
        unstack(x, bc={"b": 15})
    with pytest.raises(ValueError, match="can't be empty"):
        UnStack("bc", ())
    with pytest.raises(TypeError, match="must be discrete dtypes"):
        unstack(x, bc={"b": 3.0, "c": 5})
    with pytest.raises(ValueError, match="Number of unstacked lengths 1 must match"):
        UnStack("bc", ("b", "c"))(x, 3)
    with pytest.raises(ValueError, match="Cannot use both positional dim and keyword dims"):
        unstack(x, {"bc": {"b": 3, "c": 5}}, a={"e": 1, "f": 2})


# ------------------------------------------------------------------ concat


@pytest.mark.parametrize("mode", C_MODES, ids=C_MODE_IDS)
@pytest.mark.parametrize("dim", ["a", "b", "new"])
def test_concat_mixed_dim_orders(mode, dim) -> None:
    x1 = xtensor("x1", dims=("a", "b"), shape=(2, 3))
    x2 = xtensor("x2", dims=("b", "a"), shape=(3, 2))
    x3 = xtensor("x3", dims=("a", "b"), shape=(4 if dim == "a" else 2, 5 if dim == "b" else 3))
    out = concat([x1, x2, x3], dim=dim)
    rng = np.random.default_rng(1)
    v1, v2, v3 = (rng.normal(size=x.type.shape) for x in (x1, x2, x3))
    if dim == "new":
        expected = np.stack([v1, v2.T, v3])
        assert out.type.dims == ("new", "a", "b")
    else:
        expected = np.concatenate([v1, v2.T, v3], axis=("a", "b").index(dim))
        assert out.type.dims == ("a", "b")
    assert out.type.shape == expected.shape
    np.testing.assert_array_equal(_fn([x1, x2, x3], out, mode=mode)(v1, v2, v3), expected)


@pytest.mark.parametrize("dim", ["a", "b", "c", "d", "new"])
def test_concat_broadcasts_missing_dims(dim) -> None:
    x1 = xtensor("x1", dims=("a", "b"), shape=(2, 3))
    x2 = xtensor("x2", dims=("b", "c"), shape=(3, 5))
    x3 = xtensor("x3", dims=("c", "d"), shape=(5, 7))
    x4 = xtensor("x4", dims=(), shape=())
    xs = [x1, x2, x3, x4]
    out = concat(xs, dim=dim)
    all_dims = ("a", "b", "c", "d")
    sizes = {"a": 2, "b": 3, "c": 5, "d": 7}
    rng = np.random.default_rng(2)
    values = [rng.normal(size=x.type.shape) for x in xs]
    pieces = []
    for x, v in zip(xs, values, strict=True):
        piece_sizes = dict(sizes)
        if dim in sizes:
            piece_sizes[dim] = sizes[dim] if dim in x.type.dims else 1
        pieces.append(_np_broadcast_to(v, x.type.dims, all_dims, piece_sizes))
    if dim == "new":
        expected = np.stack(pieces)
        assert out.type.dims == ("new", *all_dims)
    else:
        expected = np.concatenate(pieces, axis=all_dims.index(dim))
        assert out.type.dims == all_dims
    assert out.type.shape == expected.shape
    np.testing.assert_array_equal(_fn(xs, out)(*values), expected)


def test_concat_symbolic_lengths_and_values() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(None, 3))
    y = xtensor("y", dims=("b", "a"), shape=(3, 2))
    out = concat([x, y, 0], dim="a")
    assert out.type.dims == ("a", "b")
    assert out.type.shape == (None, 3)
    assert out.type.dtype == "float64"
    vx, vy = _arange((4, 3)), _arange((3, 2))
    expected = np.concatenate([vx, vy.T, np.zeros((1, 3))])
    np.testing.assert_array_equal(_fn([x, y], out)(vx, vy), expected)


def test_concat_scalars_and_dtype() -> None:
    x = xtensor("x", dims=(), shape=(), dtype="int32")
    y = xtensor("y", dims=(), shape=(), dtype="float32")
    out = concat([x, y], dim="new")
    assert out.type.dims == ("new",)
    assert out.type.shape == (2,)
    assert out.type.dtype == np.result_type(np.int32, np.float32).name
    result = _fn([x, y], out)(np.int32(3), np.float32(1.5))
    np.testing.assert_array_equal(result, np.array([3, 1.5]))
    assert result.dtype == out.type.dtype


def test_concat_conflicting_lengths() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    y = xtensor("y", dims=("a", "b"), shape=(2, 4))
    with pytest.raises(ValueError, match="Non-concatenated dimension b has conflicting shapes"):
        concat([x, y], dim="a")
    assert concat([x, y], dim="b").type.shape == (2, 7)
    assert isinstance(concat([x, y], dim="b").owner.op, Concat)


# ------------------------------------------------------------------ squeeze


@pytest.mark.parametrize("mode", C_MODES, ids=C_MODE_IDS)
def test_squeeze_dims_and_axes(mode) -> None:
    x = xtensor("x", dims=("a", "b", "c", "d"), shape=(2, 1, 1, 3))
    outs = {
        "b": squeeze(x, "b"),
        "bc": x.squeeze(["b", "c"]),
        "cb": x.squeeze(["c", "b"]),
        "bb": x.squeeze(["b", "b"]),
        "all": x.squeeze(),
        "axis": x.squeeze(axis=1),
        "negative axis": x.squeeze(axis=-2),
        "axes": x.squeeze(axis=[1, 2]),
        "drop": x.squeeze("c", drop=True),
    }
    expected_axes = {
        "b": (1,),
        "bc": (1, 2),
        "cb": (1, 2),
        "bb": (1,),
        "all": (1, 2),
        "axis": (1,),
        "negative axis": (2,),
        "axes": (1, 2),
        "drop": (2,),
    }
    value = _arange(x.type.shape)
    results = _fn([x], list(outs.values()), mode=mode)(value)
    for (key, out), result in zip(outs.items(), results, strict=True):
        axes = expected_axes[key]
        assert out.type.dims == tuple(d for i, d in enumerate(x.type.dims) if i not in axes)
        np.testing.assert_array_equal(result, np.squeeze(value, axis=axes))
    assert x.squeeze([]) is x
    assert squeeze(xtensor("y", dims=("a",), shape=(None,))).type.dims == ("a",)


def test_squeeze_symbolic_length() -> None:
    x = xtensor("x", dims=("a", "b", "c"), shape=(None, None, 3))
    out = x.squeeze("b")
    assert out.type.dims == ("a", "c")
    assert out.type.shape == (None, 3)
    f = _fn([x], out)
    value = _arange((4, 1, 3))
    np.testing.assert_array_equal(f(value), value[:, 0, :])
    with pytest.raises(Exception):  # noqa: B017 (the backends word the squeeze error)
        f(_arange((4, 2, 3)))


def test_squeeze_errors() -> None:
    x = xtensor("x", dims=("city", "country"), shape=(3, 1))
    with pytest.raises(ValueError, match=r"Dimension time not found in \('city', 'country'\)"):
        x.squeeze("time")
    with pytest.raises(ValueError, match="Dimension city has static size 3, not 1"):
        x.squeeze("city")
    with pytest.raises(ValueError, match="Cannot specify both `dim` and `axis`"):
        x.squeeze("country", axis=1)
    with pytest.raises(IndexError):
        x.squeeze(axis=2)
    assert Squeeze(("b", "a", "b")).dims == ("a", "b")


# ------------------------------------------------------------------ expand_dims


@pytest.mark.parametrize("mode", C_MODES, ids=C_MODE_IDS)
def test_expand_dims_values(mode) -> None:
    x = xtensor("x", dims=("city", "year"), shape=(2, 3))
    value = _arange(x.type.shape)
    n = ot.scalar("n", dtype="int64")
    cases = [
        (x.expand_dims("country"), ("country", "city", "year"), (1, 2, 3)),
        (x.expand_dims(["country", "state"]), ("country", "state", "city", "year"), (1, 1, 2, 3)),
        (
            x.expand_dims({"country": 2, "state": 4}),
            ("country", "state", "city", "year"),
            (2, 4, 2, 3),
        ),
        (x.expand_dims(country=2, state=4), ("country", "state", "city", "year"), (2, 4, 2, 3)),
        (x.expand_dims({"country": n}), ("country", "city", "year"), (None, 2, 3)),
        (expand_dims(x, country=n, state=1), ("country", "state", "city", "year"), (None, 1, 2, 3)),
        (x.expand_dims("country", axis=1), ("city", "country", "year"), (2, 1, 3)),
        (x.expand_dims("country", axis=-1), ("city", "year", "country"), (2, 3, 1)),
        (x.expand_dims(["p", "q"], axis=[1, 2]), ("city", "p", "q", "year"), (2, 1, 1, 3)),
        (x.expand_dims(["p", "q"], axis=[-1, -2]), ("city", "year", "q", "p"), (2, 3, 1, 1)),
        (x.expand_dims(["p", "q"], axis=[-2, 1]), ("city", "q", "p", "year"), (2, 1, 1, 3)),
        (x.expand_dims(["p", "q"], axis=[2, 1]), ("city", "q", "p", "year"), (2, 1, 1, 3)),
        (x.expand_dims({"p": 2}, axis=0), ("p", "city", "year"), (2, 2, 3)),
        (x.expand_dims(), ("city", "year"), (2, 3)),
    ]
    for out, dims, shape in cases:
        assert out.type.dims == dims
        assert out.type.shape == shape
    results = _fn([x, n], [out for out, _, _ in cases], mode=mode)(value, 5)
    for (out, dims, _), result in zip(cases, results, strict=True):
        sizes = {"city": 2, "year": 3, "country": 1, "state": 1, "p": 1, "q": 1}
        sizes.update(
            {d: s for d, s in zip(out.type.dims, out.type.shape, strict=True) if s is not None}
        )
        sizes.update({d: 5 for d, s in zip(dims, out.type.shape, strict=True) if s is None})
        expected = _np_broadcast_to(value, ("city", "year"), dims, sizes)
        np.testing.assert_array_equal(result, expected)


def test_expand_dims_sequence_lengths_warn() -> None:
    x = xtensor("x", dims=("city",), shape=(2,))
    with pytest.warns(UserWarning, match="only its length is used"):
        out = x.expand_dims({"country": np.array([1, 2]), "state": [3, 4, 5]})
    assert out.type.dims == ("country", "state", "city")
    assert out.type.shape == (2, 3, 2)
    value = np.array([1.0, 2.0])
    np.testing.assert_array_equal(_fn([x], out)(value), np.broadcast_to(value, (2, 3, 2)))


def test_expand_dims_errors() -> None:
    x = xtensor("x", dims=("city",), shape=(3,))
    with pytest.raises(ValueError, match=r"Dimension city already exists in \('city',\)"):
        x.expand_dims("city")
    with pytest.raises(TypeError, match="Invalid type for `dim`"):
        x.expand_dims(123)
    with pytest.raises(TypeError, match="Invalid type for `dim`"):
        x.expand_dims(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="Cannot specify both `dim` and `\\*\\*dim_kwargs`"):
        x.expand_dims("a", b=2)
    with pytest.raises(ValueError, match="size must be 0 or positive, got: -1"):
        x.expand_dims(a=-1)
    with pytest.raises(ValueError, match="size should be an integer scalar"):
        x.expand_dims(a=2.0)
    with pytest.raises(ValueError, match="lengths of dim and axis should be identical"):
        x.expand_dims(["a", "b"], axis=1)
    with pytest.raises(ValueError, match="axis should not contain duplicate values"):
        x.expand_dims(["a", "b"], axis=[1, -2])
    with pytest.raises(IndexError, match="Axis 3 is out of bounds"):
        x.expand_dims(["a", "b"], axis=[0, 3])
    with pytest.raises(TypeError, match="`dim` must be a string"):
        ExpandDims(1)  # type: ignore[arg-type]


# ------------------------------------------------------------------ broadcast


def _check_broadcast(xs, values, exclude, outs, mode=None):
    exclude = () if exclude is None else tuple(exclude)
    sizes = {}
    for x, v in zip(xs, values, strict=True):
        for d, n in zip(x.type.dims, v.shape, strict=True):
            if d not in exclude:
                sizes[d] = n
    shared = tuple(sizes)
    results = _fn(xs, list(outs), mode=mode)(*values)
    for x, v, out, result in zip(xs, values, outs, results, strict=True):
        own = tuple(d for d in exclude if d in x.type.dims)
        out_dims = (*shared, *own)
        assert out.type.dims == out_dims
        assert out.type.dtype == x.type.dtype
        own_sizes = dict(sizes, **{d: v.shape[x.type.dims.index(d)] for d in own})
        np.testing.assert_array_equal(result, _np_broadcast_to(v, x.type.dims, out_dims, own_sizes))


@pytest.mark.parametrize(
    "exclude",
    [None, [], ["b"], ["b", "d"], ["a", "d"], ["d", "b"], ["b", "c", "d"], ["a", "b", "c", "d"]],
)
def test_broadcast_with_excluded_dims(exclude) -> None:
    x = xtensor("x", dims=("a", "b"), shape=(3, 4))
    y = xtensor("y", dims=("c", "d"), shape=(5, 6), dtype="int64")
    z = xtensor("z", dims=("b", "d"), shape=(4, 6), dtype="int32")
    values = [_arange(v.type.shape, v.type.dtype) for v in (x, y, z)]
    _check_broadcast([x, y, z], values, exclude, broadcast(x, y, z, exclude=exclude))


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("exclude", [[], ["b"], ["b", "c"], ["a", "b", "d"]])
def test_broadcast_symbolic_lengths(mode, exclude) -> None:
    x = xtensor("x", dims=("a", "b"), shape=(None, 4))
    y = xtensor("y", dims=("c", "d"), shape=(5, None))
    z = xtensor("z", dims=("b", "d"), shape=(None, None))
    values = [_arange((3, 4)), _arange((5, 6)), _arange((4, 6))]
    _check_broadcast([x, y, z], values, exclude, broadcast(x, y, z, exclude=exclude), mode)


def test_broadcast_excluded_lengths_may_differ() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(3, 4))
    z = xtensor("z", dims=("b", "d"), shape=(4, 7))
    y = xtensor("y", dims=("c", "d"), shape=(5, 6))
    values = [_arange(v.type.shape) for v in (x, y, z)]
    _check_broadcast([x, y, z], values, ["d"], broadcast(x, y, z, exclude="d"))


def test_broadcast_excluded_dims_follow_exclude_order() -> None:
    x = xtensor("x", dims=("a", "c", "b"), shape=(3, 4, 5))
    y = xtensor("y", dims=("a", "b", "c"), shape=(3, 5, 4))
    out_x, out_y = broadcast(x, y, exclude=["c", "b"])
    assert out_x.type.dims == out_y.type.dims == ("a", "c", "b")
    values = [_arange(x.type.shape), _arange(y.type.shape)]
    _check_broadcast([x, y], values, ["c", "b"], [out_x, out_y])


def test_broadcast_single_and_no_input() -> None:
    assert broadcast() == ()
    assert broadcast(exclude=("a",)) == ()
    x = xtensor("x", dims=("a", "b"), shape=(3, 4))
    [same] = broadcast(x)
    [moved] = broadcast(x, exclude=("b", "a"))
    assert same.type.dims == ("a", "b")
    assert moved.type.dims == ("b", "a")
    value = _arange(x.type.shape)
    result_same, result_moved = _fn([x], [same, moved])(value)
    np.testing.assert_array_equal(result_same, value)
    np.testing.assert_array_equal(result_moved, value.T)


def test_broadcast_errors() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(3, 4))
    z = xtensor("z", dims=("b", "d"), shape=(5, 6))
    with pytest.raises(TypeError, match="exclude must be None, str, or Sequence"):
        broadcast(x, z, exclude=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Dimension b has conflicting shapes"):
        broadcast(x, z)
    assert [o.type.dims for o in broadcast(x, z, exclude="b")] == [("a", "d", "b")] * 2


def test_broadcast_runtime_length_mismatch() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(None, None))
    y = xtensor("y", dims=("b", "c"), shape=(None, None))
    f = _fn([x, y], broadcast(x, y, exclude="c"))
    with pytest.raises(Exception):  # noqa: B017 (the backends word the shape error)
        f(_arange((2, 3)), _arange((4, 5)))


@pytest.mark.parametrize("exclude", [None, ["b"], ["b", "c"]])
def test_broadcast_like(exclude) -> None:
    x = xtensor("x", dims=("a", "b"), shape=(3, 4))
    y = xtensor("y", dims=("c", "d"), shape=(5, 6))
    z = xtensor("z", dims=("b", "d"), shape=(4, 6))
    xs = {"x": x, "y": y, "z": z}
    values = {name: _arange(v.type.shape) for name, v in xs.items()}
    pairs = [("x", "y"), ("y", "x"), ("y", "z"), ("z", "y")]
    outs = [xs[a].broadcast_like(xs[b], exclude=exclude) for a, b in pairs]
    outs.append(broadcast_like(x, z, exclude=exclude))
    results = _fn(list(xs.values()), outs)(*values.values())
    excluded = () if exclude is None else tuple(exclude)
    for (a, b), out, result in zip([*pairs, ("x", "z")], outs, results, strict=True):
        xa, xb = xs[a], xs[b]
        shared = [d for d in (*xb.type.dims, *xa.type.dims) if d not in excluded]
        out_dims = (
            *dict.fromkeys(shared),
            *(d for d in excluded if d in xa.type.dims),
        )
        assert out.type.dims == out_dims
        sizes = {"a": 3, "b": 4, "c": 5, "d": 6}
        expected = _np_broadcast_to(values[a], xa.type.dims, out_dims, sizes)
        np.testing.assert_array_equal(result, expected)


def test_broadcast_op_props() -> None:
    x = xtensor("x", dims=("a",), shape=(3,))
    [out] = broadcast(x, exclude=["a"])
    assert isinstance(out.owner.op, Broadcast)
    assert out.owner.op.exclude == ("a",)
    assert Broadcast(["a"]) == Broadcast(("a",))


# ------------------------------------------------------------------ full_like and co


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_full_like_values_and_dtypes(mode) -> None:
    x = xtensor("x", dims=("a", "b"), shape=(2, 3), dtype="float64")
    x32 = xtensor("x32", dims=("a", "b", "c"), shape=(2, 3, 4), dtype="float32")
    xi = xtensor("xi", dims=("a", "b"), shape=(2, 3), dtype="int32")
    xs = xtensor("xs", dims=("a", "b"), shape=(None, 3))
    xb = xtensor("xb", dims=("a", "b"), shape=(2, 3), dtype="bool")
    xc = xtensor("xc", dims=("a", "b"), shape=(2, 3), dtype="complex64")
    fill = xtensor("fill", dims=(), shape=(), dtype="float64")
    cases = [
        (full_like(x, 5.0), x, np.full((2, 3), 5.0)),
        (full_like(x32, -1.0), x32, np.full((2, 3, 4), -1.0, dtype="float32")),
        (full_like(x, 5.7, dtype="int32"), x, np.full((2, 3), 5.7).astype("int32")),
        (full_like(x, np.array(3.14)), x, np.full((2, 3), 3.14)),
        (full_like(xi, 2.5), xi, np.full((2, 3), 2.5).astype("int32")),
        (full_like(xs, 7.0), xs, np.full((4, 3), 7.0)),
        (full_like(xb, True), xb, np.full((2, 3), True)),
        (full_like(xc, 1 + 2j), xc, np.full((2, 3), 1 + 2j, dtype="complex64")),
        (full_like(x, fill), x, np.full((2, 3), 0.25)),
        (full_like(x32, fill), x32, np.full((2, 3, 4), 0.25, dtype="float32")),
        (full_like(x, 5.0, dtype="bool"), x, np.full((2, 3), True)),
        (full_like(x, ot.as_tensor(np.int8(3))), x, np.full((2, 3), 3.0)),
        (ones_like(xi), xi, np.ones((2, 3), dtype="int32")),
        (ones_like(x, dtype="float32"), x, np.ones((2, 3), dtype="float32")),
        (zeros_like(x32), x32, np.zeros((2, 3, 4), dtype="float32")),
        (zeros_like(xb), xb, np.zeros((2, 3), dtype="bool")),
    ]
    inputs = [x, x32, xi, xs, xb, xc, fill]
    values = [
        _arange((2, 3)),
        _arange((2, 3, 4), "float32"),
        _arange((2, 3), "int32"),
        _arange((4, 3)),
        np.array([[True, False, True], [False, True, False]]),
        _arange((2, 3), "complex64"),
        np.array(0.25),
    ]
    f = opweave.function(inputs, [out for out, _, _ in cases], mode=mode, on_unused_input="ignore")
    assert not [node for node in f.maker.fgraph.toposort() if isinstance(node.op, XOp)]
    results = f(*values)
    for (out, like, expected), result in zip(cases, results, strict=True):
        assert out.type.dims == like.type.dims
        assert out.type.shape == like.type.shape
        assert out.type.dtype == expected.dtype.name
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result, expected)


def test_full_like_errors() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    with pytest.raises(ValueError, match="fill_value must be a scalar, got ndim=2"):
        full_like(x, np.ones((2, 3)))
    with pytest.raises(ValueError, match="fill_value must be a scalar, got ndim=2"):
        full_like(x, x)
    with pytest.raises(ValueError, match="fill_value must be a scalar, got ndim=1"):
        full_like(x, ot.vector("v"))


def test_full_like_of_a_constant() -> None:
    c = as_xtensor(np.arange(6.0).reshape(2, 3), dims=("a", "b"))
    out = zeros_like(c)
    np.testing.assert_array_equal(_fn([], out)(), np.zeros((2, 3)))


# ------------------------------------------------------------------ vectorize_node


def test_vectorize_node_adds_batch_dims() -> None:
    x = xtensor("x", dims=("a", "b", "c"), shape=(2, 3, 5))
    bx = xtensor("bx", dims=("batch", "a", "b", "c"), shape=(4, 2, 3, 5))
    outs = [
        x.transpose("c", "a", "b"),
        stack(x, ac=("a", "c")),
        unstack(stack(x, bc=("b", "c")), bc={"b": 3, "c": 5}),
        x.expand_dims(d=2),
        concat([x, x], dim="a"),
        x.expand_dims("one").squeeze("one"),
    ]

    def vectorized(var):
        if var is x:
            return bx
        if var.owner is None:
            return var
        node = var.owner
        new_inputs = [vectorized(inp) for inp in node.inputs]
        new_outputs = node.op.vectorize_node(node, *new_inputs, new_dim="batch")
        return new_outputs[node.outputs.index(var)]

    batched = []
    for out in outs:
        new_out = vectorized(out)
        assert sorted(new_out.type.dims) == sorted(("batch", *out.type.dims))
        batched.append(transpose(new_out, "batch", *out.type.dims))
    value = _arange(bx.type.shape)
    f_batched = _fn([bx], batched)
    f_single = _fn([x], outs)
    for result, *per_item in zip(
        f_batched(value), *(f_single(value[i]) for i in range(4)), strict=True
    ):
        np.testing.assert_array_equal(result, np.stack(per_item))


def test_vectorize_node_refusals() -> None:
    x = xtensor("x", dims=("a",), shape=(3,))
    n = ot.scalar("n", dtype="int64")
    out = x.expand_dims(b=n)
    with pytest.raises(NotImplementedError, match=r"Vectorization of .* not implemented"):
        out.owner.op.vectorize_node(out.owner, x, ot.vector("nb", dtype="int64"), new_dim="k")
    y = xtensor("y", dims=("a", "b"), shape=(3, 4))
    by = xtensor("by", dims=("a", "b", "c"), shape=(3, 4, 2))
    [bcast] = broadcast(y, exclude="c")
    with pytest.raises(NotImplementedError, match="excluded dimension"):
        bcast.owner.op.vectorize_node(bcast.owner, by, new_dim="c")
