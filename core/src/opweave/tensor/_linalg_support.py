"""What :mod:`opweave.tensor.nlinalg` and :mod:`opweave.tensor.slinalg` share.

- The output dtypes of the LAPACK-style routines (:func:`linalg_output_dtype`,
  :func:`linalg_real_output_dtype`, PyTensor's rules).
- Input checks that name the input and the expected Type (:func:`matrix_input`).
- Batching: the linear-algebra Ops take ``(..., m, n)`` inputs directly, the leading axes
  being a batch that NumPy's batched routines loop over. Two-input Ops left-pad their
  inputs to one batch rank and broadcast batch axes whose static length is 1
  (:func:`broadcast_batch`, :func:`batch_shape_of`), as ``MatMul`` does.
- Small symbolic helpers their gradients use, all batched: :func:`mT`, :func:`diag_embed`,
  :func:`symmetrized_grad` (and :func:`~opweave.tensor.basic.tril`,
  :func:`~opweave.tensor.basic.triu`, re-exported from :mod:`opweave.tensor.basic`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.gradient import grad_not_implemented
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.type import DisconnectedType
from opweave.tensor import math as tm
from opweave.tensor.basic import (  # tril, triu: re-exported for the linalg modules
    as_tensor_variable,
    diagonal,
    eye,
    matrix_transpose,
    tril,
    triu,
    where,
)
from opweave.tensor.elemwise import _broadcast_shape, left_pad, zeros_like_float
from opweave.tensor.type import TensorType, complex_dtypes, discrete_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = [
    "batch_shape_of",
    "broadcast_batch",
    "complex_nulls",
    "diag_embed",
    "is_complex",
    "is_discrete",
    "linalg_output_dtype",
    "linalg_real_output_dtype",
    "mT",
    "matrix_input",
    "square_matrix_apply",
    "square_shape",
    "symmetrized_grad",
    "trace",
    "tril",
    "triu",
    "zero_disconnected",
]


def _lapack_dtype(dtype: Any) -> np.dtype[Any]:
    """The LAPACK working dtype nearest to ``dtype`` (float32/64, complex64/128)."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return np.dtype("complex64") if dt.itemsize <= 8 else np.dtype("complex128")
    if (dt.kind == "f" and dt.itemsize > 4) or (dt.kind in "iub" and dt.itemsize > 2):
        return np.dtype("float64")
    return np.dtype("float32")


def linalg_output_dtype(*dtypes: Any) -> str:
    """The dtype a linear-algebra routine computes in and returns (PyTensor's rule).

    Each input dtype maps to its nearest LAPACK type (``float16``, ``bool``, ``int8``,
    ``int16`` and ``uint8``/``uint16`` to ``float32``; wider integers to ``float64``;
    complex to ``complex64``/``complex128``), and those are promoted together.
    """
    return np.result_type(*(_lapack_dtype(d) for d in dtypes)).name


def linalg_real_output_dtype(*dtypes: Any) -> str:
    """:func:`linalg_output_dtype` made real: for outputs that are real even for complex
    inputs (singular values, eigenvalues of Hermitian matrices, log-determinants)."""
    dt = np.dtype(linalg_output_dtype(*dtypes))
    return np.finfo(dt).dtype.name if dt.kind == "c" else dt.name


def is_discrete(x: Variable) -> bool:
    """Whether ``x`` has a boolean or integer dtype."""
    return x.type.dtype in discrete_dtypes


def matrix_input(
    x: Any, who: str, name: str, *, square: bool = False, min_ndim: int = 2
) -> TensorVariable:
    """``x`` as a tensor variable holding a matrix or a batch of matrices.

    Parameters
    ----------
    x
        The input.
    who, name
        The Op or function, and the input's name, for error messages.
    square
        Whether the last two axes must have equal lengths.
    min_ndim
        The fewest dimensions accepted (2 for a matrix, 1 for a vector right-hand side).

    Raises
    ------
    TypeError
        For an input that is not a numeric tensor, or has too few dimensions.
    ValueError
        For ``square`` and static lengths of the last two axes that differ.
    """
    try:
        x = as_tensor_variable(x)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{who}: the input {name} ({x!r}) cannot be made a tensor") from exc
    dtype = x.type.dtype
    if np.dtype(dtype).kind not in "biufc":
        raise TypeError(
            f"{who}: the input {name} ({x}) has dtype {dtype}; expected a TensorType of a "
            "numeric dtype"
        )
    if x.ndim < min_ndim:
        kind = "matrix" if min_ndim == 2 else "vector"
        raise TypeError(
            f"{who}: the input {name} ({x}) has Type {x.type} with {x.ndim} dimensions; "
            f"expected a TensorType of at least {min_ndim} dimensions (a {kind} or a "
            f"batch of them)"
        )
    if square:
        rows, cols = x.type.shape[-2:]
        if rows is not None and cols is not None and rows != cols:
            raise ValueError(
                f"{who}: the input {name} ({x}) must be square, but its static shape "
                f"{x.type.shape} has {rows} rows and {cols} columns"
            )
    return x


def square_matrix_apply(op: Op, x: Any, arg: str) -> Apply:
    """``op`` applied to a (batch of) square matrix ``x`` (checked by :func:`matrix_input`,
    errors naming ``op`` and the argument ``arg``), with one output of its square shape in the
    working dtype: the node of every such Op (an inverse, a factor, an exponential)."""
    x = matrix_input(x, type(op).__name__, arg, square=True)
    dtype = linalg_output_dtype(x.dtype)
    return Apply(op, [x], [TensorType(dtype, shape=square_shape(x))()])


def square_shape(x: TensorVariable) -> tuple[int | None, ...]:
    """``x``'s static shape with what is known of either of the last two lengths given to
    both (for a matrix input that must be square)."""
    *batch, rows, cols = x.type.shape
    n = rows if rows is not None else cols
    return (*batch, n, n)


def complex_nulls(op: Op, inputs: Sequence[Variable]) -> list[Variable] | None:
    """NullType gradients for all ``inputs`` when one is complex (the gradient formulas of
    the linear-algebra Ops are for real matrices), else ``None``."""
    if not any(is_complex(x) for x in inputs):
        return None
    return [
        grad_not_implemented(op, i, x, "gradients of complex linear algebra are not implemented")
        for i, x in enumerate(inputs)
    ]


def broadcast_batch(
    inputs: Sequence[TensorVariable], core_ndims: Sequence[int], who: str
) -> tuple[list[Variable], tuple[int | None, ...]]:
    """Left-pad ``inputs`` to one batch rank; return them and the static batch shape.

    The batch axes are those before each input's ``core_ndims`` last axes. They
    broadcast as in NumPy, but an axis broadcasts at run time only where its static
    length is 1 (as for ``MatMul``).

    Raises
    ------
    ValueError
        If known static batch lengths differ.
    """
    batch_ndim = max(x.ndim - k for x, k in zip(inputs, core_ndims, strict=True))
    padded = [left_pad(x, batch_ndim + k) for x, k in zip(inputs, core_ndims, strict=True)]
    shapes = [tuple(x.type.shape[:batch_ndim]) for x in padded]
    return padded, _broadcast_shape(shapes, who)


def batch_shape_of(node: Apply, shapes: Sequence[Sequence[Any]], batch_ndim: int) -> list[Any]:
    """The symbolic batch shape of ``node``'s output, for ``infer_shape``.

    A static length is used where known; otherwise the length of the first input whose
    axis is not statically broadcastable.
    """
    static = node.outputs[0].type.shape
    batch: list[Any] = []
    for axis in range(batch_ndim):
        if static[axis] is not None:
            batch.append(static[axis])
            continue
        chosen = shapes[0][axis]
        for ipt, shape in zip(node.inputs, shapes, strict=True):
            if ipt.type.shape[axis] != 1:
                chosen = shape[axis]
                break
        batch.append(chosen)
    return batch


# ====================================================================== symbolic helpers


def mT(x: Any) -> TensorVariable:
    """``x`` with its last two axes exchanged."""
    return matrix_transpose(x)


def diag_embed(v: Any) -> TensorVariable:
    """The square matrices whose diagonals are the last axis of ``v``, zeros elsewhere."""
    v = as_tensor_variable(v)
    n = v.shape[-1]
    on_diagonal = eye(n, dtype="bool")
    pattern = [*range(v.ndim - 1), "x", v.ndim - 1]
    return where(on_diagonal, v.dimshuffle(pattern), np.zeros((), dtype=v.dtype))


def symmetrized_grad(g: Any, lower: bool) -> TensorVariable:
    """The gradient with respect to a matrix of which only one triangle is read.

    An Op that reads the lower triangle of ``a`` (as the symmetric matrix
    ``tril(a) + tril(a, -1).T``) has, for the gradient ``g`` with respect to that
    symmetric matrix, the gradient ``tril(g) + triu(g, 1).T`` with respect to ``a`` (the
    upper triangle does not matter); likewise for the upper triangle.
    """
    g = as_tensor_variable(g)
    if lower:
        return tm.add(tril(g), mT(triu(g, 1)))
    return tm.add(triu(g), mT(tril(g, -1)))


def zero_disconnected(outputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
    """``grads`` with zeros (shaped like the output) for the disconnected ones."""
    result: list[Variable] = []
    for out, g in zip(outputs, grads, strict=True):
        if isinstance(g.type, DisconnectedType):
            result.append(zeros_like_float(out))
        else:
            result.append(g)
    return result


def is_complex(x: Variable) -> bool:
    """Whether ``x`` has a complex dtype."""
    return x.type.dtype in complex_dtypes


def trace(X: Any) -> TensorVariable:
    """The sum of the diagonal of a matrix, or of each matrix of a batch (last two axes).

    :mod:`opweave.tensor.nlinalg` re-exports it (PyTensor's path). It is defined here,
    beside :func:`matrix_input`, so that ``TensorVariable.trace`` reaches it without
    importing the linear-algebra Ops.
    """
    X = matrix_input(X, "trace", "X")
    return tm.sum(diagonal(X, 0, -2, -1), axis=-1)
