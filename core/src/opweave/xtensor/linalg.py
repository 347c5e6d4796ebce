"""Linear algebra on named-dimension tensors (PyTensor's ``pytensor.xtensor.linalg``).

The matrices are given by the names of their two core dimensions; every other dimension is
a batch dimension. Each function wraps a tensor linear-algebra Op in an
:class:`~opweave.xtensor.vectorization.XBlockwise`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal
from typing import cast as _type_cast

from opweave.tensor.slinalg import Cholesky, Solve
from opweave.xtensor.type import XTensorVariable, as_xtensor
from opweave.xtensor.vectorization import XBlockwise

__all__ = ["cholesky", "solve"]


def cholesky(
    x: Any,
    lower: bool = True,
    *,
    check_finite: bool = True,
    dims: Sequence[str],
) -> XTensorVariable:
    """The Cholesky factor of each symmetric positive-definite matrix of ``x``.

    Parameters
    ----------
    x
        The matrices.
    lower
        Return the lower factor ``L`` (``L @ L.T == x``); else the upper one.
    check_finite
        Not used (a matrix that is not positive definite gives NaN).
    dims
        The two core dimensions of ``x`` (rows, columns); the factor keeps them.

    Returns
    -------
    XTensorVariable
        The factors, with the batch dimensions first, then ``dims``.

    Raises
    ------
    ValueError
        If ``dims`` does not hold two names.
    """
    if len(dims) != 2:
        raise ValueError(f"Cholesky needs two dims, got {len(dims)}")
    core = (dims[0], dims[1])
    x_op = XBlockwise(Cholesky(lower=lower), core_dims=((core,), (core,)))
    return _type_cast(XTensorVariable, x_op(x))


def solve(
    a: Any,
    b: Any,
    dims: Sequence[str],
    assume_a: Literal[
        "gen",
        "sym",
        "her",
        "pos",
        "tridiagonal",
        "banded",
        "general",
        "symmetric",
        "hermitian",
        "positive definite",
    ] = "gen",
    lower: bool = False,
    check_finite: bool = True,
) -> XTensorVariable:
    """Solve ``a @ x = b`` over the core dimensions ``dims``.

    Parameters
    ----------
    a
        The square matrices.
    b
        The right-hand sides: vectors or matrices.
    dims
        Two names for a matrix-vector system: both dimensions of ``a``, one of which ``b``
        holds (the one summed over). Three names for a matrix-matrix system: two of them
        in ``a``, two in ``b``, exactly one shared (the one summed over). The shared
        dimension is not in the result.
    assume_a
        The structure of ``a``: ``"gen"``, ``"sym"``, ``"her"``, ``"pos"``,
        ``"tridiagonal"`` or ``"banded"`` (or the long names ``"general"``,
        ``"symmetric"``, ``"hermitian"``, ``"positive definite"``).
    lower
        For ``"sym"``, ``"her"`` and ``"pos"``: read the lower triangle of ``a``.
    check_finite
        Not used (a failing solve gives NaN).

    Returns
    -------
    XTensorVariable
        The solutions: the batch dimensions, then the row dimension of ``a`` (and, for
        matrices, the column dimension of ``b``).

    Raises
    ------
    ValueError
        If ``dims`` does not hold two or three names, or they do not fit ``a`` and ``b``
        as described.
    """
    a, b = as_xtensor(a), as_xtensor(b)
    input_core_dims: tuple[tuple[str, ...], tuple[str, ...]]
    output_core_dims: tuple[str, ...]
    if len(dims) == 2:
        b_ndim = 1
        not_in_b = [d for d in dims if d not in b.type.dims]
        if len(not_in_b) != 1:
            raise ValueError(
                f"Exactly one of dims {tuple(dims)} must be missing from b, "
                f"which has dims {b.type.dims}"
            )
        [m1_dim] = not_in_b
        m2_dim = dims[0] if dims[0] != m1_dim else dims[1]
        input_core_dims = ((m1_dim, m2_dim), (m2_dim,))
        output_core_dims = (m1_dim,)
    elif len(dims) == 3:
        b_ndim = 2
        not_in_a = [d for d in dims if d not in a.type.dims]
        if len(not_in_a) != 1:
            raise ValueError(
                f"Exactly one of dims {tuple(dims)} must be missing from a, "
                f"which has dims {a.type.dims}"
            )
        [n_dim] = not_in_a
        m1_dim, m2_dim = (d for d in dims if d != n_dim)
        input_core_dims = ((m1_dim, m2_dim), (m2_dim, n_dim))
        output_core_dims = (m1_dim, n_dim)
    else:
        raise ValueError("Solve dims must have length 2 or 3")
    core_op = Solve(b_ndim=b_ndim, assume_a=assume_a, lower=lower)
    x_op = XBlockwise(core_op, core_dims=(input_core_dims, (output_core_dims,)))
    return _type_cast(XTensorVariable, x_op(a, b))
