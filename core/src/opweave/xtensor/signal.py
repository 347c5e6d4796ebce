"""Signal processing on named-dimension tensors (PyTensor's ``pytensor.xtensor.signal``)."""

from __future__ import annotations

from typing import Any, Literal
from typing import cast as _type_cast

import numpy as np

from opweave.scalar.basic import as_scalar
from opweave.tensor.basic import zeros
from opweave.tensor.signal.conv import _convolve_1d
from opweave.xtensor.shape import concat
from opweave.xtensor.type import XTensorVariable, as_xtensor
from opweave.xtensor.vectorization import XBlockwise

__all__ = ["convolve1d"]


def convolve1d(
    in1: Any,
    in2: Any,
    mode: Literal["full", "valid", "same"] = "full",
    *,
    dims: tuple[str, str],
) -> XTensorVariable:
    """The discrete linear convolution of ``in1`` and ``in2`` along one dimension each.

    Parameters
    ----------
    in1, in2
        The inputs; their other dimensions are batch dimensions, broadcast by name.
    mode
        ``"full"``: the whole convolution, of length ``N + M - 1``; ``"valid"``: only the
        values that need no zero padding, of length ``max(N, M) - min(N, M) + 1``;
        ``"same"``: the length of ``in1``, centred on the full convolution.
    dims
        The convolved dimension of ``in1`` and that of ``in2``, which must differ; the
        output keeps the first.

    Returns
    -------
    XTensorVariable
        The convolution, with the batch dimensions first, then ``dims[0]``.

    Raises
    ------
    ValueError
        If ``dims`` does not hold two distinct names or ``mode`` is unknown.
    """
    if len(dims) != 2:
        raise ValueError(f"Two dims required, got {dims}")
    in1_dim, in2_dim = dims
    if in1_dim == in2_dim:
        raise ValueError(f"The two dims must be unique, got {dims}")
    in1, in2 = as_xtensor(in1), as_xtensor(in2)
    if mode == "same":
        # "same" is "valid" on in1 padded with zeros on both sides.
        axis = in2.type.dims.index(in2_dim)
        static_len = in2.type.shape[axis]
        in2_len: Any = in2.values.shape[axis] if static_len is None else static_len
        left = as_xtensor(zeros(in2_len // 2, dtype=in1.type.dtype), dims=(in1_dim,))
        right = as_xtensor(zeros((in2_len - 1) // 2, dtype=in1.type.dtype), dims=(in1_dim,))
        in1 = concat([left, in1, right], dim=in1_dim)
        mode = "valid"
    elif mode not in ("full", "valid"):
        raise ValueError(f"mode must be one of 'full', 'valid', or 'same', got {mode}")
    full_mode = as_scalar(np.bool_(mode == "full"))
    x_op = XBlockwise(
        _convolve_1d,
        core_dims=(((in1_dim,), (in2_dim,), ()), ((in1_dim,),)),
        signature=_convolve_1d.gufunc_signature,
    )
    return _type_cast(XTensorVariable, x_op(in1, in2, full_mode))
