"""Named-dimension graphs (``opweave.xtensor``) on every linker: ``py``, ``vm``, ``c`` (where
the lowered graph has C code), ``cvm``, ``jax`` (when importable) and ``dask`` give NumPy's
values, dtype, shape and dims.

The xtensor Ops are lowered to tensor Ops before linking, so these cases check the
lowerings (alignment by name, broadcasting of missing dims, the order of the result's
dims) together with the backends' kernels. Each case's expected value is computed with
NumPy by hand: explicit transposes, ``None`` axes, ``np.sum`` and fancy indexing on the
positional arrays. Every case runs on its inputs as given, in Fortran order and as
reversed strided views. Shape, indexing and exact arithmetic compare bit for bit (signed
zeros included); transcendental functions and reductions to a relative tolerance.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from differential.runner import refused, usable_linkers

import opweave
import opweave.xtensor as px
from opweave.link.lookup import available_linkers
from opweave.xtensor import math as pxm
from opweave.xtensor import shape as pxs
from opweave.xtensor.basic import XOp
from opweave.xtensor.type import XTensorType

#: The linkers compared: the differential harness's, and ``dask`` where installed.
LINKERS: tuple[str, ...] = usable_linkers() + tuple(
    name for name in ("dask",) if name in available_linkers()
)

#: The memory layouts every case's inputs are passed in.
LAYOUTS: tuple[str, ...] = ("given", "fortran", "strided")


@dataclass(frozen=True)
class In:
    """An xtensor input: its dims, dtype and (optional) static shape."""

    dims: tuple[str, ...]
    dtype: str
    shape: tuple[int | None, ...] | None = None


@dataclass
class XCase:
    """A graph of xtensor inputs ``ins`` (``build``), its argument values, the NumPy
    reference (``ref`` of the positional arrays) and the dims of the result (``None``: a
    tensor result). ``rtol`` 0 compares bit for bit."""

    name: str
    ins: tuple[In, ...]
    build: Callable[..., Any]
    values: Callable[[], list[np.ndarray]]
    ref: Callable[..., np.ndarray]
    dims: tuple[str, ...] | None
    rtol: float = 0.0
    layouts: tuple[str, ...] = field(default=LAYOUTS)


def _edge(shape: tuple[int, ...], dtype: str, start: int = 0) -> np.ndarray:
    """Values of ``shape`` cycling through ordinary numbers, NaN, both infinities and both
    zeros (from position ``start`` of the cycle)."""
    pool = np.array([1.5, np.nan, -2.25, np.inf, -0.0, 0.0, -np.inf, 3.0, -1.0, 0.5, 7.0])
    n = int(np.prod(shape))
    return np.resize(np.roll(pool, -start), n).reshape(shape).astype(dtype)


def _plain(shape: tuple[int, ...], dtype: str, scale: float = 1.0) -> np.ndarray:
    n = int(np.prod(shape))
    return (((np.arange(n) * 7) % 11 - 5) * scale).reshape(shape).astype(dtype)


def _ints(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


def _int_extremes(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    minus_one = -1 if info.min < 0 else info.max // 2
    pool = np.array([info.max, info.min, minus_one, 0, 1, info.max - 1, info.min + 1], dtype=dtype)
    return np.resize(pool, int(np.prod(shape))).reshape(shape)


ABC = In(("a", "b", "c"), "float64")
AB = In(("a", "b"), "float64")

ELEMWISE = [
    XCase(
        "float64_plus_int32_other_order",
        (AB, In(("c", "a"), "int32")),
        lambda x, y: x + y,
        lambda: [_edge((3, 4), "float64"), _int_extremes((2, 3), "int32")],
        lambda x, y: x[:, :, None] + y.T[:, None, :],
        ("a", "b", "c"),
    ),
    XCase(
        "float32_times_float64_missing_dim",
        (In(("b", "a"), "float32"), In(("a",), "float64")),
        lambda x, y: x * y,
        lambda: [_edge((4, 3), "float32", 2), _edge((3,), "float64", 4)],
        lambda x, y: x * y[None, :],
        ("b", "a"),
    ),
    XCase(
        "outer_difference_by_name",
        (In(("a",), "float64"), In(("b",), "float64")),
        lambda x, y: x - y,
        lambda: [_edge((3,), "float64", 3), _edge((4,), "float64", 5)],
        lambda x, y: x[:, None] - y[None, :],
        ("a", "b"),
    ),
    XCase(
        "int8_plus_float32",
        (In(("b",), "int8"), In(("a", "b"), "float32")),
        lambda x, y: x + y,
        lambda: [_int_extremes((4,), "int8"), _edge((3, 4), "float32", 1)],
        lambda x, y: x[:, None] + y.T,
        ("b", "a"),
    ),
    XCase(
        "int64_plus_float32",
        (In(("a",), "int64"), In(("a", "b"), "float32")),
        lambda x, y: x + y,
        lambda: [_int_extremes((3,), "int64"), _edge((3, 4), "float32", 2)],
        lambda x, y: x[:, None] + y,
        ("a", "b"),
    ),
    XCase(
        "uint8_minus_int8",
        (In(("b",), "uint8"), In(("a",), "int8")),
        lambda x, y: x - y,
        lambda: [_int_extremes((4,), "uint8"), _int_extremes((3,), "int8")],
        lambda x, y: x[:, None] - y[None, :],
        ("b", "a"),
    ),
    XCase(
        "int8_wraps_around",
        (In(("a",), "int8"), In(("b",), "int8")),
        lambda x, y: x + y,
        lambda: [_int_extremes((5,), "int8"), _int_extremes((3,), "int8")[::-1].copy()],
        lambda x, y: x[:, None] + y[None, :],
        ("a", "b"),
    ),
    XCase(
        "division_signed_zeros_and_infinities",
        (AB, In(("b", "a"), "float64")),
        lambda x, y: pxm.true_div(x, y),
        lambda: [_edge((3, 4), "float64"), _edge((4, 3), "float64", 4)],
        lambda x, y: x / y.T,
        ("a", "b"),
    ),
    XCase(
        "maximum_with_nan",
        (In(("b",), "float32"), In(("a", "b"), "float64")),
        lambda x, y: pxm.maximum(x, y),
        lambda: [_edge((4,), "float32", 1), _edge((3, 4), "float64", 3)],
        lambda x, y: np.maximum(x[:, None], y.T),
        ("b", "a"),
    ),
    XCase(
        "exp_log_sqrt_abs",
        (ABC,),
        lambda x: pxm.add(pxm.exp(x), pxm.mul(pxm.log(pxm.abs(x)), pxm.sqrt(pxm.abs(x)))),
        lambda: [_edge((3, 4, 2), "float64")],
        lambda x: np.exp(x) + np.log(np.abs(x)) * np.sqrt(np.abs(x)),
        ("a", "b", "c"),
        rtol=1e-14,
    ),
    XCase(
        "where_by_name",
        (In(("a",), "float64"), In(("b", "a"), "float32"), In(("b",), "float64")),
        lambda c, x, y: pxm.where(c > 0, x, y),
        lambda: [_edge((3,), "float64", 7), _edge((4, 3), "float32", 2), _edge((4,), "float64")],
        lambda c, x, y: np.where(c[:, None] > 0, x.T, y[None, :]),
        ("a", "b"),
    ),
]

EMPTY = In(("a", "e"), "float64")
_REDUCE_DIMS: list[tuple[str, Any, Any]] = [
    ("a", "a", 0),
    ("a_c", ("a", "c"), (0, 2)),
    ("all", None, None),
]


def _reduction(name: str, fn: str, np_fn: Callable[..., Any], rtol: float, **kw: Any) -> list:
    cases = []
    for label, dim, axis in _REDUCE_DIMS:
        kept = () if dim is None else tuple(d for d in "abc" if d not in dim)
        cases.append(
            XCase(
                f"{name}_over_{label}",
                (ABC,),
                lambda x, fn=fn, dim=dim: getattr(x, fn)(dim, **kw),
                lambda: [_edge((3, 4, 2), "float64")],
                lambda x, np_fn=np_fn, axis=axis: np.asarray(np_fn(x, axis=axis)),
                kept,
                rtol=rtol,
            )
        )
    cases.append(
        XCase(
            f"{name}_over_empty_dim",
            (EMPTY,),
            lambda x, fn=fn: getattr(x, fn)("e", **kw),
            lambda: [np.zeros((3, 0))],
            lambda x, np_fn=np_fn: np.asarray(np_fn(x, axis=1)),
            ("a",),
        )
    )
    cases.append(
        XCase(
            f"{name}_along_a_of_empty",
            (EMPTY,),
            lambda x, fn=fn: getattr(x, fn)("a", **kw),
            lambda: [np.zeros((3, 0))],
            lambda x, np_fn=np_fn: np.asarray(np_fn(x, axis=0)),
            ("e",),
        )
    )
    return cases


REDUCTIONS = [
    *_reduction("sum", "sum", np.sum, 1e-14),
    *_reduction("prod", "prod", np.prod, 1e-14),
    *_reduction("mean", "mean", np.mean, 1e-14),
    *[c for c in _reduction("max", "max", np.max, 0) if "empty" not in c.name],
    *[c for c in _reduction("min", "min", np.min, 0) if "empty" not in c.name],
    *_reduction("var", "var", np.var, 1e-12),
    *_reduction("std", "std", np.std, 1e-12),
    *_reduction("std_ddof1", "std", functools.partial(np.std, ddof=1), 1e-12, ddof=1),
    XCase(
        "var_finite_over_b_and_a",
        (ABC,),
        lambda x: x.var(("b", "a")),
        lambda: [_plain((3, 4, 2), "float64", 0.37)],
        lambda x: np.var(x, axis=(0, 1)),
        ("c",),
        rtol=1e-12,
    ),
    XCase(
        "sum_int32_extremes",
        (In(("a", "b"), "int32"),),
        lambda x: x.sum("b"),
        lambda: [_int_extremes((3, 4), "int32")],
        lambda x: np.sum(x, axis=1),
        ("a",),
    ),
    XCase(
        "max_int8_extremes_all",
        (In(("a", "b"), "int8"),),
        lambda x: x.max(),
        lambda: [_int_extremes((3, 4), "int8")],
        lambda x: np.asarray(np.max(x)),
        (),
    ),
    XCase(
        "mean_float32",
        (In(("a", "b"), "float32"),),
        lambda x: x.mean("a"),
        lambda: [_plain((3, 4), "float32", 0.1)],
        lambda x: np.mean(x, axis=0),
        ("b",),
        rtol=1e-6,
    ),
    XCase(
        "var_float32",
        (In(("a", "b"), "float32"),),
        lambda x: x.var("b"),
        lambda: [_plain((3, 4), "float32", 0.1)],
        lambda x: np.var(x, axis=1),
        ("a",),
        rtol=1e-6,
    ),
    XCase(
        "var_ddof_beyond_length",
        (In(("a", "b"), "float64"),),
        lambda x: x.var("b", ddof=5),
        lambda: [np.array([[1.0, 2.0, 4.0], [0.0, 0.0, 0.0]])],
        lambda x: np.var(x, axis=1, ddof=5),
        ("a",),
    ),
    XCase(
        "sum_prod_int8",
        (In(("a", "b"), "int8"),),
        lambda x: x.sum("a") + x.prod("a"),
        lambda: [_int_extremes((3, 4), "int8")],
        lambda x: np.sum(x, axis=0) + np.prod(x, axis=0),
        ("b",),
    ),
]

SHAPES = [
    XCase(
        "transpose_named",
        (ABC,),
        lambda x: x.transpose("c", "a", "b"),
        lambda: [_edge((3, 4, 2), "float64")],
        lambda x: x.transpose(2, 0, 1),
        ("c", "a", "b"),
    ),
    XCase(
        "transpose_with_ellipsis",
        (ABC,),
        lambda x: x.transpose("c", ...),
        lambda: [_edge((3, 4, 2), "float64")],
        lambda x: x.transpose(2, 0, 1),
        ("c", "a", "b"),
    ),
    XCase(
        "stack_in_given_order",
        (ABC,),
        lambda x: pxs.stack(x, s=("c", "a")),
        lambda: [_edge((3, 4, 2), "float64")],
        lambda x: x.transpose(1, 2, 0).reshape(4, 6),
        ("b", "s"),
    ),
    XCase(
        "unstack",
        (In(("a", "s"), "float64"),),
        lambda x: pxs.unstack(x, s={"p": 2, "q": 3}),
        lambda: [_edge((4, 6), "float64")],
        lambda x: x.reshape(4, 2, 3),
        ("a", "p", "q"),
    ),
    XCase(
        "stack_unstack_round_trip",
        (ABC,),
        lambda x: pxs.unstack(pxs.stack(x, s=("a", "b")), s={"a": 3, "b": 4}),
        lambda: [_edge((3, 4, 2), "float64")],
        lambda x: x.transpose(2, 0, 1),
        ("c", "a", "b"),
    ),
    XCase(
        "concat_other_order_and_dtype",
        (AB, In(("b", "a"), "float32")),
        lambda x, y: px.concat([x, y], dim="a"),
        lambda: [_edge((3, 4), "float64"), _edge((4, 2), "float32", 3)],
        lambda x, y: np.concatenate([x, y.T.astype("float64")], axis=0),
        ("a", "b"),
    ),
    XCase(
        "concat_empty_part",
        (AB, AB),
        lambda x, y: px.concat([x, y], dim="b"),
        lambda: [_edge((3, 0), "float64"), _edge((3, 2), "float64", 1)],
        lambda x, y: np.concatenate([x, y], axis=1),
        ("a", "b"),
    ),
    XCase(
        "expand_dims_front",
        (AB,),
        lambda x: pxs.expand_dims(x, "n"),
        lambda: [_edge((3, 4), "float64")],
        lambda x: x[None],
        ("n", "a", "b"),
    ),
    XCase(
        "expand_dims_at_result_positions",
        (AB,),
        lambda x: pxs.expand_dims(x, ["n", "m"], axis=[2, 1]),
        lambda: [_edge((3, 4), "float64")],
        lambda x: x[:, None, None, :],
        ("a", "m", "n", "b"),
    ),
    XCase(
        "expand_dims_with_length",
        (AB,),
        lambda x: pxs.expand_dims(x, {"n": 3}),
        lambda: [_edge((3, 4), "float64")],
        lambda x: np.broadcast_to(x[None], (3, 3, 4)),
        ("n", "a", "b"),
    ),
    XCase(
        "squeeze_named",
        (In(("a", "o", "b"), "float64", (None, 1, None)),),
        lambda x: pxs.squeeze(x, "o"),
        lambda: [_edge((3, 1, 4), "float64")],
        lambda x: x[:, 0, :],
        ("a", "b"),
    ),
]

IDX = In(("p",), "int64")
INDEXING = [
    XCase(
        "integer",
        (ABC,),
        lambda x: x.isel(a=1, c=-1),
        lambda: [_edge((3, 4, 2), "float64")],
        lambda x: x[1, :, -1],
        ("b",),
    ),
    XCase(
        "negative_step_slices",
        (ABC,),
        lambda x: x.isel(a=slice(None, None, -1), b=slice(3, 0, -2)),
        lambda: [_edge((3, 4, 2), "float64")],
        lambda x: x[::-1, 3:0:-2],
        ("a", "b", "c"),
    ),
    XCase(
        "positional_getitem",
        (ABC,),
        lambda x: x[-1, ::-3],
        lambda: [_edge((3, 4, 2), "float64")],
        lambda x: x[-1, ::-3],
        ("b", "c"),
    ),
    XCase(
        "integer_list",
        (ABC,),
        lambda x: x.isel(b=[3, 0, 3, -1]),
        lambda: [_edge((3, 4, 2), "float64")],
        lambda x: x[:, [3, 0, 3, -1], :],
        ("a", "b", "c"),
    ),
    XCase(
        "tensor_index_vector",
        (ABC, In(("b",), "int64")),
        lambda x, i: x.isel(c=i.values),
        lambda: [_edge((3, 4, 2), "float64"), _ints(1, 1, -2, 0, 1)],
        lambda x, i: x[:, :, i],
        ("a", "b", "c"),
        layouts=("given", "strided"),
    ),
    XCase(
        "pointwise_adjacent",
        (ABC, IDX, IDX),
        lambda x, i, j: x.isel(a=i, b=j),
        lambda: [_edge((3, 4, 2), "float64"), _ints(0, 2, 2, -1), _ints(3, 0, -4, 1)],
        lambda x, i, j: x[i, j, :],
        ("p", "c"),
    ),
    XCase(
        "pointwise_not_adjacent",
        (ABC, IDX, IDX),
        lambda x, i, k: x.isel(a=i, c=k),
        lambda: [_edge((3, 4, 2), "float64"), _ints(0, 2, 2, -1), _ints(1, 0, -1, 1)],
        lambda x, i, k: np.moveaxis(x[i, :, k], 0, 0),
        ("p", "b"),
    ),
    XCase(
        "orthogonal",
        (ABC, IDX, In(("q",), "int64")),
        lambda x, i, k: x.isel(a=i, b=k),
        lambda: [_edge((3, 4, 2), "float64"), _ints(2, 0, 2), _ints(-1, 1)],
        lambda x, i, k: x[np.ix_(i, k)],
        ("p", "q", "c"),
    ),
    XCase(
        "index_vector_with_other_dims",
        (ABC, In(("q", "p"), "int64")),
        lambda x, i: x.isel(b=i),
        lambda: [_edge((3, 4, 2), "float64"), np.array([[0, 3, 3], [1, -1, 0]])],
        lambda x, i: x[:, i, :],
        ("a", "q", "p", "c"),
    ),
    XCase(
        "empty_index_vector",
        (ABC, IDX),
        lambda x, i: x.isel(b=i),
        lambda: [_edge((3, 4, 2), "float64"), _ints()],
        lambda x, i: x[:, i, :].transpose(0, 1, 2),
        ("a", "p", "c"),
    ),
    XCase(
        "set_repeated_indices",
        (AB, IDX, In(("b", "p"), "float64")),
        lambda x, i, y: x.isel(a=i).set(y),
        lambda: [_edge((3, 4), "float64"), _ints(2, 0, 2, -1), _plain((4, 4), "float64", 0.5)],
        lambda x, i, y: _numpy_set(x, i, y.T),
        ("a", "b"),
    ),
    XCase(
        "set_repeated_indices_same_value",
        (AB, IDX),
        lambda x, i: x.isel(b=i).set(-0.0),
        lambda: [_edge((3, 4), "float64"), _ints(1, 1, -1, 1)],
        lambda x, i: _numpy_set(x.T, i, -0.0).T,
        ("a", "b"),
    ),
    XCase(
        "inc_repeated_indices",
        (AB, IDX, In(("b", "p"), "float64")),
        lambda x, i, y: x.isel(a=i).inc(y),
        lambda: [_edge((3, 4), "float64"), _ints(2, 0, 2, -1), _plain((4, 4), "float64", 0.5)],
        lambda x, i, y: _numpy_add_at(x, i, y.T),
        ("a", "b"),
    ),
    XCase(
        "inc_pointwise_repeated",
        (ABC, IDX, IDX, In(("p",), "float32")),
        lambda x, i, k, y: x.isel(a=i, c=k).inc(y),
        lambda: [
            _plain((3, 4, 2), "float64"),
            _ints(0, 2, 0, 0),
            _ints(1, 0, 1, -1),
            _edge((4,), "float32", 2),
        ],
        lambda x, i, k, y: _numpy_add_at(
            x.transpose(0, 2, 1), (i, k), np.broadcast_to(y[:, None], (4, 4)).astype("float64")
        ).transpose(0, 2, 1),
        ("a", "b", "c"),
    ),
    XCase(
        "inc_negative_step_slice",
        (AB, In(("b",), "float64")),
        lambda x, y: x[::-2].inc(y),
        lambda: [_edge((3, 4), "float64"), _edge((4,), "float64", 5)],
        lambda x, y: _numpy_inc_slice(x, y),
        ("a", "b"),
    ),
]


def _numpy_set(x: np.ndarray, i: Any, y: Any) -> np.ndarray:
    out = x.copy()
    out[i] = y
    return out


def _numpy_add_at(x: np.ndarray, i: Any, y: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.add.at(out, i, y)
    return out


def _numpy_inc_slice(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = x.copy()
    out[::-2] += y[None, :]
    return out


GROUPS: dict[str, list[XCase]] = {
    "elemwise": ELEMWISE,
    "reduction": REDUCTIONS,
    "shape": SHAPES,
    "indexing": INDEXING,
}
CASES: dict[str, XCase] = {case.name: case for cases in GROUPS.values() for case in cases}
assert len(CASES) == sum(len(cases) for cases in GROUPS.values()), "case names repeat"


def _layout(a: np.ndarray, layout: str) -> np.ndarray:
    """``a`` in ``layout``: as given, in Fortran order, or a reversed strided view."""
    if layout == "fortran":
        return np.asfortranarray(a)
    if layout == "strided":
        big = np.zeros(tuple(2 * n + 1 for n in a.shape), dtype=a.dtype)
        view = big[tuple(slice(2 * n - 1 if n else 0, None, -2) for n in a.shape)]
        view = view[tuple(slice(0, n) for n in a.shape)]
        view[...] = a
        return view
    return a


def _variables(case: XCase) -> list[Any]:
    return [
        px.xtensor(f"{case.name}_{n}", dims=spec.dims, dtype=spec.dtype, shape=spec.shape)
        for n, spec in enumerate(case.ins)
    ]


@dataclass
class Outcome:
    """A case's results on one linker, per layout, or the error compiling or running it."""

    results: dict[str, np.ndarray] = field(default_factory=dict)
    error: BaseException | None = None
    dims: tuple[str, ...] | None = None


def _run(cases: Sequence[XCase], linker: str) -> dict[str, Outcome]:
    """Compile ``cases`` together on ``linker`` and call the function once per layout; a
    failure is narrowed to single cases, so one case's error hides no other's values."""
    parts = [(case, _variables(case)) for case in cases]
    outs = [case.build(*ins) for case, ins in parts]
    found: dict[str, Outcome] = {}
    for (case, _), out in zip(parts, outs, strict=True):
        found[case.name] = Outcome(
            dims=out.type.dims if isinstance(out.type, XTensorType) else None
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn = opweave.function(
                [v for _, ins in parts for v in ins], outs, mode=opweave.Mode(linker=linker)
            )
        for layout in LAYOUTS:
            args: list[np.ndarray] = []
            for case, _ in parts:
                args.extend(_layout(a, layout) for a in case.values())
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = fn(*args)
            for (case, _), value in zip(parts, got, strict=True):
                found[case.name].results[layout] = np.asarray(value).copy()
    except Exception as exc:
        if len(parts) == 1:
            found[parts[0][0].name].error = exc
            return found
        for case, _ in parts:
            found.update(_run([case], linker))
    return found


@functools.cache
def _outcomes(group: str, linker: str) -> dict[str, Outcome]:
    return _run(GROUPS[group], linker)


def _expected(case: XCase, layout: str) -> np.ndarray:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(case.ref(*case.values()))


def _mismatch(got: np.ndarray, want: np.ndarray, rtol: float) -> str | None:
    """How ``got`` differs from ``want`` (dtype, shape, values), or ``None``."""
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != NumPy's {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != NumPy's {want.shape}"
    with np.errstate(invalid="ignore"):
        bad = _differs(got, want, rtol)
    if not bad.any():
        return None
    at = np.argwhere(bad)[:4]
    shown = ", ".join(f"{tuple(p)}: {got[tuple(p)]!r} vs {want[tuple(p)]!r}" for p in at)
    return f"{int(bad.sum())} values differ ({shown})"


def _differs(got: np.ndarray, want: np.ndarray, rtol: float) -> np.ndarray:
    """Where ``got`` and ``want`` (of one dtype and shape) differ: in any bit (NaNs
    alike) for ``rtol`` 0, else by more than ``rtol`` relative to ``max(|want|, 1)``."""
    if got.dtype.kind in "biu":
        bad = got != want
    elif rtol == 0:
        same_bits = got.view(f"u{got.dtype.itemsize}") == want.view(f"u{want.dtype.itemsize}")
        bad = ~(same_bits | (np.isnan(got) & np.isnan(want)))
    else:
        finite = np.isfinite(want) & np.isfinite(got)
        close = np.abs(got - want) <= rtol * np.maximum(np.abs(want), 1.0)
        exact = (got == want) | (np.isnan(got) & np.isnan(want))
        bad = ~np.where(finite, close, exact)
    return np.asarray(bad, dtype=bool)


def _group_of(name: str) -> str:
    return next(group for group, cases in GROUPS.items() if any(c.name == name for c in cases))


@pytest.mark.parametrize("name", list(CASES))
def test_xtensor_graph_gives_numpys_values_on_every_linker(name: str) -> None:
    case = CASES[name]
    group = _group_of(name)
    problems = []
    compared = 0
    for linker in LINKERS:
        outcome = _outcomes(group, linker)[name]
        if outcome.dims != case.dims:
            problems.append(f"{linker}: dims {outcome.dims} != {case.dims}")
        if outcome.error is not None:
            if not refused(linker, outcome.error):
                problems.append(f"{linker}: {type(outcome.error).__name__}: {outcome.error}")
            continue
        for layout in case.layouts:
            problem = _mismatch(outcome.results[layout], _expected(case, layout), case.rtol)
            compared += 1
            if problem:
                problems.append(f"{linker}, {layout} inputs: {problem}")
    assert not problems, "\n".join(problems)
    assert compared >= 2 * len(case.layouts)


def test_only_casts_of_the_xtensor_layer_reach_the_linker() -> None:
    x: Any = px.xtensor("x", dims=("a", "b"))
    i = px.xtensor("i", dims=("p",), dtype="int64")
    out = (x.isel(a=i).inc(1.0) + x.transpose("b", "a").sum("b")).mean("a")
    fn = opweave.function([x, i], out, mode=opweave.Mode(linker="py"))
    kept = [type(node.op).__name__ for node in fn.maker.fgraph.toposort()]
    assert not any(isinstance(node.op, XOp) for node in fn.maker.fgraph.toposort()), kept


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_and_min_over_an_empty_dim_raise_numpys_error_on_every_linker(fn: str) -> None:
    x = px.xtensor("x", dims=("a", "e"))
    out = getattr(x, fn)("e")
    with pytest.raises(ValueError, match="zero-size array"):
        getattr(np, fn)(np.zeros((3, 0)), axis=1)
    for linker in LINKERS:
        f = opweave.function([x], out, mode=opweave.Mode(linker=linker))
        with pytest.raises(ValueError, match="zero-size array to reduction operation"):
            f(np.zeros((3, 0)))
