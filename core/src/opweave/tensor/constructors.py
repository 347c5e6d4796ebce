"""Making tensor variables from values: ``constant``, ``as_tensor_variable`` and ``value``;
and the constructors of symbolic variables, re-exported.

The constructors (``scalar``/``vector``/``matrix``/..., the typed shortcuts ``dmatrix``,
``fvector``, ... and their plural forms ``dmatrices("a", "b")``, ``scalars("xy")``) live in
:mod:`opweave.tensor.type`, as in PyTensor; they are re-exported here so that
``from opweave.tensor.constructors import dmatrix`` keeps working.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.scalar.autocast import convert, is_masked_array
from opweave.scalar.type import ScalarType
from opweave.tensor._typing import tensor_out, tensor_var
from opweave.tensor.conversion import registered_conversion
from opweave.tensor.type import (  # the constructors' primary location, re-exported
    TensorType,
    bcol,
    bmatrix,
    brow,
    bscalar,
    btensor3,
    btensor4,
    btensor5,
    btensor6,
    btensor7,
    bvector,
    ccol,
    cmatrix,
    col,
    cols,
    complex_matrix_types,
    complex_scalar_types,
    complex_types,
    complex_vector_types,
    crow,
    cscalar,
    ctensor3,
    ctensor4,
    ctensor5,
    ctensor6,
    ctensor7,
    cvector,
    dcol,
    dcols,
    dmatrices,
    dmatrix,
    drow,
    drows,
    dscalar,
    dscalars,
    dtensor3,
    dtensor3s,
    dtensor4,
    dtensor4s,
    dtensor5,
    dtensor5s,
    dtensor6,
    dtensor6s,
    dtensor7,
    dtensor7s,
    dvector,
    dvectors,
    fcol,
    fcols,
    float_matrix_types,
    float_scalar_types,
    float_types,
    float_vector_types,
    fmatrices,
    fmatrix,
    frow,
    frows,
    fscalar,
    fscalars,
    ftensor3,
    ftensor3s,
    ftensor4,
    ftensor4s,
    ftensor5,
    ftensor5s,
    ftensor6,
    ftensor6s,
    ftensor7,
    ftensor7s,
    fvector,
    fvectors,
    icol,
    icols,
    imatrices,
    imatrix,
    int_matrix_types,
    int_scalar_types,
    int_types,
    int_vector_types,
    irow,
    irows,
    iscalar,
    iscalars,
    itensor3,
    itensor3s,
    itensor4,
    itensor4s,
    itensor5,
    itensor5s,
    itensor6,
    itensor6s,
    itensor7,
    itensor7s,
    ivector,
    ivectors,
    lcol,
    lcols,
    lmatrices,
    lmatrix,
    lrow,
    lrows,
    lscalar,
    lscalars,
    ltensor3,
    ltensor3s,
    ltensor4,
    ltensor4s,
    ltensor5,
    ltensor5s,
    ltensor6,
    ltensor6s,
    ltensor7,
    ltensor7s,
    lvector,
    lvectors,
    matrices,
    matrix,
    row,
    rows,
    scalar,
    scalars,
    tensor,
    tensor3,
    tensor3s,
    tensor4,
    tensor4s,
    tensor5,
    tensor5s,
    tensor6,
    tensor6s,
    tensor7,
    tensor7s,
    ubscalar,
    uiscalar,
    ulscalar,
    uwscalar,
    vector,
    vectors,
    wcol,
    wmatrix,
    wrow,
    wscalar,
    wtensor3,
    wtensor4,
    wtensor5,
    wtensor6,
    wtensor7,
    wvector,
    zcol,
    zmatrix,
    zrow,
    zscalar,
    ztensor3,
    ztensor4,
    ztensor5,
    ztensor6,
    ztensor7,
    zvector,
)
from opweave.tensor.variable import TensorConstant, TensorVariable

if TYPE_CHECKING:
    # The module whose functions stack lists of variables, make ranges and convert scalars
    # here (looked up when they run). It builds on this module: set here by
    # opweave.tensor._given_names, which sits above both.
    from opweave.tensor import basic

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

# ---------------------------------------------------------------------- constants


def _as_array(x: Any, dtype: Any) -> np.ndarray:
    if x is None or isinstance(x, str | bytes):
        raise TypeError(f"cannot make a numeric tensor constant from {x!r}")
    try:
        arr = convert(x) if dtype is None else np.asarray(x)
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
        Force this dtype (the cast may lose precision). By default the dtype follows
        :func:`opweave.scalar.convert`, as in PyTensor: NumPy scalars and arrays keep
        theirs; under ``cast_policy="custom"`` (the default) a Python int (or bool) gets
        the smallest integer dtype holding it (``2`` is ``int8``, ``1000`` ``int16``) and a
        Python float the narrowest float holding it exactly (``1.5`` is ``float32``,
        ``1.1`` ``float64``; always ``floatX`` when that is ``float32``), so constants do
        not widen the variables they are combined with; under ``"numpy+floatX"`` Python
        ints are int64 and floats ``config.floatX``. Sequences follow NumPy (an empty one
        is ``config.floatX``).

    Returns
    -------
    TensorConstant
        Its Type has the value's full static shape. Its data is a private read-only copy.

    Raises
    ------
    TypeError
        For variables other than a ``TensorConstant`` (returned as is, or its data with the
        ``ndim`` asked for), ``None``, strings and non-numeric values.
    NotImplementedError
        For a NumPy masked array.
    ValueError
        For ragged sequences, or when ``ndim`` cannot be reached.
    """
    _check_ndim(ndim)
    if isinstance(x, TensorConstant):
        if dtype is None and (ndim is None or ndim == x.ndim):
            return x
        x = x.data
    if isinstance(x, Variable):
        raise TypeError(
            f"constant() expects a value, got the variable {x}; use as_tensor_variable instead"
        )
    if is_masked_array(x):
        raise NotImplementedError(
            f"constant: MaskedArrays are not supported (got {x!r:.60}); pass x.filled(value)"
        )
    arr = _as_array(x, dtype)
    if ndim is not None:
        arr = _with_ndim(arr, ndim)
    ttype = TensorType(arr.dtype, shape=arr.shape)
    return TensorConstant(ttype, arr, name=name)


def as_tensor_variable(
    x: Any,
    name: str | None = None,
    ndim: int | None = None,
    dtype: Any = None,
    *,
    allow_xtensor_conversion: bool = False,
) -> TensorVariable:
    """Return ``x`` as a tensor variable.

    Parameters
    ----------
    x
        A tensor variable (returned as is), an Apply node (its default output), another
        variable with an ``_as_TensorVariable()`` method, an object of a type with a
        conversion registered with ``_as_tensor_variable.register`` (see
        :mod:`opweave.tensor.conversion`), a list or tuple containing tensor variables
        (stacked), or a value that :func:`constant` accepts.
    name
        Name of a constant made from a value.
    ndim
        The rank wanted: leading broadcastable dimensions are removed or added to reach it.
    dtype
        The dtype of a constant made from a value. As in PyTensor, it does not apply to
        ``x`` when ``x`` is already a variable (or an Apply node): that is returned with its
        own dtype; use :func:`~opweave.tensor.basic.cast` to convert a variable.
    allow_xtensor_conversion
        Convert a named-dimension tensor (an xtensor, :mod:`opweave.xtensor`) to its data
        (axes in the order of its dims). Without it an xtensor is refused, as in PyTensor:
        converting it silently would drop its names and the alignment by name.

    Raises
    ------
    TypeError
        If ``x`` cannot be converted, or is a Python ``bool`` (often the result of ``==`` on
        variables, which compares identities: use ``opweave.tensor.eq``).
    NoTensorConversionError
        A ``TypeError`` that is also a ``NotImplementedError`` (as PyTensor raises): ``x``
        is neither a number, an array nor a list or tuple, and cannot be converted.
    ValueError
        If ``ndim`` cannot be reached.
    """
    _check_ndim(ndim)
    if isinstance(x, Apply):
        try:
            x = x.default_output()
        except ValueError as exc:
            kind = "Multi-output Op without default_output" if len(x.outputs) > 1 else "no output"
            raise TypeError(
                f"cannot convert the Apply node {x} to a tensor ({kind}): {exc}"
            ) from None
    if isinstance(x, Variable):
        if getattr(x, "requires_explicit_conversion", False) and not allow_xtensor_conversion:
            raise TypeError(
                "To avoid subtle bugs, opweave forbids automatic conversion of "
                f"XTensorVariable to TensorVariable ({x}).\n"
                "You can convert explicitly using `x.values` or pass "
                "`allow_xtensor_conversion=True`."
            )
        return _variable_with_ndim(_tensor_of_variable(x), ndim)
    if isinstance(x, range):
        return _range_tensor(x, name, ndim, dtype)
    if is_masked_array(x):
        raise NotImplementedError(
            f"as_tensor_variable: MaskedArrays are not supported (got {x!r:.60}); pass "
            "x.filled(value) or the data and the mask as separate tensors"
        )
    convert_registered = registered_conversion(x)
    if convert_registered is not None:  # a library's own conversion for its type
        extra = {} if dtype is None else {"dtype": dtype}
        return convert_registered(x, name, ndim, **extra)  # type: ignore[no-any-return]
    if isinstance(x, bool):
        raise TypeError(
            f"cannot convert the Python bool {x} to a tensor variable: it is probably the result "
            "of comparing symbolic variables with == or !=, which compare identities; use "
            "opweave.tensor.eq / neq, or np.array(True) for a boolean constant"
        )
    if isinstance(x, list | tuple) and any(isinstance(e, Variable | Apply) for e in x):
        if all(not isinstance(e, Variable | Apply) or isinstance(e, Constant) for e in x):
            data = [e.data if isinstance(e, Constant) else e for e in x]
            return constant(type(x)(data), name=name, ndim=ndim, dtype=dtype)
        stacked = basic.stack([as_tensor_variable(e) for e in x])
        return as_tensor_variable(stacked, ndim=ndim)
    try:
        return constant(x, name=name, ndim=ndim, dtype=dtype)
    except TypeError as exc:
        if not isinstance(x, _CONVERTIBLE_KINDS):
            raise NoTensorConversionError(
                f"Cannot convert {x!r:.60} to a tensor variable: cannot convert "
                f"{type(x).__name__} values to a tensor ({exc})"
            ) from None
        raise TypeError(f"cannot convert {type(x).__name__} {x!r:.60} to a tensor: {exc}") from None


class NoTensorConversionError(TypeError, NotImplementedError):
    """:func:`as_tensor_variable` has no conversion for objects of this type.

    A ``TypeError`` as every failed conversion, and a ``NotImplementedError`` as in PyTensor,
    which raises that for objects (strings, ``None``...) of a type without a conversion.
    """


#: The kinds of values PyTensor converts to constants: a failure with one of them is a
#: plain ``TypeError`` (such as an unsupported dtype), with anything else
#: :class:`NoTensorConversionError`.
_CONVERTIBLE_KINDS = (numbers.Number, np.ndarray, np.generic, list, tuple)


def _range_tensor(x: range, name: str | None, ndim: int | None, dtype: Any) -> TensorVariable:
    """A Python ``range`` as the ``arange`` with the same start, stop and step."""
    if ndim is not None and ndim != 1:
        raise ValueError(f"as_tensor_variable: ndim for range must be 1, got ndim={ndim}")
    out: TensorVariable = basic.arange(x.start, x.stop, x.step, dtype=dtype)
    out.name = name
    return out


def _tensor_of_variable(x: Variable) -> TensorVariable:
    if isinstance(x.type, TensorType):
        return tensor_var(x)
    if isinstance(x.type, ScalarType):
        return tensor_out(basic.tensor_from_scalar(x))
    convert = getattr(x, "_as_TensorVariable", None)
    if convert is None:
        raise TypeError(
            f"cannot convert the variable {x} of type {x.type!r} to a tensor variable of a "
            f"TensorType (its class {type(x).__name__} has no _as_TensorVariable method)"
        )
    out = convert()
    if not isinstance(out, Variable) or not isinstance(out.type, TensorType):
        raise TypeError(f"{type(x).__name__}._as_TensorVariable returned a non-tensor: {out!r}")
    return tensor_var(out)


def _variable_with_ndim(x: TensorVariable, ndim: int | None) -> TensorVariable:
    if ndim is None or x.ndim == ndim:
        return x
    if x.ndim > ndim:
        extra = x.ndim - ndim
        if not all(x.broadcastable[:extra]):
            raise ValueError(
                f"Tensor of type {x.type!r} ({x}) has {x.ndim} dimensions and cannot be used "
                f"as a {ndim}-d tensor: only leading broadcastable dimensions can be dropped"
            )
        return tensor_out(x.dimshuffle(list(range(extra, x.ndim))))
    # leading new axes
    return tensor_out(x.dimshuffle(["x"] * (ndim - x.ndim) + list(range(x.ndim))))


#: Short alias of :func:`as_tensor_variable`.
as_tensor = as_tensor_variable


def value(x: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None) -> Any:
    """A root variable typed like ``constant(x)`` that, unlike a constant, can be an input.

    ``x`` is kept as ``var.tag.value`` for reference, and a function taking the variable
    as an input uses the argument it is called with.
    """
    const = constant(x, ndim=ndim, dtype=dtype)
    var = const.type(name)
    var.tag.value = const.data
    return var
