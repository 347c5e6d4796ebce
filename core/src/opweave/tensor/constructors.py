"""Making tensor variables: ``scalar``/``vector``/``matrix``/... and their typed shortcuts,
``constant`` and ``as_tensor_variable``.

The typed shortcuts follow PyTensor: ``dmatrix`` is the Type
``TensorType("float64", shape=(None, None))``, and ``dmatrix("x")`` makes a variable
of it. The prefixes are ``b`` int8, ``w`` int16, ``i`` int32, ``l`` int64, ``f``
float32, ``d`` float64, ``c`` complex64, ``z`` complex128 (and, for scalars only,
``ub``/``uw``/``ui``/``ul`` for the unsigned ints). The plural forms
(``dmatrices("a", "b")`` or ``dmatrices(3)``) return a list of variables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Variable
from opweave.tensor.type import TensorType, all_dtypes
from opweave.tensor.variable import TensorConstant, TensorVariable

__all__ = [
    "as_tensor",
    "as_tensor_variable",
    "bcol",
    "bmatrix",
    "brow",
    "bscalar",
    "btensor3",
    "btensor4",
    "btensor5",
    "btensor6",
    "btensor7",
    "bvector",
    "ccol",
    "cmatrix",
    "col",
    "cols",
    "complex_matrix_types",
    "complex_scalar_types",
    "complex_types",
    "complex_vector_types",
    "constant",
    "crow",
    "cscalar",
    "ctensor3",
    "ctensor4",
    "ctensor5",
    "ctensor6",
    "ctensor7",
    "cvector",
    "dcol",
    "dcols",
    "dmatrices",
    "dmatrix",
    "drow",
    "drows",
    "dscalar",
    "dscalars",
    "dtensor3",
    "dtensor3s",
    "dtensor4",
    "dtensor4s",
    "dtensor5",
    "dtensor5s",
    "dtensor6",
    "dtensor6s",
    "dtensor7",
    "dtensor7s",
    "dvector",
    "dvectors",
    "fcol",
    "fcols",
    "float_matrix_types",
    "float_scalar_types",
    "float_types",
    "float_vector_types",
    "fmatrices",
    "fmatrix",
    "frow",
    "frows",
    "fscalar",
    "fscalars",
    "ftensor3",
    "ftensor3s",
    "ftensor4",
    "ftensor4s",
    "ftensor5",
    "ftensor5s",
    "ftensor6",
    "ftensor6s",
    "ftensor7",
    "ftensor7s",
    "fvector",
    "fvectors",
    "icol",
    "icols",
    "imatrices",
    "imatrix",
    "int_matrix_types",
    "int_scalar_types",
    "int_types",
    "int_vector_types",
    "irow",
    "irows",
    "iscalar",
    "iscalars",
    "itensor3",
    "itensor3s",
    "itensor4",
    "itensor4s",
    "itensor5",
    "itensor5s",
    "itensor6",
    "itensor6s",
    "itensor7",
    "itensor7s",
    "ivector",
    "ivectors",
    "lcol",
    "lcols",
    "lmatrices",
    "lmatrix",
    "lrow",
    "lrows",
    "lscalar",
    "lscalars",
    "ltensor3",
    "ltensor3s",
    "ltensor4",
    "ltensor4s",
    "ltensor5",
    "ltensor5s",
    "ltensor6",
    "ltensor6s",
    "ltensor7",
    "ltensor7s",
    "lvector",
    "lvectors",
    "matrices",
    "matrix",
    "row",
    "rows",
    "scalar",
    "scalars",
    "tensor",
    "tensor3",
    "tensor3s",
    "tensor4",
    "tensor4s",
    "tensor5",
    "tensor5s",
    "tensor6",
    "tensor6s",
    "tensor7",
    "tensor7s",
    "ubscalar",
    "uiscalar",
    "ulscalar",
    "uwscalar",
    "value",
    "vector",
    "vectors",
    "wcol",
    "wmatrix",
    "wrow",
    "wscalar",
    "wtensor3",
    "wtensor4",
    "wtensor5",
    "wtensor6",
    "wtensor7",
    "wvector",
    "zcol",
    "zmatrix",
    "zrow",
    "zscalar",
    "ztensor3",
    "ztensor4",
    "ztensor5",
    "ztensor6",
    "ztensor7",
    "zvector",
]

ShapeEntry = int | None


def _config_floatX() -> str:
    return str(config.floatX)


def _check_name(name: Any) -> None:
    if name is not None and not isinstance(name, str):
        raise TypeError(f"a variable's name must be a str or None, got {name!r}")
    if name == "floatX" or name in all_dtypes:
        raise ValueError(
            f"{name!r} looks like a dtype, but the first positional argument is the variable's "
            f"name: pass the dtype by keyword (dtype={name!r})"
        )


def _make(name: str | None, dtype: Any, shape: Sequence[ShapeEntry], what: str) -> TensorVariable:
    _check_name(name)
    if not isinstance(shape, tuple | list):
        raise TypeError(f"{what}: shape must be a tuple, got {shape!r}")
    ttype = TensorType(_config_floatX() if dtype is None else dtype, shape=tuple(shape))
    return ttype(name)  # type: ignore[return-value]


def _fixed_rank(shape: Sequence[ShapeEntry], ndim: int, what: str) -> Sequence[ShapeEntry]:
    if not isinstance(shape, tuple | list) or len(shape) != ndim:
        raise ValueError(f"{what}: shape must be a tuple of length {ndim}, got {shape!r}")
    return shape


def tensor(
    name: str | None = None,
    *,
    dtype: Any = None,
    shape: Sequence[ShapeEntry] | None = None,
    broadcastable: Sequence[bool] | None = None,
) -> TensorVariable:
    """Return a symbolic tensor of any rank.

    Parameters
    ----------
    name
        The variable's name.
    dtype
        Its dtype (default ``config.floatX``).
    shape
        The static shape (``None`` entries for unknown lengths); its length is the rank.
    broadcastable
        Compatibility alternative to ``shape``: a tuple of bools.

    Examples
    --------
    >>> x = tensor("x", dtype="float32", shape=(None, 3, None))
    """
    _check_name(name)
    ttype = TensorType(
        _config_floatX() if dtype is None else dtype, shape=shape, broadcastable=broadcastable
    )
    return ttype(name)  # type: ignore[return-value]


def scalar(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[Any] = ()
) -> TensorVariable:
    """Return a symbolic 0-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _fixed_rank(shape, 0, "scalar"), "scalar")


def vector(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,)
) -> TensorVariable:
    """Return a symbolic 1-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _fixed_rank(shape, 1, "vector"), "vector")


def matrix(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None, None)
) -> TensorVariable:
    """Return a symbolic 2-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _fixed_rank(shape, 2, "matrix"), "matrix")


def row(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (1, None)
) -> TensorVariable:
    """Return a symbolic row: a 2-d tensor whose first dimension has length 1."""
    shape = _fixed_rank(shape, 2, "row")
    if shape[0] != 1:
        raise ValueError(f"row: the first dimension must have static length 1, got {shape!r}")
    return _make(name, dtype, shape, "row")


def col(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None, 1)
) -> TensorVariable:
    """Return a symbolic column: a 2-d tensor whose second dimension has length 1."""
    shape = _fixed_rank(shape, 2, "col")
    if shape[1] != 1:
        raise ValueError(f"col: the second dimension must have static length 1, got {shape!r}")
    return _make(name, dtype, shape, "col")


def tensor3(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,) * 3
) -> TensorVariable:
    """Return a symbolic 3-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _fixed_rank(shape, 3, "tensor3"), "tensor3")


def tensor4(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,) * 4
) -> TensorVariable:
    """Return a symbolic 4-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _fixed_rank(shape, 4, "tensor4"), "tensor4")


def tensor5(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,) * 5
) -> TensorVariable:
    """Return a symbolic 5-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _fixed_rank(shape, 5, "tensor5"), "tensor5")


def tensor6(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,) * 6
) -> TensorVariable:
    """Return a symbolic 6-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _fixed_rank(shape, 6, "tensor6"), "tensor6")


def tensor7(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,) * 7
) -> TensorVariable:
    """Return a symbolic 7-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _fixed_rank(shape, 7, "tensor7"), "tensor7")


def _plural(make: Callable[..., Any], what: str) -> Callable[..., list[TensorVariable]]:
    def many(*names: str | int) -> list[TensorVariable]:
        if len(names) == 1 and isinstance(names[0], int) and not isinstance(names[0], bool):
            return [make() for _ in range(names[0])]
        return [make(name) for name in names]

    many.__name__ = many.__qualname__ = what
    many.__doc__ = (
        f"Return a list of variables like those ``{getattr(make, '__name__', what[:-1])}`` "
        "makes: one per name given, or ``n`` unnamed ones for a single int ``n``."
    )
    return many


# ---------------------------------------------------------------------- typed shortcuts

# Scalars.
bscalar = TensorType("int8", shape=())
wscalar = TensorType("int16", shape=())
iscalar = TensorType("int32", shape=())
lscalar = TensorType("int64", shape=())
ubscalar = TensorType("uint8", shape=())
uwscalar = TensorType("uint16", shape=())
uiscalar = TensorType("uint32", shape=())
ulscalar = TensorType("uint64", shape=())
fscalar = TensorType("float32", shape=())
dscalar = TensorType("float64", shape=())
cscalar = TensorType("complex64", shape=())
zscalar = TensorType("complex128", shape=())

# Vectors.
bvector = TensorType("int8", shape=(None,))
wvector = TensorType("int16", shape=(None,))
ivector = TensorType("int32", shape=(None,))
lvector = TensorType("int64", shape=(None,))
fvector = TensorType("float32", shape=(None,))
dvector = TensorType("float64", shape=(None,))
cvector = TensorType("complex64", shape=(None,))
zvector = TensorType("complex128", shape=(None,))

# Matrices.
bmatrix = TensorType("int8", shape=(None, None))
wmatrix = TensorType("int16", shape=(None, None))
imatrix = TensorType("int32", shape=(None, None))
lmatrix = TensorType("int64", shape=(None, None))
fmatrix = TensorType("float32", shape=(None, None))
dmatrix = TensorType("float64", shape=(None, None))
cmatrix = TensorType("complex64", shape=(None, None))
zmatrix = TensorType("complex128", shape=(None, None))

# Rows (first dimension of length 1).
brow = TensorType("int8", shape=(1, None))
wrow = TensorType("int16", shape=(1, None))
irow = TensorType("int32", shape=(1, None))
lrow = TensorType("int64", shape=(1, None))
frow = TensorType("float32", shape=(1, None))
drow = TensorType("float64", shape=(1, None))
crow = TensorType("complex64", shape=(1, None))
zrow = TensorType("complex128", shape=(1, None))

# Columns (second dimension of length 1).
bcol = TensorType("int8", shape=(None, 1))
wcol = TensorType("int16", shape=(None, 1))
icol = TensorType("int32", shape=(None, 1))
lcol = TensorType("int64", shape=(None, 1))
fcol = TensorType("float32", shape=(None, 1))
dcol = TensorType("float64", shape=(None, 1))
ccol = TensorType("complex64", shape=(None, 1))
zcol = TensorType("complex128", shape=(None, 1))

# 3-d to 7-d tensors.
btensor3 = TensorType("int8", shape=(None,) * 3)
wtensor3 = TensorType("int16", shape=(None,) * 3)
itensor3 = TensorType("int32", shape=(None,) * 3)
ltensor3 = TensorType("int64", shape=(None,) * 3)
ftensor3 = TensorType("float32", shape=(None,) * 3)
dtensor3 = TensorType("float64", shape=(None,) * 3)
ctensor3 = TensorType("complex64", shape=(None,) * 3)
ztensor3 = TensorType("complex128", shape=(None,) * 3)

btensor4 = TensorType("int8", shape=(None,) * 4)
wtensor4 = TensorType("int16", shape=(None,) * 4)
itensor4 = TensorType("int32", shape=(None,) * 4)
ltensor4 = TensorType("int64", shape=(None,) * 4)
ftensor4 = TensorType("float32", shape=(None,) * 4)
dtensor4 = TensorType("float64", shape=(None,) * 4)
ctensor4 = TensorType("complex64", shape=(None,) * 4)
ztensor4 = TensorType("complex128", shape=(None,) * 4)

btensor5 = TensorType("int8", shape=(None,) * 5)
wtensor5 = TensorType("int16", shape=(None,) * 5)
itensor5 = TensorType("int32", shape=(None,) * 5)
ltensor5 = TensorType("int64", shape=(None,) * 5)
ftensor5 = TensorType("float32", shape=(None,) * 5)
dtensor5 = TensorType("float64", shape=(None,) * 5)
ctensor5 = TensorType("complex64", shape=(None,) * 5)
ztensor5 = TensorType("complex128", shape=(None,) * 5)

btensor6 = TensorType("int8", shape=(None,) * 6)
wtensor6 = TensorType("int16", shape=(None,) * 6)
itensor6 = TensorType("int32", shape=(None,) * 6)
ltensor6 = TensorType("int64", shape=(None,) * 6)
ftensor6 = TensorType("float32", shape=(None,) * 6)
dtensor6 = TensorType("float64", shape=(None,) * 6)
ctensor6 = TensorType("complex64", shape=(None,) * 6)
ztensor6 = TensorType("complex128", shape=(None,) * 6)

btensor7 = TensorType("int8", shape=(None,) * 7)
wtensor7 = TensorType("int16", shape=(None,) * 7)
itensor7 = TensorType("int32", shape=(None,) * 7)
ltensor7 = TensorType("int64", shape=(None,) * 7)
ftensor7 = TensorType("float32", shape=(None,) * 7)
dtensor7 = TensorType("float64", shape=(None,) * 7)
ctensor7 = TensorType("complex64", shape=(None,) * 7)
ztensor7 = TensorType("complex128", shape=(None,) * 7)

int_types = int_scalar_types = (bscalar, wscalar, iscalar, lscalar)
float_types = float_scalar_types = (fscalar, dscalar)
complex_types = complex_scalar_types = (cscalar, zscalar)
int_vector_types = (bvector, wvector, ivector, lvector)
float_vector_types = (fvector, dvector)
complex_vector_types = (cvector, zvector)
int_matrix_types = (bmatrix, wmatrix, imatrix, lmatrix)
float_matrix_types = (fmatrix, dmatrix)
complex_matrix_types = (cmatrix, zmatrix)

# ---------------------------------------------------------------------- plural forms

scalars = _plural(scalar, "scalars")
fscalars = _plural(fscalar, "fscalars")
dscalars = _plural(dscalar, "dscalars")
iscalars = _plural(iscalar, "iscalars")
lscalars = _plural(lscalar, "lscalars")
vectors = _plural(vector, "vectors")
fvectors = _plural(fvector, "fvectors")
dvectors = _plural(dvector, "dvectors")
ivectors = _plural(ivector, "ivectors")
lvectors = _plural(lvector, "lvectors")
matrices = _plural(matrix, "matrices")
fmatrices = _plural(fmatrix, "fmatrices")
dmatrices = _plural(dmatrix, "dmatrices")
imatrices = _plural(imatrix, "imatrices")
lmatrices = _plural(lmatrix, "lmatrices")
rows = _plural(row, "rows")
frows = _plural(frow, "frows")
drows = _plural(drow, "drows")
irows = _plural(irow, "irows")
lrows = _plural(lrow, "lrows")
cols = _plural(col, "cols")
fcols = _plural(fcol, "fcols")
dcols = _plural(dcol, "dcols")
icols = _plural(icol, "icols")
lcols = _plural(lcol, "lcols")
tensor3s = _plural(tensor3, "tensor3s")
ftensor3s = _plural(ftensor3, "ftensor3s")
dtensor3s = _plural(dtensor3, "dtensor3s")
itensor3s = _plural(itensor3, "itensor3s")
ltensor3s = _plural(ltensor3, "ltensor3s")
tensor4s = _plural(tensor4, "tensor4s")
ftensor4s = _plural(ftensor4, "ftensor4s")
dtensor4s = _plural(dtensor4, "dtensor4s")
itensor4s = _plural(itensor4, "itensor4s")
ltensor4s = _plural(ltensor4, "ltensor4s")
tensor5s = _plural(tensor5, "tensor5s")
ftensor5s = _plural(ftensor5, "ftensor5s")
dtensor5s = _plural(dtensor5, "dtensor5s")
itensor5s = _plural(itensor5, "itensor5s")
ltensor5s = _plural(ltensor5, "ltensor5s")
tensor6s = _plural(tensor6, "tensor6s")
ftensor6s = _plural(ftensor6, "ftensor6s")
dtensor6s = _plural(dtensor6, "dtensor6s")
itensor6s = _plural(itensor6, "itensor6s")
ltensor6s = _plural(ltensor6, "ltensor6s")
tensor7s = _plural(tensor7, "tensor7s")
ftensor7s = _plural(ftensor7, "ftensor7s")
dtensor7s = _plural(dtensor7, "dtensor7s")
itensor7s = _plural(itensor7, "itensor7s")
ltensor7s = _plural(ltensor7, "ltensor7s")

# ---------------------------------------------------------------------- constants


def _autocast(x: Any) -> np.ndarray:
    """NumPy's conversion, except that Python floats become ``config.floatX``."""
    if isinstance(x, bool):
        return np.asarray(x, dtype="bool")
    if isinstance(x, int):
        for dtype in ("int64", "uint64"):
            info = np.iinfo(dtype)
            if info.min <= x <= info.max:
                return np.asarray(x, dtype=dtype)
        raise TypeError(f"the Python int {x} does not fit in int64 or uint64")
    if isinstance(x, float) and not isinstance(x, np.floating):
        return np.asarray(x, dtype=_config_floatX())
    arr = np.asarray(x)
    if arr.size == 0 and not hasattr(x, "dtype"):
        arr = np.asarray(x, dtype=_config_floatX())
    return arr


def _as_array(x: Any, dtype: Any) -> np.ndarray:
    if x is None or isinstance(x, str | bytes):
        raise TypeError(f"cannot make a numeric tensor constant from {x!r}")
    try:
        arr = _autocast(x) if dtype is None else np.asarray(x)
    except ValueError as exc:
        raise ValueError(
            f"cannot make a tensor constant from {type(x).__name__} {x!r:.60} "
            f"(ragged nested sequence?): {exc}"
        ) from None
    if arr.dtype.kind not in "biufc":
        raise TypeError(
            f"cannot make a numeric tensor constant from {type(x).__name__} {x!r:.60} "
            f"(it converts to dtype {arr.dtype})"
        )
    if dtype is not None:
        target = TensorType(dtype, shape=()).numpy_dtype
        if arr.dtype != target:
            arr = arr.astype(target)
    return arr


def _with_ndim(arr: np.ndarray, ndim: int) -> np.ndarray:
    if arr.ndim < ndim:
        return arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    extra = arr.ndim - ndim
    if any(n != 1 for n in arr.shape[:extra]):
        raise ValueError(
            f"cannot make a {ndim}-d constant from a value of shape {arr.shape}: only leading "
            "dimensions of length 1 can be dropped"
        )
    return arr.reshape(arr.shape[extra:])


def _check_ndim(ndim: Any) -> None:
    if ndim is not None and (not isinstance(ndim, int) or isinstance(ndim, bool) or ndim < 0):
        raise TypeError(f"ndim must be a non-negative int or None, got {ndim!r}")


def constant(
    x: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None
) -> TensorConstant:
    """Return a :class:`TensorConstant` holding ``x``.

    Parameters
    ----------
    x
        A Python number, NumPy scalar or array, or nested sequence of numbers.
    name
        Optional name.
    ndim
        The rank wanted: leading dimensions of length 1 are added or removed to reach it.
    dtype
        Force this dtype (the cast may lose precision). By default NumPy's choice, except
        that Python ints become int64 (uint64 when too large), Python floats
        ``config.floatX``, Python bools ``bool``, and empty sequences ``config.floatX``.

    Returns
    -------
    TensorConstant
        Its Type has the value's full static shape. Its data is a private read-only copy.

    Raises
    ------
    TypeError
        For variables, ``None``, strings and non-numeric values.
    ValueError
        For ragged sequences, or when ``ndim`` cannot be reached.
    """
    if isinstance(x, Variable):
        raise TypeError(
            f"constant() expects a value, got the variable {x}; use as_tensor_variable instead"
        )
    _check_ndim(ndim)
    arr = _as_array(x, dtype)
    if ndim is not None:
        arr = _with_ndim(arr, ndim)
    ttype = TensorType(arr.dtype, shape=arr.shape)
    return TensorConstant(ttype, arr, name=name)


def as_tensor_variable(
    x: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None
) -> TensorVariable:
    """Return ``x`` as a tensor variable.

    Parameters
    ----------
    x
        A tensor variable (returned as is), an Apply node (its default output), another
        variable with an ``_as_TensorVariable()`` method, a list or tuple containing tensor
        variables (stacked), or a value that :func:`constant` accepts.
    name
        Name of a constant made from a value.
    ndim
        The rank wanted: leading broadcastable dimensions are removed or added to reach it.
    dtype
        The dtype wanted: values are made constants of it, variables are cast to it.

    Raises
    ------
    TypeError
        If ``x`` cannot be converted, or is a Python ``bool`` (often the result of ``==`` on
        variables, which compares identities: use ``opweave.tensor.eq``).
    ValueError
        If ``ndim`` cannot be reached.
    """
    _check_ndim(ndim)
    if isinstance(x, Apply):
        try:
            x = x.default_output()
        except ValueError as exc:
            raise TypeError(f"cannot convert the Apply node {x} to a tensor: {exc}") from None
    if isinstance(x, Variable):
        var = _tensor_of_variable(x)
        if dtype is not None and var.dtype != TensorType(dtype, shape=()).dtype:
            var = var.astype(dtype)
        return _variable_with_ndim(var, ndim)
    if isinstance(x, bool):
        raise TypeError(
            f"cannot convert the Python bool {x} to a tensor variable: it is probably the result "
            "of comparing symbolic variables with == or !=, which compare identities; use "
            "opweave.tensor.eq / neq, or constant(True) for a boolean constant"
        )
    if isinstance(x, list | tuple) and any(isinstance(e, Variable | Apply) for e in x):
        # late: opweave.tensor.basic builds on this module (same floor, above it)
        from opweave.tensor.basic import stack

        return as_tensor_variable(stack([as_tensor_variable(e) for e in x]), ndim=ndim)
    try:
        return constant(x, name=name, ndim=ndim, dtype=dtype)
    except TypeError as exc:
        raise TypeError(f"cannot convert {type(x).__name__} {x!r:.60} to a tensor: {exc}") from None


def _tensor_of_variable(x: Variable) -> TensorVariable:
    if isinstance(x.type, TensorType):
        return x  # type: ignore[return-value]
    convert = getattr(x, "_as_TensorVariable", None)
    if convert is None:
        raise TypeError(
            f"cannot convert the variable {x} of type {x.type!r} to a tensor variable (its class "
            f"{type(x).__name__} has no _as_TensorVariable method)"
        )
    out = convert()
    if not isinstance(out, Variable) or not isinstance(out.type, TensorType):
        raise TypeError(f"{type(x).__name__}._as_TensorVariable returned a non-tensor: {out!r}")
    return out  # type: ignore[return-value]


def _variable_with_ndim(x: TensorVariable, ndim: int | None) -> TensorVariable:
    if ndim is None or x.ndim == ndim:
        return x
    if x.ndim > ndim:
        extra = x.ndim - ndim
        if not all(x.broadcastable[:extra]):
            raise ValueError(
                f"{x} of type {x.type!r} has {x.ndim} dimensions and cannot be used as a "
                f"{ndim}-d tensor: only leading broadcastable dimensions can be dropped"
            )
        return x.dimshuffle(list(range(extra, x.ndim)))
    # late: opweave.tensor.shape builds on this module (same floor, above it)
    from opweave.tensor.shape import shape_padleft

    return shape_padleft(x, ndim - x.ndim)


#: Short alias of :func:`as_tensor_variable`.
as_tensor = as_tensor_variable


def value(x: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None) -> Any:
    """A root variable typed like ``constant(x)`` that, unlike a constant, can be an input.

    Seed 001's ``tensor.value``: ``x`` is kept as ``var.tag.value`` for reference, and a
    function taking the variable as an input uses the argument it is called with.
    """
    const = constant(x, ndim=ndim, dtype=dtype)
    var = const.type(name)
    var.tag.value = const.data
    return var
