"""The discrete Fourier transform along one axis (``pytensor.tensor.fourier``):
:class:`Fourier` and its instance :data:`fft`, called as ``fft(a, n, axis)``.

For real-input transforms with gradients in real arithmetic, :mod:`opweave.tensor.fft` is
the supported module. The kernels live in the backends.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor._typing import tensor_out, tensor_var
from opweave.tensor.basic import (
    _const_int,
    arange,
    as_tensor_variable,
    concatenate,
    split,
    stack,
    switch,
)
from opweave.tensor.math import exp, lt, outer, tensordot
from opweave.tensor.shape import shape
from opweave.tensor.subtensor import set_subtensor
from opweave.tensor.type import TensorType, integer_dtypes
from opweave.tensor.variable import TensorConstant, TensorVariable

__all__ = ["Fourier", "fft"]


def _axis_input(a: TensorVariable, axis: Any) -> TensorVariable:
    """``axis`` as a 0-d integer input (the last axis for ``None``), checked when constant."""
    if axis is None:
        return as_tensor_variable(a.ndim - 1)
    var = as_tensor_variable(axis)
    if var.dtype not in integer_dtypes:
        raise TypeError("Index of the transformed axis must be of type integer")
    if var.ndim != 0 or (
        isinstance(var, TensorConstant) and (var.data < 0 or var.data > a.ndim - 1)
    ):
        raise TypeError(
            "Index of the transformed axis must be a scalar not smaller than 0 and smaller "
            "than dimension of array"
        )
    return var


def _length_input(a: TensorVariable, n: Any, axis: TensorVariable) -> TensorVariable:
    """``n`` as a 0-d integer input (the length of ``a`` along ``axis`` for ``None``)."""
    if n is None:
        return as_tensor_variable(a.shape[axis])
    var = as_tensor_variable(n)
    if var.dtype not in integer_dtypes:
        raise TypeError("Length of the transformed axis must be of type integer")
    if var.ndim != 0 or (isinstance(var, TensorConstant) and var.data < 1):
        raise TypeError("Length of the transformed axis must be a strictly positive scalar")
    return var


class Fourier(Op):
    """``numpy.fft.fft(a, n, axis)``: the complex128 discrete Fourier transform of ``a``
    along one axis.

    For officially supported FFTs, use :mod:`opweave.tensor.fft`, which provides
    real-input FFTs with gradients.

    Inputs: ``a`` (at least 1-d, possibly complex); ``n`` (the length of the transformed
    axis of the output: the input is cropped when it is longer, padded with zeros when it
    is shorter; default the input's length along ``axis``); ``axis`` (default the last).

    The values follow NumPy's standard order: if ``A = fft(a, n)``, ``A[0]`` is the
    zero-frequency term, ``A[1:n/2]`` the positive frequencies and ``A[n/2+1:]`` the
    negative ones, in order of decreasingly negative frequency.
    """

    __props__ = ()

    def make_node(self, a: Any, n: Any, axis: Any) -> Apply:
        """The node of ``a``, ``n`` and ``axis``.

        The output's static shape is ``a``'s with ``n`` along ``axis``, where both are
        constants; the transformed length is unknown when ``n`` is, and every length is
        unknown when ``axis`` is.

        Raises
        ------
        TypeError
            For a 0-d ``a``, a non-integer or out-of-range ``axis``, or a non-integer or
            non-positive ``n``.
        """
        a = as_tensor_variable(a)
        if a.ndim < 1:
            raise TypeError("Input must be an array, not a scalar")
        axis_var = _axis_input(a, axis)
        n_var = _length_input(a, n, axis_var)
        known_axis = _const_int(axis_var)
        out_shape: tuple[int | None, ...]
        if known_axis is None:
            out_shape = (None,) * a.ndim
        else:
            static = list(a.type.shape)
            static[known_axis] = _const_int(n_var)
            out_shape = tuple(static)
        return Apply(self, [a, n_var, axis_var], [TensorType("complex128", shape=out_shape)()])

    def infer_shape(self, fgraph: Any, node: Apply, in_shapes: list[Any]) -> list[Any]:
        """``a``'s shape with ``n`` along ``axis``."""
        shape_a = in_shapes[0]
        n = node.inputs[1]
        axis = tensor_var(node.inputs[2])
        if len(shape_a) == 1:
            return [(n,)]
        if isinstance(axis, TensorConstant):
            index = int(axis.data.item())
            return [[*shape_a[0:index], n, *shape_a[index + 1 :]]]
        length = len(shape_a)
        stacked = stack(shape_a)
        out_shape = concatenate((stacked[0:axis], [n], stacked[axis + 1 :]))
        pieces = split(out_shape, [1] * length, n_splits=length)
        return [[piece[0] for piece in pieces]]

    def grad(self, inputs: Sequence[Variable], cost_grad: Sequence[Variable]) -> list[Any]:
        """The gradient of the transform viewed as a complex-differentiable function of a
        complex variable (for a constant ``axis`` only).

        Raises
        ------
        NotImplementedError
            When ``axis`` is not a constant.
        """
        a = tensor_var(inputs[0])
        n = tensor_var(inputs[1])
        axis_var = inputs[2]
        grad = tensor_var(cost_grad[0])
        if not isinstance(axis_var, TensorConstant):
            raise NotImplementedError(
                f"{self.__class__.__name__}: gradient is currently implemented"
                " only for axis being an opweave constant"
            )
        axis = int(axis_var.data)
        # The number of elements of ``a`` does not depend on padding or truncation.
        elem = arange(0, shape(a)[axis], 1)
        # Padding:
        freq = arange(0, n, 1)
        outer_res = outer(freq, elem)
        pow_outer = exp(((-2 * math.pi * 1j) * outer_res) / (1.0 * n))
        res = tensordot(grad, pow_outer, (axis, 0))
        # Truncation: zero the rows past n (the transformed axis is last in ``res``).
        flip_shape = list(np.arange(0, a.ndim)[::-1])
        res = res.dimshuffle(flip_shape)
        res = tensor_out(
            switch(lt(n, shape(a)[axis]), set_subtensor(res[n::,], 0, False, False), res)
        )
        res = res.dimshuffle(flip_shape)
        # Back to the input's axis order:
        out_shape = [*np.arange(0, axis), a.ndim - 1, *np.arange(axis, a.ndim - 1)]
        res = res.dimshuffle(*out_shape)
        return [res, None, None]


#: The :class:`Fourier` instance: ``fft(a, n, axis)``.
fft = Fourier()
