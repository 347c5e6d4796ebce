"""Schur decompositions, with PyTensor's names (``pytensor.tensor.linalg``): :func:`schur`
(``A = Z T Z^H``) and its Op :class:`Schur`; :func:`qz` and :func:`ordqz`, the generalized
(QZ) decomposition of a pair (``A = Q AA Z^H``, ``B = Q BB Z^H``), and their Op :class:`QZ`.

Both Ops take a batch of square matrices ``(..., m, m)`` directly (where PyTensor wraps
them in a ``Blockwise``); the batch axes of ``A`` and ``B`` broadcast where their static
length is 1. The kernels live in the backends (opweave-python calls LAPACK through
``scipy.linalg``, imported only when such a node runs). As in PyTensor, a matrix with a
non-finite entry, or whose decomposition fails, gives NaN outputs for that matrix of the
batch, and the decompositions have no gradient (they are not unique: the columns of the
unitary factors may change phase, the blocks of a real Schur form be chosen differently).

``sort`` moves the selected eigenvalues to the top-left of the Schur forms: ``"lhp"`` (real
part below 0), ``"rhp"`` (real part at least 0 for :class:`Schur`, above 0 for :class:`QZ`),
``"iuc"`` (inside the unit circle), ``"ouc"`` (outside it; for :class:`QZ` the infinite
eigenvalues too), SciPy's conventions. As in PyTensor a callable is not accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from opweave.gradient import grad_not_implemented
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor._linalg_support import (
    batch_shape_of,
    broadcast_batch,
    linalg_output_dtype,
    matrix_input,
    square_shape,
)
from opweave.tensor._typing import tensor_outs, tensor_type_of
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

__all__ = ["QZ", "SORTS", "Schur", "ordqz", "qz", "schur"]

#: The accepted names of the eigenvalue selections (``sort``), besides ``None``.
SORTS = ("lhp", "rhp", "iuc", "ouc")

Sort = Literal["lhp", "rhp", "iuc", "ouc"] | None
Output = Literal["real", "complex"]

_NO_GRADIENT = (
    "the Schur and QZ decompositions are not unique (the unitary factors are determined up "
    "to phases, a real Schur form up to its 2x2 blocks) and have no gradient"
)


def _check_sort(sort: Any, who: str) -> None:
    if sort is not None and (not isinstance(sort, str) or sort not in SORTS):
        raise ValueError(f"{who}: sort must be None or one of {SORTS}, got {sort!r}")


def _check_output(output: Any, who: str) -> None:
    if not isinstance(output, str) or output not in ("real", "complex"):
        raise ValueError(f"{who}: output must be 'real' or 'complex', got {output!r}")


def _check_flag(value: Any, name: str, who: str) -> None:
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{who}: {name} must be a bool, got {value!r}")


def _complex_of(dtype: str) -> str:
    """``dtype`` if complex, else the complex dtype of its precision."""
    return np.result_type(dtype, np.complex64).name


class _Undifferentiated(Op):
    """A decomposition without a gradient (as in PyTensor)."""

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Not implemented (as in PyTensor): a null gradient naming the reason."""
        return [grad_not_implemented(self, i, x, _NO_GRADIENT) for i, x in enumerate(inputs)]


class Schur(_Undifferentiated):
    """The Schur decomposition ``A = Z T Z^H`` of each square matrix of a batch.

    Outputs ``T`` (upper triangular, or quasi-upper triangular with 2x2 blocks for the
    complex-conjugate eigenvalue pairs of a real matrix under ``output="real"``) and the
    unitary ``Z``, both of ``A``'s shape.

    Parameters
    ----------
    output
        ``"real"`` (default) or ``"complex"``: the form computed for a real ``A``. A
        complex ``A`` always gives the complex (triangular) form.
    overwrite_a
        Let the kernel reuse ``A``'s memory (the Op then destroys its input).
    sort
        ``None`` (default) or one of ``"lhp"``, ``"rhp"``, ``"iuc"``, ``"ouc"``: the
        eigenvalues to move to the top-left of ``T``.

    Raises
    ------
    ValueError
        For an unknown ``output`` or ``sort``.
    TypeError
        For an ``overwrite_a`` that is not a bool.
    """

    __props__ = ("output", "overwrite_a", "sort")

    def __init__(
        self, output: Output = "real", overwrite_a: bool = False, sort: Sort = None
    ) -> None:
        _check_output(output, "Schur")
        _check_flag(overwrite_a, "overwrite_a", "Schur")
        _check_sort(sort, "Schur")
        self.output = output
        self.overwrite_a = bool(overwrite_a)
        self.sort = sort
        self.destroy_map = {0: [0]} if self.overwrite_a else {}

    def make_node(self, A: Any) -> Apply:
        """``A``, a (batch of) square matrices; ``T`` and ``Z`` of its shape.

        The outputs have the working dtype of ``A`` (``float32`` for ``float32`` and small
        integers, ``float64`` for wider integers), made complex for ``output="complex"``.

        Raises
        ------
        TypeError
            For an ``A`` that is not a numeric tensor of at least 2 dimensions.
        ValueError
            For an ``A`` that is statically not square.
        """
        A = matrix_input(A, "Schur", "A", square=True)
        dtype = linalg_output_dtype(A.dtype)
        if self.output == "complex":
            dtype = _complex_of(dtype)
        shape = square_shape(A)
        return Apply(self, [A], [TensorType(dtype, shape=shape)() for _ in range(2)])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """Both outputs have ``A``'s shape."""
        return [tuple(shapes[0]), tuple(shapes[0])]


class QZ(_Undifferentiated):
    """The generalized Schur (QZ) decomposition of each pair of square matrices of a batch:
    ``A = Q AA Z^H`` and ``B = Q BB Z^H`` with unitary ``Q``, ``Z``.

    Outputs ``AA``, ``BB``, ``Q``, ``Z``, all ``(..., m, m)``; with ``return_eigenvalues``,
    ``AA``, ``BB``, ``alpha``, ``beta``, ``Q``, ``Z``, where ``alpha / beta`` ``(..., m)``
    are the generalized eigenvalues (``alpha`` is always complex, ``beta`` has the dtype of
    the matrices).

    Parameters
    ----------
    complex_output
        Compute the complex (triangular) form for real inputs. Complex inputs always give
        it.
    overwrite_a, overwrite_b
        Let the kernel reuse the inputs' memory (the Op then destroys them).
    sort
        ``None`` (default) or one of ``"lhp"``, ``"rhp"``, ``"iuc"``, ``"ouc"``: the
        generalized eigenvalues to move to the top-left (``scipy.linalg.ordqz``).
    return_eigenvalues
        Also output ``alpha`` and ``beta``.

    Raises
    ------
    ValueError
        For an unknown ``sort``.
    TypeError
        For a flag that is not a bool.
    """

    __props__ = ("complex_output", "overwrite_a", "overwrite_b", "sort", "return_eigenvalues")

    def __init__(
        self,
        complex_output: bool = False,
        overwrite_a: bool = False,
        overwrite_b: bool = False,
        sort: Sort = None,
        return_eigenvalues: bool = False,
    ) -> None:
        for name, value in (
            ("complex_output", complex_output),
            ("overwrite_a", overwrite_a),
            ("overwrite_b", overwrite_b),
            ("return_eigenvalues", return_eigenvalues),
        ):
            _check_flag(value, name, "QZ")
        _check_sort(sort, "QZ")
        self.complex_output = bool(complex_output)
        self.overwrite_a = bool(overwrite_a)
        self.overwrite_b = bool(overwrite_b)
        self.sort = sort
        self.return_eigenvalues = bool(return_eigenvalues)
        self.destroy_map = {}
        if self.overwrite_a:
            self.destroy_map[0] = [0]
        if self.overwrite_b:
            self.destroy_map[1] = [1]

    def make_node(self, A: Any, B: Any) -> Apply:
        """Two (batches of) square matrices of one order; their batch axes broadcast.

        Raises
        ------
        TypeError
            For an input that is not a numeric tensor of at least 2 dimensions.
        ValueError
            For a statically non-square input, static orders of ``A`` and ``B`` that
            differ, or static batch lengths that do not broadcast.
        """
        A = matrix_input(A, "QZ", "A", square=True)
        B = matrix_input(B, "QZ", "B", square=True)
        known = {n for n in (*A.type.shape[-2:], *B.type.shape[-2:]) if n is not None}
        if len(known) > 1:
            raise ValueError(
                f"QZ: A ({A.type}, static shape {A.type.shape}) and B ({B.type}, static "
                f"shape {B.type.shape}) must be square matrices of the same order"
            )
        (A, B), batch = broadcast_batch([A, B], [2, 2], "QZ")
        m = next(iter(known)) if known else None
        dtype = linalg_output_dtype(A.dtype, B.dtype)
        if self.complex_output:
            dtype = _complex_of(dtype)
        mats = [TensorType(dtype, shape=(*batch, m, m))() for _ in range(4)]
        if not self.return_eigenvalues:
            return Apply(self, [A, B], mats)
        alpha = TensorType(_complex_of(dtype), shape=(*batch, m))()
        beta = TensorType(dtype, shape=(*batch, m))()
        return Apply(self, [A, B], [mats[0], mats[1], alpha, beta, mats[2], mats[3]])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The broadcast batch shape, then the order (twice for the matrices)."""
        a_shape = shapes[0]
        batch = batch_shape_of(node, shapes, len(a_shape) - 2)
        static = tensor_type_of(node.outputs[0]).shape[-1]
        m = a_shape[-1] if static is None else static
        mat, vec = (*batch, m, m), (*batch, m)
        if self.return_eigenvalues:
            return [mat, mat, vec, vec, mat, mat]
        return [mat, mat, mat, mat]


def schur(
    A: Any, output: Output = "real", sort: Sort = None
) -> tuple[TensorVariable, TensorVariable]:
    """The Schur decomposition ``A = Z T Z^H`` of a square matrix (or a batch of them).

    Parameters
    ----------
    A
        ``(..., m, m)``.
    output
        ``"real"`` (default): for a real ``A``, the real Schur form (quasi-upper
        triangular, a 2x2 block per complex-conjugate eigenvalue pair); ``"complex"``:
        the complex, upper triangular form. A complex ``A`` always gives the latter.
    sort
        ``None`` (default), ``"lhp"`` (``Re(w) < 0``), ``"rhp"`` (``Re(w) >= 0``),
        ``"iuc"`` (``|w| <= 1``) or ``"ouc"`` (``|w| > 1``): the eigenvalues ``w`` to put
        first on the diagonal of ``T``.

    Returns
    -------
    T : TensorVariable
        The Schur form, of ``A``'s shape.
    Z : TensorVariable
        The unitary Schur vectors: ``A == Z @ T @ Z.conj().T``.

    Raises
    ------
    ValueError
        For an unknown ``output`` or ``sort``, or an ``A`` that is statically not square.
    TypeError
        For an ``A`` that is not a numeric tensor of at least 2 dimensions.
    """
    T, Z = tensor_outs(Schur(output=output, sort=sort)(A))
    return T, Z


def qz(
    A: Any,
    B: Any,
    output: Output = "real",
    sort: Sort = None,
    return_eigenvalues: bool = False,
) -> tuple[TensorVariable, ...]:
    """The generalized Schur (QZ) decomposition of a pair of square matrices (or batches).

    ``A = Q AA Z^H`` and ``B = Q BB Z^H``, with ``Q``, ``Z`` unitary, ``BB`` upper
    triangular and ``AA`` upper triangular (quasi-upper triangular in the real form).

    Parameters
    ----------
    A, B
        ``(..., m, m)`` each; the batch axes broadcast.
    output
        ``"real"`` (default) or ``"complex"``, as for :func:`schur`.
    sort
        ``None`` (default), or ``"lhp"``, ``"rhp"``, ``"iuc"``, ``"ouc"``: the generalized
        eigenvalues ``alpha / beta`` to put first (``scipy.linalg.ordqz``'s selections;
        unlike ``scipy.linalg.qz``, sorting is accepted here).
    return_eigenvalues
        Also return ``alpha`` and ``beta``.

    Returns
    -------
    tuple of TensorVariable
        ``(AA, BB, Q, Z)``, or ``(AA, BB, alpha, beta, Q, Z)`` with
        ``return_eigenvalues``.

    Raises
    ------
    ValueError
        For an unknown ``output`` or ``sort``, or inputs that are statically not square
        matrices of one order.
    TypeError
        For an input that is not a numeric tensor of at least 2 dimensions.
    """
    _check_output(output, "qz")
    op = QZ(complex_output=output == "complex", sort=sort, return_eigenvalues=return_eigenvalues)
    return tuple(tensor_outs(op(A, B)))


def ordqz(A: Any, B: Any, sort: Sort = None, output: Output = "real") -> tuple[TensorVariable, ...]:
    """The QZ decomposition with its generalized eigenvalues, ``scipy.linalg.ordqz``'s
    signature: :func:`qz` with ``return_eigenvalues=True``.

    Returns
    -------
    tuple of TensorVariable
        ``(AA, BB, alpha, beta, Q, Z)``.
    """
    return qz(A, B, output=output, sort=sort, return_eigenvalues=True)
