"""Products of tensors: the :class:`Dot` and :class:`MatMul` Ops and the functions ``dot``,
``matmul``, ``outer`` and ``tensordot`` (NumPy semantics).

opweave has no separate BLAS Ops: :class:`Dot` computes every product of vectors and
matrices and the backends call BLAS for it. PyTensor's name ``Dot22`` (its matrix-matrix
product Op) is :class:`Dot` here, so that ``isinstance(node.op, Dot22)`` holds for the
products it covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

import opweave.scalar as ps
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor._typing import tensor_out, tensor_vars
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import (
    Elemwise,
    _as_tensor,
    _broadcast_shape,
    _is_weak,
    cast_to,
    left_pad,
    sum_to_broadcast,
    zeros_like_float,
)
from opweave.tensor.shape_ops import Shape_i
from opweave.tensor.type import TensorType, discrete_dtypes
from opweave.tensor.variable import TensorVariable

if TYPE_CHECKING:
    # The check of tensordot's contracted lengths: opweave.raise_op builds on the package
    # opweave.tensor, so import opweave (opweave._wiring) sets it here.
    from opweave.raise_op import Assert

__all__ = ["Dot", "Dot22", "MatMul", "dot", "matmul", "outer", "tensordot"]


def _discrete(x: TensorVariable) -> bool:
    return x.type.dtype in discrete_dtypes


def _match_dtype(g: TensorVariable, x: TensorVariable) -> TensorVariable:
    if _discrete(x) or _discrete(g):
        return g
    return cast_to(g, x.type.dtype)


def _transpose(x: TensorVariable) -> TensorVariable:
    """Swap the last two axes."""
    n = x.type.ndim
    if n < 2:
        return x
    order = [*range(n - 2), n - 1, n - 2]
    return tensor_out(DimShuffle(n, order)(x))


def _check_contraction(what: str, x: TensorVariable, y: TensorVariable, kx: int, ky: int) -> None:
    nx, ny = x.type.shape[kx], y.type.shape[ky]
    if nx is not None and ny is not None and nx != ny:
        raise ValueError(
            f"{what}: the contracted axes do not match: {x} has static shape "
            f"{x.type.shape} and {y} has {y.type.shape} ({nx} != {ny})"
        )


class Dot(Op):
    """The NumPy ``dot`` of vectors and matrices: inner product, matrix-vector,
    vector-matrix or matrix-matrix product.

    The output dtype is the promotion of the inputs' dtypes.
    """

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        """Both inputs 1-d or 2-d, with matching contracted lengths.

        Raises
        ------
        TypeError
            If an input is not 1-d or 2-d.
        ValueError
            If the static lengths of the contracted axes differ.
        """
        x, y = _as_tensor(x), _as_tensor(y)
        for name, v in (("first", x), ("second", y)):
            if v.type.ndim not in (1, 2):
                raise TypeError(
                    f"Dot: the {name} input {v} has {v.type.ndim} dimensions; Dot takes vectors "
                    "and matrices (use dot/tensordot/matmul for other ranks)"
                )
        _check_contraction("Dot", x, y, -1, 0)
        dtype = ps.upcast(x.type.dtype, y.type.dtype)
        shape = x.type.shape[:-1] + y.type.shape[1:]
        return Apply(self, [x, y], [TensorType(dtype, shape=shape)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]) -> list[Any]:
        """``x.shape[:-1] + y.shape[1:]``."""
        xs, ys = shapes
        return [tuple(xs[:-1]) + tuple(ys[1:])]

    def flops(self, inputs: list[tuple[int, ...]], outputs: list[tuple[int, ...]]) -> float:
        """A multiply and an add per term: ``2 * size(output) * contracted length``."""
        (out,) = outputs
        contracted = inputs[0][-1] if inputs[0] else 1
        return 2.0 * float(np.prod(out, dtype=np.float64)) * contracted

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``gz . y^T`` and ``x^T . gz`` (outer products and scalings for vectors)."""
        x, y = tensor_vars(inputs)
        (gz,) = output_grads
        if _discrete(tensor_vars(outputs)[0]):
            return [zeros_like_float(x), zeros_like_float(y)]
        gz = _as_tensor(gz)
        mul = Elemwise(ps.mul)
        xd, yd = x.type.ndim, y.type.ndim
        if xd == 1 and yd == 1:
            gx, gy = tensor_out(mul(gz, y)), tensor_out(mul(gz, x))
        elif xd == 2 and yd == 1:
            gx, gy = outer(gz, y), tensor_out(self(_transpose(x), gz))
        elif xd == 1 and yd == 2:
            gx, gy = tensor_out(self(gz, _transpose(y))), outer(x, gz)
        else:
            gx, gy = tensor_out(self(gz, _transpose(y))), tensor_out(self(_transpose(x), gz))
        return [_match_dtype(gx, x), _match_dtype(gy, y)]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """``dot(ex, y) + dot(x, ey)``."""
        return [_bilinear_rop(self, inputs, eval_points)]

    def __str__(self) -> str:
        return "Dot"


def _bilinear_rop(op: Op, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> Any:
    x, y = inputs
    ex, ey = eval_points
    terms = []
    if ex is not None:
        terms.append(op(ex, y))
    if ey is not None:
        terms.append(op(x, ey))
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else Elemwise(ps.add)(*terms)


_dot = Dot()

#: PyTensor's matrix-matrix product Op: opweave's :class:`Dot` computes it.
Dot22 = Dot


_MATMUL_SIGNATURE = "(m,k),(k,n)->(m,n)"


class MatMul(Blockwise):
    """NumPy's ``matmul`` of two tensors of rank at least 2: matrix products over the last
    two axes, broadcasting the leading (batch) axes like :class:`Elemwise`.

    It is the :class:`~opweave.tensor.blockwise.Blockwise` of :class:`Dot` with the
    signature ``(m,k),(k,n)->(m,n)``, as in PyTensor, so code that matches a ``Blockwise``
    (or rebuilds one from ``_props_dict()``) sees the batched product it expects; backends
    implement this class directly, without a loop over the batch.

    Inputs of different ranks are left-padded with broadcastable axes. A batch axis whose
    static length is unknown must not broadcast at run time.

    Parameters
    ----------
    core_op
        The core product; only a :class:`Dot` is accepted (default: a new ``Dot``).
    signature
        Only ``"(m,k),(k,n)->(m,n)"`` (the default) is accepted.
    name, gufunc_spec, destroy_map
        As for :class:`~opweave.tensor.blockwise.Blockwise`.

    Raises
    ------
    TypeError
        If ``core_op`` is not a :class:`Dot`.
    ValueError
        If ``signature`` is not the matrix product's.
    """

    def __init__(
        self,
        core_op: Op | None = None,
        signature: str | None = None,
        name: str | None = None,
        gufunc_spec: tuple[str, int, int] | None = None,
        destroy_map: dict[int, list[int]] | None = None,
    ) -> None:
        core_op = Dot() if core_op is None else core_op
        if not isinstance(core_op, Dot):
            raise TypeError(f"MatMul: core_op must be a Dot, got {core_op!r}")
        signature = _MATMUL_SIGNATURE if signature is None else signature
        if signature.replace(" ", "") != _MATMUL_SIGNATURE:
            raise ValueError(
                f"MatMul: the signature must be {_MATMUL_SIGNATURE!r}, got {signature!r}"
            )
        super().__init__(
            core_op,
            _MATMUL_SIGNATURE,
            name=name,
            gufunc_spec=gufunc_spec or ("numpy.matmul", 2, 1),
            destroy_map=destroy_map,
        )

    def make_node(self, x: Any, y: Any) -> Apply:
        """Check ranks, batch shapes and contracted lengths.

        Raises
        ------
        TypeError
            If an input has fewer than 2 dimensions.
        ValueError
            If static batch shapes cannot broadcast or contracted lengths differ.
        """
        x, y = _as_tensor(x), _as_tensor(y)
        for name, v in (("first", x), ("second", y)):
            if v.type.ndim < 2:
                raise TypeError(
                    f"MatMul: the {name} input {v} has {v.type.ndim} dimensions; MatMul needs "
                    "at least 2 (matmul() handles vectors)"
                )
        ndim = max(x.type.ndim, y.type.ndim)
        x, y = left_pad(x, ndim), left_pad(y, ndim)
        _check_contraction("MatMul", x, y, -1, -2)
        batch = _broadcast_shape([x.type.shape[:-2], y.type.shape[:-2]], "MatMul")
        dtype = ps.upcast(x.type.dtype, y.type.dtype)
        shape = (*batch, x.type.shape[-2], y.type.shape[-1])
        return Apply(self, [x, y], [TensorType(dtype, shape=shape)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]) -> list[Any]:
        """Broadcast batch axes, then ``(x.shape[-2], y.shape[-1])``."""
        x = tensor_vars(node.inputs)[0]
        xs, ys = shapes
        static = tensor_vars(node.outputs)[0].type.shape
        batch: list[Any] = []
        for axis in range(len(xs) - 2):
            if static[axis] is not None:
                batch.append(static[axis])
            elif x.type.shape[axis] != 1:
                batch.append(xs[axis])
            else:
                batch.append(ys[axis])
        return [(*batch, xs[-2], ys[-1])]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``gz @ y^T`` and ``x^T @ gz``, summed over the batch axes each input broadcast on."""
        x, y = tensor_vars(inputs)
        (gz,) = output_grads
        out = tensor_vars(outputs)[0]
        if _discrete(out):
            return [zeros_like_float(x), zeros_like_float(y)]
        gz = _as_tensor(gz)
        batch = out.type.shape[:-2]
        gx = sum_to_broadcast(tensor_out(self(gz, _transpose(y))), x, batch + x.type.shape[-2:])
        gy = sum_to_broadcast(tensor_out(self(_transpose(x), gz)), y, batch + y.type.shape[-2:])
        return [_match_dtype(gx, x), _match_dtype(gy, y)]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """``ex @ y + x @ ey``."""
        return [_bilinear_rop(self, inputs, eval_points)]

    def __str__(self) -> str:
        return "MatMul"


_matmul = MatMul()


# ====================================================================== functions


def dot(a: Any, b: Any) -> TensorVariable:
    """NumPy's ``dot``: a product of scalars, an inner, matrix-vector or matrix product, or
    for higher ranks a sum over the last axis of ``a`` and the second-to-last of ``b``.
    """
    if _is_weak(a) or _is_weak(b):
        return tensor_out(Elemwise(ps.mul)(a, b))
    a, b = _as_tensor(a), _as_tensor(b)
    if a.type.ndim == 0 or b.type.ndim == 0:
        return tensor_out(Elemwise(ps.mul)(a, b))
    if a.type.ndim <= 2 and b.type.ndim <= 2:
        return tensor_out(_dot(a, b))
    b_axis = b.type.ndim - 2 if b.type.ndim >= 2 else 0
    return tensordot(a, b, [[a.type.ndim - 1], [b_axis]])


def matmul(a: Any, b: Any, dtype: Any = None) -> TensorVariable:
    """NumPy's ``matmul`` (the ``@`` operator): a 1-d operand is promoted to a matrix and
    the added axis removed from the result; leading axes broadcast.

    Parameters
    ----------
    a, b
        Tensors of at least one dimension.
    dtype
        The result's dtype (a cast of the product); ``None`` keeps the promoted dtype.

    Raises
    ------
    ValueError
        For 0-d operands.
    """
    out = _matmul_of(_as_tensor(a), _as_tensor(b))
    return out if dtype is None else cast_to(out, str(np.dtype(dtype)))


def _matmul_of(a: TensorVariable, b: TensorVariable) -> TensorVariable:
    """``MatMul`` for every rank, as PyTensor builds it: a vector operand becomes a one-row
    (left) or one-column (right) matrix, and that axis is dropped from the result. The
    ``canonicalize`` phase turns an unbatched ``MatMul`` back into ``Dot``."""
    if a.type.ndim == 0 or b.type.ndim == 0:
        raise ValueError(
            "matmul: operands cannot be scalar (they need at least one dimension; use mul "
            "for scalars)"
        )
    if a.type.ndim == 1 and b.type.ndim == 1:
        product = tensor_out(_matmul(_expand(a, ["x", 0]), _expand(b, [0, "x"])))
        return tensor_out(DimShuffle(2, [])(product))
    if a.type.ndim == 1:
        # PyTensor's vecmat: b's transposed matrices times a as a column.
        product = tensor_out(_matmul(_transpose(b), _expand(a, [0, "x"])))
    elif b.type.ndim == 1:
        product = tensor_out(_matmul(a, _expand(b, [0, "x"])))
    else:
        return tensor_out(_matmul(a, b))
    nd = product.type.ndim
    return tensor_out(DimShuffle(nd, list(range(nd - 1)))(product))


def _expand(x: TensorVariable, order: list[int | str]) -> TensorVariable:
    return tensor_out(DimShuffle(1, order)(x))


def outer(x: Any, y: Any) -> TensorVariable:
    """The outer product of two vectors (other ranks are flattened first, as in NumPy)."""
    x, y = _as_tensor(x), _as_tensor(y)
    if x.type.ndim != 1:
        x = _flatten(x)
    if y.type.ndim != 1:
        y = _flatten(y)
    return tensor_out(Elemwise(ps.mul)(DimShuffle(1, [0, "x"])(x), DimShuffle(1, ["x", 0])(y)))


def _flatten(x: TensorVariable) -> TensorVariable:
    if x.type.ndim == 0:
        return tensor_out(DimShuffle(0, ["x"])(x))
    # late: opweave.tensor.shape builds on this module (same floor, above it)
    from opweave.tensor.shape import reshape

    return reshape(x, (-1,), ndim=1)


def _normalize_tensordot_axes(
    a: TensorVariable, b: TensorVariable, axes: Any
) -> tuple[list[int], list[int]]:
    na, nb = a.type.ndim, b.type.ndim
    if isinstance(axes, int | np.integer):
        n = int(axes)
        if n < 0 or n > na or n > nb:
            raise ValueError(
                f"tensordot: axes={n} needs both inputs to have at least {n} dimensions "
                f"(they have {na} and {nb})"
            )
        return list(range(na - n, na)), list(range(n))
    try:
        a_axes, b_axes = axes
    except (TypeError, ValueError):
        raise ValueError(
            f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}"
        ) from None
    a_axes = [a_axes] if isinstance(a_axes, int | np.integer) else list(a_axes)
    b_axes = [b_axes] if isinstance(b_axes, int | np.integer) else list(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: the axis lists {a_axes} and {b_axes} have different lengths")
    norm_a: list[int] = []
    norm_b: list[int] = []
    for ax, n, out in ((a_axes, na, norm_a), (b_axes, nb, norm_b)):
        for i in ax:
            i = int(i)
            if not -n <= i < n:
                raise ValueError(f"tensordot: axis {i} is out of range for a {n}-d input")
            if i % n in out:
                raise ValueError(f"tensordot: axis {i} is repeated")
            out.append(i % n)
    return norm_a, norm_b


def _length(x: TensorVariable, axes: Sequence[int]) -> Any:
    """The product of ``x``'s lengths over ``axes``: an int when static, else a variable."""
    static = [x.type.shape[i] for i in axes]
    if all(n is not None for n in static):
        return int(np.prod(cast("list[int]", static), dtype=np.int64))
    terms: list[Any] = [Shape_i(i)(x) for i, n in zip(axes, static) if n is None]
    known = int(np.prod([n for n in static if n is not None], dtype=np.int64))
    if known != 1:
        terms.append(known)
    return terms[0] if len(terms) == 1 else Elemwise(ps.mul)(*terms)


def _simple_tensordot(
    a: TensorVariable, b: TensorVariable, a_axes: Sequence[int], b_axes: Sequence[int]
) -> TensorVariable | None:
    """The product of two scalars, or one :func:`dot` of (transposed) vectors and matrices
    contracting one axis each; ``None`` when the general construction is needed."""
    nd_a, nd_b = a.type.ndim, b.type.ndim
    if nd_a == 0 and nd_b == 0 and not a_axes:
        return tensor_out(a * b)
    if len(a_axes) != 1 or not (0 < nd_a <= 2 and 0 < nd_b <= 2):
        return None
    a2 = a if a_axes[0] == nd_a - 1 else _transpose(a)
    b2 = b if b_axes[0] == 0 else _transpose(b)
    return dot(a2, b2)


def _assert_contracted_lengths(
    a: TensorVariable, b: TensorVariable, a_axes: Sequence[int], b_axes: Sequence[int]
) -> TensorVariable:
    """``a``, behind an :class:`~opweave.raise_op.Assert` that the contracted lengths match
    where the types do not show it.

    The contracted axes are merged into one before the :class:`Dot`, which checks only the
    merged length: with two or more pairs of lengths unknown to the types, lengths that
    differ but have the same product would go through. The first unknown pair needs no
    check (the merged lengths then differ when it does not match); each further one gets
    one, as in PyTensor.
    """
    unknown = [
        (i, j) for i, j in zip(a_axes, b_axes) if a.type.shape[i] is None or b.type.shape[j] is None
    ]
    if len(unknown) < 2:
        return a
    conds = [Elemwise(ps.eq)(Shape_i(i)(a), Shape_i(j)(b)) for i, j in unknown[1:]]
    check = Assert("Input array shape along reduced axes of tensordot are not equal")
    return tensor_out(check(a, *conds))


def tensordot(a: Any, b: Any, axes: Any = 2) -> TensorVariable:
    """Sum products over the given axes (NumPy's ``tensordot``).

    Parameters
    ----------
    a, b
        Tensors.
    axes
        An int ``n`` (the last ``n`` axes of ``a`` with the first ``n`` of ``b``) or a pair
        of axis sequences.

    Returns
    -------
    TensorVariable
        The free axes of ``a`` followed by those of ``b``. Built from DimShuffle, reshape
        and :class:`Dot`.
    """
    a, b = _as_tensor(a), _as_tensor(b)
    a_axes, b_axes = _normalize_tensordot_axes(a, b, axes)
    for i, j in zip(a_axes, b_axes):
        na, nb = a.type.shape[i], b.type.shape[j]
        if na is not None and nb is not None and na != nb:
            raise ValueError(
                "Input arrays have inconsistent type shape along the axes that are to be "
                f"reduced with tensordot: axis {i} of the first input (length {na}) does not "
                f"match axis {j} of the second (length {nb})"
            )
    a = _assert_contracted_lengths(a, b, a_axes, b_axes)
    simple = _simple_tensordot(a, b, a_axes, b_axes)
    if simple is not None:
        return simple
    free_a = [i for i in range(a.type.ndim) if i not in a_axes]
    free_b = [j for j in range(b.type.ndim) if j not in b_axes]
    at = DimShuffle(a.type.ndim, free_a + a_axes)(a)
    bt = DimShuffle(b.type.ndim, b_axes + free_b)(b)
    # late: opweave.tensor.shape builds on this module (same floor, above it)
    from opweave.tensor.shape import reshape

    k = _length(a, a_axes) if a_axes else 1
    a2 = reshape(at, [_length(a, free_a), k] if free_a else [k], ndim=2 if free_a else 1)
    b2 = reshape(bt, [k, _length(b, free_b)] if free_b else [k], ndim=2 if free_b else 1)
    out = tensor_out(_dot(a2, b2))
    if len(free_a) <= 1 and len(free_b) <= 1:
        return out
    shape = [_length(a, [i]) for i in free_a] + [_length(b, [j]) for j in free_b]
    return reshape(out, shape, ndim=len(shape))
