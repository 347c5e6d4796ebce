"""Arithmetic, reductions and products of sparse matrices (PyTensor's
``pytensor.sparse.math`` names).

:func:`sp_sum` (:class:`SpSum`) sums to a dense result; :func:`add`, :func:`subtract`
and :func:`multiply` pick the Op for their operands' kinds (sparse with sparse gives
sparse, ``sparse + dense`` gives dense, ``sparse * dense`` gives sparse); :func:`dot`
(:class:`Dot`) multiplies matrices of which at least one is sparse into a dense result
with the regular gradient, :func:`structured_dot` (:class:`StructuredDot`) with the
gradient of the sparse operand kept to its stored positions; :func:`sign`, :func:`neg`
and the other structured functions apply to the stored values only;
:func:`structured_add_s_v` (:class:`StructuredAddSV`) adds a vector's values at the
stored positions; :func:`true_dot` (:class:`TrueDot`) gives a sparse product. The
comparisons (:func:`lt`, :func:`gt`, :func:`eq` ...) come from
:mod:`opweave.sparse.comparison`, :func:`mul_s_v`, :func:`col_scale`, :func:`row_scale`
and :func:`sampling_dot` from :mod:`opweave.sparse.scaling`.
The kernels live in the backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.sparse.basic import (
    Cast,
    SparseDenseMultiply,
    SparseFromDense,
    SparseSparseMultiply,
    StructuredUnary,
    _sum_to,
    _upcast,
    as_sparse_gradient,
    as_sparse_variable,
    dense_from_sparse,
    is_sparse_variable,
    mul_s_d,
    mul_s_s,
    sp_ones_like,
    sp_zeros_like,
    sparse_input,
    transpose,
)
from opweave.sparse.comparison import eq, ge, gt, le, lt, neq
from opweave.sparse.scaling import col_scale, dense_operand, mul_s_v, row_scale, sampling_dot
from opweave.sparse.type import SparseTensorType, _is_sparse_value
from opweave.tensor import basic as tb
from opweave.tensor import math as tm
from opweave.tensor.basic import as_tensor_variable
from opweave.tensor.type import TensorType, continuous_dtypes

__all__ = [
    "AddSD",
    "AddSS",
    "Dot",
    "SpSum",
    "SparseDenseMultiply",
    "SparseSparseMultiply",
    "StructuredAddSV",
    "StructuredDot",
    "TrueDot",
    "abs",
    "add",
    "add_s_d",
    "add_s_s",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "ceil",
    "col_scale",
    "conj",
    "conjugate",
    "deg2rad",
    "dot",
    "eq",
    "expm1",
    "floor",
    "ge",
    "gt",
    "le",
    "log1p",
    "lt",
    "mul",
    "mul_s_d",
    "mul_s_s",
    "mul_s_v",
    "multiply",
    "neg",
    "neq",
    "rad2deg",
    "rint",
    "row_scale",
    "sampling_dot",
    "sign",
    "sin",
    "sinh",
    "sp_sum",
    "sqr",
    "sqrt",
    "structured_add_s_v",
    "structured_conjugate",
    "structured_dot",
    "structured_exp",
    "structured_log",
    "structured_sigmoid",
    "sub",
    "subtract",
    "tan",
    "tanh",
    "true_dot",
    "trunc",
]


def _operand(x: Any) -> Variable:
    """A SciPy matrix as a sparse constant, another value as a tensor constant."""
    if _is_sparse_value(x):
        return as_sparse_variable(x)
    if isinstance(x, Variable):
        return x
    return as_tensor_variable(x)


# ------------------------------------------------------------------ structured functions


def _structured(name: str) -> Any:
    op = StructuredUnary(name)

    def apply(x: Any) -> Variable:
        return op(sparse_input(x, name))

    apply.__name__ = name
    apply.__doc__ = (
        f"``{name}`` of the stored values of the sparse matrix ``x`` (a sparse matrix of "
        "the same structure)."
    )
    return apply


abs = _structured("abs")
arcsin = _structured("arcsin")
arcsinh = _structured("arcsinh")
arctan = _structured("arctan")
arctanh = _structured("arctanh")
ceil = _structured("ceil")
deg2rad = _structured("deg2rad")
expm1 = _structured("expm1")
floor = _structured("floor")
log1p = _structured("log1p")
neg = _structured("neg")
rad2deg = _structured("rad2deg")
rint = _structured("rint")
sign = _structured("sign")
sin = _structured("sin")
sinh = _structured("sinh")
sqr = _structured("sqr")
sqrt = _structured("sqrt")
tan = _structured("tan")
tanh = _structured("tanh")
trunc = _structured("trunc")
conjugate = _structured("conj")
conj = structured_conjugate = conjugate
structured_exp = _structured("exp")
structured_log = _structured("log")
structured_sigmoid = _structured("sigmoid")


# ------------------------------------------------------------------ sums


def _sum_dtype(dtype: str) -> str:
    """The dtype of NumPy's ``sum`` of an array of ``dtype`` (``int8`` gives ``int64``)."""
    return str(np.zeros(1, dtype=dtype).sum().dtype.name)


class SpSum(Op):
    """The sum of a sparse matrix, over ``axis`` (``None``: all of it), as a dense tensor.

    Parameters
    ----------
    axis
        ``None``, 0 or 1.
    sparse_grad
        ``True``: the gradient is kept to the input's stored positions; ``False``: the
        full gradient, as a sparse matrix. Not part of the Op's identity (both compute
        the same values).
    """

    __props__ = ("axis",)

    def __init__(self, axis: int | None = None, sparse_grad: bool = True) -> None:
        if axis not in (None, 0, 1):
            raise ValueError(f"SpSum: axis must be None, 0 or 1, got {axis!r}")
        self.axis = axis
        self.structured = bool(sparse_grad)

    def __str__(self) -> str:
        return f"{type(self).__name__}{{axis={self.axis}}}"

    def make_node(self, x: Any) -> Apply:
        """One sparse matrix; the output (0-d, or 1-d along the other axis) has the dtype
        of NumPy's and SciPy's sums: integers narrower than 64 bits are summed as 64-bit
        ones (signed or unsigned), as in ``x.sum()``."""
        x = sparse_input(x, "SpSum")
        if self.axis is None:
            shape: tuple[Any, ...] = ()
        else:
            shape = (x.type.shape[1 - self.axis],)
        return Apply(self, [x], [TensorType(_sum_dtype(x.type.dtype), shape=shape)()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """``gz`` spread over the summed axes (kept to the stored positions if structured)."""
        (x,), (gz,) = inputs, grads
        if x.type.dtype not in continuous_dtypes:
            return [Cast(config.floatX)(sp_zeros_like(x))]
        if self.axis == 0:
            gz = gz.dimshuffle("x", 0)
        elif self.axis == 1:
            gz = gz.dimshuffle(0, "x")
        if self.structured:
            return [mul_s_d(sp_ones_like(x), gz)]
        rows, cols = dense_from_sparse(x).shape[0], dense_from_sparse(x).shape[1]
        return [SparseFromDense(x.type.format)(tb.alloc(gz, rows, cols))]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``()`` or the length of the axis kept."""
        if self.axis is None:
            return [()]
        return [(shapes[0][1 - self.axis],)]


def sp_sum(x: Any, axis: int | None = None, sparse_grad: bool = False) -> Variable:
    """The sum of the sparse matrix ``x`` over ``axis`` (``None``, 0 or 1), dense.

    Parameters
    ----------
    x
        A sparse matrix.
    axis
        ``None`` sums everything (a 0-d result); 0 sums the rows, 1 the columns.
    sparse_grad
        ``True`` keeps the gradient to ``x``'s stored positions.
    """
    return SpSum(axis, sparse_grad)(x)


# ------------------------------------------------------------------ sums of two matrices


class AddSS(Op):
    """The sum of two sparse matrices of one shape: sparse, in ``x``'s format."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        """Two sparse matrices."""
        x = sparse_input(x, "AddSS", "x")
        y = sparse_input(y, "AddSS", "y")
        out = SparseTensorType(x.type.format, _upcast(x.dtype, y.dtype), shape=x.type.shape)
        return Apply(self, [x, y], [out()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The gradient, to both."""
        (x, y), (gz,) = inputs, grads
        return [as_sparse_gradient(gz, x), as_sparse_gradient(gz, y)]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The first input's shape."""
        return [shapes[0]]


add_s_s = AddSS()


class AddSD(Op):
    """The sum of a sparse matrix and a dense tensor broadcasting to its shape: dense."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        """A sparse matrix and a dense tensor of at most 2 dimensions."""
        x = sparse_input(x, "AddSD", "x")
        y = as_tensor_variable(y)
        if y.ndim > 2:
            raise TypeError(
                f"AddSD: input y must have at most 2 dimensions, got {y} of type {y.type!r}"
            )
        y_shape = (1,) * (2 - y.ndim) + tuple(y.type.shape)
        shape = tuple(xs if xs is not None else (ys if ys != 1 else None)
                      for xs, ys in zip(x.type.shape, y_shape))  # fmt: skip
        out = TensorType(_upcast(x.dtype, y.dtype), shape=shape)
        return Apply(self, [x, y], [out()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """``gz`` at ``x``'s stored positions (structured), and ``gz`` summed to ``y``."""
        (x, y), (gz,) = inputs, grads
        return [mul_s_d(sp_ones_like(x), gz), _sum_to(gz, y)]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The sparse input's shape."""
        return [shapes[0]]


add_s_d = AddSD()


def add(x: Any, y: Any) -> Variable:
    """``x + y`` where at least one is sparse: sparse when both are, else dense.

    Raises
    ------
    TypeError
        If neither operand is sparse.
    """
    x, y = _operand(x), _operand(y)
    x_sparse, y_sparse = is_sparse_variable(x), is_sparse_variable(y)
    if x_sparse and y_sparse:
        return add_s_s(x, y)
    if x_sparse:
        return add_s_d(x, y)
    if y_sparse:
        return add_s_d(y, x)
    raise TypeError(f"sparse add: at least one operand must be sparse, got {x} and {y}")


def subtract(x: Any, y: Any) -> Variable:
    """``x - y`` where at least one is sparse (see :func:`add`)."""
    y = _operand(y)
    return add(x, neg(y) if is_sparse_variable(y) else tm.neg(y))


sub = subtract


def multiply(x: Any, y: Any) -> Variable:
    """The elementwise ``x * y`` where at least one is sparse: a sparse result, stored
    where the sparse operand stores (where both store, for two sparse operands).

    Raises
    ------
    TypeError
        If neither operand is sparse.
    """
    x, y = _operand(x), _operand(y)
    x_sparse, y_sparse = is_sparse_variable(x), is_sparse_variable(y)
    if x_sparse and y_sparse:
        return mul_s_s(x, y)
    if x_sparse:
        return mul_s_d(x, y)
    if y_sparse:
        return mul_s_d(y, x)
    raise TypeError(f"sparse multiply: at least one operand must be sparse, got {x} and {y}")


mul = multiply


class StructuredAddSV(Op):
    """``x + y`` at the stored positions of the sparse matrix ``x`` only, for a dense
    vector ``y`` (one value per column): a sparse matrix with ``x``'s structure and format
    (explicitly stored zeros included). The dtype is the operands' upcast one."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        """A sparse matrix and a dense vector.

        Raises
        ------
        TypeError
            If ``x`` is not sparse or ``y`` not a dense vector.
        """
        x = sparse_input(x, "structured_add_s_v")
        y = dense_operand(y, 1, "structured_add_s_v", "y")
        out = SparseTensorType(x.type.format, _upcast(x.dtype, y.dtype), shape=x.type.shape)
        return Apply(self, [x, y], [out()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """``gz`` for ``x``, and the column sums of ``gz`` at ``x``'s stored positions for
        ``y``."""
        (x, _), (gz,) = inputs, grads
        gz = as_sparse_gradient(gz, x)
        gy = sp_sum(mul_s_s(gz, sp_ones_like(x)), axis=0, sparse_grad=True)
        return [gz, gy]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The sparse input's shape."""
        return [shapes[0]]


#: ``x + y`` at the stored positions of ``x`` (see :class:`StructuredAddSV`).
structured_add_s_v = StructuredAddSV()


# ------------------------------------------------------------------ products


def _dense_matrix(y: Any, who: str, what: str) -> Variable:
    y = as_tensor_variable(y)
    if y.ndim != 2:
        raise TypeError(f"{who}: input {what} must be a dense matrix, got {y} of type {y.type!r}")
    return y


class StructuredDot(Op):
    """The matrix product of a sparse ``a`` and a matrix ``b``: dense for a dense ``b``,
    sparse (in ``a``'s format) for a sparse one, as in PyTensor; the gradient with respect
    to ``a`` is kept to ``a``'s stored positions."""

    __props__ = ()

    def make_node(self, a: Any, b: Any) -> Apply:
        """A sparse matrix and a dense or sparse matrix."""
        a = sparse_input(a, "StructuredDot", "a")
        if is_sparse_variable(b) or _is_sparse_value(b):
            b = sparse_input(b, "StructuredDot", "b")
            dtype = _upcast(a.dtype, b.dtype)
            shape = (a.type.shape[0], b.type.shape[1])
            return Apply(self, [a, b], [SparseTensorType(a.type.format, dtype, shape=shape)()])
        b = _dense_matrix(b, "StructuredDot", "b")
        out = TensorType(_upcast(a.dtype, b.dtype), shape=(a.type.shape[0], b.type.shape[1]))
        return Apply(self, [a, b], [out()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """``gz @ b.T`` at ``a``'s stored positions, and ``a.T @ gz``."""
        (a, b), (gz,) = inputs, grads
        if is_sparse_variable(b):
            gz = as_sparse_gradient(gz, a)
            ga_sparse = mul_s_s(sp_ones_like(a), _structured_dot(gz, transpose(b)))
            return [ga_sparse, _structured_dot(transpose(a), gz)]
        ga = mul_s_d(sp_ones_like(a), tm.dot(gz, b.T))
        return [ga, structured_dot(transpose(a), gz)]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``(rows of a, columns of b)``."""
        return [(shapes[0][0], shapes[1][1])]


_structured_dot = StructuredDot()


def structured_dot(x: Any, y: Any) -> Variable:
    """The matrix product ``x @ y`` of a sparse and a dense matrix (either order), dense,
    with a structured gradient for the sparse one; of two sparse matrices, sparse in
    ``x``'s format, with a structured gradient for ``x``.

    Raises
    ------
    TypeError
        If neither operand is sparse.
    """
    x, y = _operand(x), _operand(y)
    x_sparse, y_sparse = is_sparse_variable(x), is_sparse_variable(y)
    if x_sparse:
        return _structured_dot(x, y)
    if y_sparse:
        return _structured_dot(transpose(y), _dense_matrix(x, "structured_dot", "x").T).T
    raise TypeError(f"structured_dot: at least one operand must be sparse, got {x} and {y}")


class Dot(Op):
    """The product ``x @ y`` where at least one operand is sparse and a dense one is a
    vector or a matrix: a dense result, with the regular gradient."""

    __props__ = ()

    def __str__(self) -> str:
        return "SparseDot"

    def make_node(self, x: Any, y: Any) -> Apply:
        """Two operands, at least one sparse; dense ones of 1 or 2 dimensions.

        Raises
        ------
        TypeError
            If neither is sparse, or a dense one has another rank.
        """
        x, y = _operand(x), _operand(y)
        if not (is_sparse_variable(x) or is_sparse_variable(y)):
            raise TypeError(
                f"sparse dot: at least one operand must be sparse, got {x} ({x.type!r}) and "
                f"{y} ({y.type!r})"
            )
        for name, v in (("x", x), ("y", y)):
            if not is_sparse_variable(v) and v.ndim not in (1, 2):
                raise TypeError(
                    f"sparse dot: input {name} must be a vector or a matrix, got {v} of type "
                    f"{v.type!r}"
                )
        shape_x = (None,) * 2 if is_sparse_variable(x) else tuple(x.type.shape)
        shape_y = (None,) * 2 if is_sparse_variable(y) else tuple(y.type.shape)
        shape = shape_x[:-1] + shape_y[1:]
        return Apply(self, [x, y], [TensorType(_upcast(x.dtype, y.dtype), shape=shape)()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """``gz @ y.T`` and ``x.T @ gz`` (outer products for vector operands); sparse
        operands get their (full) gradient as sparse matrices."""
        (x, y), (gz,) = inputs, grads
        gx = _product_grad(gz, y, left=True)
        gy = _product_grad(gz, x, left=False)
        gx = as_sparse_gradient(gx, x) if is_sparse_variable(x) else gx
        gy = as_sparse_gradient(gy, y) if is_sparse_variable(y) else gy
        return [gx, gy]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The dense product's shape."""
        (xshp, yshp), y = shapes, node.inputs[1]
        return [tuple(xshp[:-1]) + tuple(yshp[1:]) if y.ndim == 2 else tuple(xshp[:-1])]


def _product_grad(gz: Variable, other: Variable, left: bool) -> Variable:
    """The gradient of ``x @ y`` for ``x`` (``left``: ``gz @ y.T``) or ``y`` (``x.T @ gz``),
    where ``other`` is the other operand."""
    other_t = transpose(other) if is_sparse_variable(other) else other.T
    if other.ndim == 1 and gz.ndim == 1:
        return tm.outer(gz, other) if left else tm.outer(other, gz)
    if other.ndim == 1:  # gz is a matrix
        return tm.outer(gz, other) if left else tm.outer(other, gz)
    if gz.ndim == 1 and not left and not is_sparse_variable(other):
        return tm.outer(other, gz)
    pair = (gz, other_t) if left else (other_t, gz)
    if any(is_sparse_variable(v) for v in pair):
        return _dot(*pair)
    return tm.dot(*pair)


_dot = Dot()


def dot(x: Any, y: Any) -> Variable:
    """The product ``x @ y`` where at least one is sparse (a SciPy matrix or a sparse
    variable): a dense result, with the regular gradient.

    Raises
    ------
    TypeError
        If neither operand is sparse.
    """
    return _dot(x, y)


class TrueDot(Op):
    """The matrix product ``x @ y`` of a sparse ``x`` and a sparse or dense matrix ``y``
    of the same dtype, as a sparse matrix in ``x``'s format, with the regular gradient.

    Parameters
    ----------
    grad_preserves_dense
        Give a dense ``y`` a dense gradient (default); else a sparse one. Not part of the
        Op's identity.
    """

    __props__ = ()

    def __init__(self, grad_preserves_dense: bool = True) -> None:
        self.grad_preserves_dense = bool(grad_preserves_dense)

    def make_node(self, x: Any, y: Any) -> Apply:
        """A sparse matrix and a sparse or dense matrix of its dtype.

        Raises
        ------
        TypeError
            If ``x`` is not sparse, or ``y`` not a matrix.
        NotImplementedError
            For operands of different dtypes (as in PyTensor).
        """
        x = sparse_input(x, "TrueDot", "x")
        y = _operand(y)
        if not is_sparse_variable(y):
            y = _dense_matrix(y, "TrueDot", "y")
        if x.type.dtype != y.type.dtype:
            raise NotImplementedError(
                f"TrueDot: the operands must have one dtype, got {x.type.dtype} and "
                f"{y.type.dtype} (cast one of them)"
            )
        shape = (x.type.shape[0], y.type.shape[1])
        out = SparseTensorType(x.type.format, x.type.dtype, shape=shape)()
        return Apply(self, [x, y], [out])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """``gz @ y.T`` and ``x.T @ gz`` (sparse; the latter dense for a dense ``y`` when
        ``grad_preserves_dense``), each in its input's format."""
        x: Any
        y: Any
        gy: Any
        (x, y), (gz,) = inputs, grads
        gz = as_sparse_gradient(gz, x)
        gx = true_dot(gz, transpose(y) if is_sparse_variable(y) else y.T)
        if is_sparse_variable(y) and y.type.format == x.type.format:
            # x.T @ gz in y's format: the transpose of gz.T @ x
            gy = transpose(true_dot(transpose(gz), x))
        else:
            gy = true_dot(transpose(x), gz)
        if not is_sparse_variable(y) and self.grad_preserves_dense:
            gy = dense_from_sparse(gy)
        return [gx, gy]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``(rows of x, columns of y)``."""
        return [(shapes[0][0], shapes[1][1])]


def true_dot(x: Any, y: Any, grad_preserves_dense: bool = True) -> Variable:
    """The matrix product ``x @ y`` where at least one operand is sparse, as a sparse
    matrix (regular gradient).

    Parameters
    ----------
    x, y
        Matrices of one dtype, at least one sparse (a sparse variable or a SciPy matrix).
        For a dense ``x``, the result is ``(y.T @ x.T).T``, in ``y``'s format.
    grad_preserves_dense
        Give dense operands dense gradients (default).

    Raises
    ------
    TypeError
        If neither operand is sparse.
    """
    x, y = _operand(x), _operand(y)
    product: Any
    if is_sparse_variable(x):
        product = TrueDot(grad_preserves_dense)(x, y)
        return product  # type: ignore[no-any-return]
    if is_sparse_variable(y):
        product = transpose(TrueDot(grad_preserves_dense)(transpose(y), x.T))
        return product  # type: ignore[no-any-return]
    raise TypeError(f"true_dot: at least one operand must be sparse, got {x} and {y}")
