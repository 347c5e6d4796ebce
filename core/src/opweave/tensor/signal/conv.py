"""Discrete linear convolution: :class:`Convolve1d` and :class:`Convolve2d` (the core Ops,
``full`` or ``valid`` by a boolean scalar input) and the functions ``convolve1d`` and
``convolve2d``, which batch them with :class:`~opweave.tensor.blockwise.Blockwise` and give
the ``same`` mode (and ``convolve2d``'s boundaries) by padding the first input.

PyTensor's ``pytensor.tensor.signal.conv``; the backends hold the kernels (NumPy's
``convolve`` and SciPy's ``signal.convolve`` in opweave-python).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, cast

import numpy as np

from opweave.graph.basic import Apply, Constant
from opweave.graph.op import Op
from opweave.graph.replace import _vectorize_node
from opweave.graph.type import disconnected_type
from opweave.scalar.basic import as_scalar
from opweave.scalar.type import upcast
from opweave.tensor._typing import tensor_out, tensor_var
from opweave.tensor.basic import join, zeros
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.math import maximum, minimum, switch
from opweave.tensor.pad import pad
from opweave.tensor.subtensor import flip
from opweave.tensor.type import tensor
from opweave.tensor.variable import TensorVariable

__all__ = ["AbstractConvolveNd", "Convolve1d", "Convolve2d", "convolve1d", "convolve2d"]


class AbstractConvolveNd:
    """The symbolic part shared by the ``ndim``-dimensional convolutions: two ``ndim``-d
    tensors and a boolean scalar (``True``: full, ``False``: valid) give one tensor."""

    __props__: tuple[str, ...] = ()
    ndim: int

    @property
    def gufunc_signature(self) -> str:
        """``(n0,...),(k0,...),()->(o0,...)``."""
        data_signature = ",".join([f"n{i}" for i in range(self.ndim)])
        kernel_signature = ",".join([f"k{i}" for i in range(self.ndim)])
        output_signature = ",".join([f"o{i}" for i in range(self.ndim)])
        return f"({data_signature}),({kernel_signature}),()->({output_signature})"

    def make_node(self, in1: Any, in2: Any, full_mode: Any) -> Apply:
        """Two ``ndim``-d tensors and a boolean scalar; the output's dtype is the inputs'
        upcast, its lengths static when the mode is a constant and both lengths are."""
        in1 = as_tensor_variable(in1)
        in2 = as_tensor_variable(in2)
        full_mode = as_scalar(full_mode)
        ndim = self.ndim
        if not (in1.ndim == ndim and in2.ndim == ndim):
            raise ValueError(
                f"Convolution inputs must have ndim={ndim}, got: in1={in1.ndim}, in2={in2.ndim}"
            )
        if full_mode.dtype != "bool":
            raise ValueError("Convolution full_mode flag must be a boolean type")
        static_mode = (
            ("full" if full_mode.data else "valid") if isinstance(full_mode, Constant) else None
        )
        out_shape: list[int | None] = []
        for n, k in zip(in1.type.shape, in2.type.shape, strict=True):
            if static_mode is None or n is None or k is None:
                out_shape.append(None)
            elif static_mode == "full":
                out_shape.append(n + k - 1)
            else:
                out_shape.append(max(n, k) - min(n, k) + 1)
        out = tensor(dtype=upcast(in1.dtype, in2.dtype), shape=tuple(out_shape))
        return Apply(self, [in1, in2, full_mode], [out])  # type: ignore[arg-type]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``n + k - 1`` (full) or ``max(n, k) - min(n, k) + 1`` (valid) per dimension."""
        _, _, full_mode = node.inputs
        in1_shape, in2_shape, _ = shapes
        out_shape: list[Any] = [
            switch(full_mode, n + k - 1, tensor_out(maximum(n, k)) - minimum(n, k) + 1)
            for n, k in zip(in1_shape, in2_shape, strict=True)
        ]
        return [out_shape]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The mode flag has no gradient."""
        return [[True], [True], [False]]

    def L_op(self, inputs: Any, outputs: Any, output_grads: Any) -> list[Any]:
        """Convolutions of the output gradient with the other input flipped: ``valid`` where
        the forward was full or the gradient's input was the larger one, else ``full``.

        Assumes one input's shape dominates the other's in every dimension (which a valid
        convolution requires).
        """
        in1, in2, full_mode = inputs
        [grad] = output_grads
        n = tensor_var(in1).shape
        k = tensor_var(in2).shape
        # ~(full_mode | (k >= n)) for in1's gradient, ~(full_mode | (n >= k)) for in2's.
        full_mode_in1_bar = ~full_mode & (k < n).any()
        full_mode_in2_bar = ~full_mode & (n < k).any()
        call = cast("Callable[..., Any]", self)  # an Op: calling it builds a node
        return [
            call(grad, flip(in2), full_mode_in1_bar),
            call(grad, flip(in1), full_mode_in2_bar),
            disconnected_type(),
        ]


class Convolve1d(AbstractConvolveNd, Op):
    """One-dimensional convolution of two vectors, ``full`` or ``valid`` by the boolean
    third input (``numpy.convolve``'s modes)."""

    __props__ = ()
    ndim = 1


def _vectorize_convolve(op: Any, node: Apply, *batched_inputs: Any) -> Apply:
    """The convolution itself when no input gained batch dimensions, else its
    :class:`Blockwise`.

    A batched mode flag (the gradient's, computed from the batched inputs' shapes, hence
    the same in every entry) is reduced to one flag with ``any``: every entry of a batch
    has the same output length, and backends that compile for fixed shapes need one mode.
    """
    in1, in2, flag = batched_inputs
    gained = [
        getattr(new.type, "ndim", 0) != getattr(old.type, "ndim", 0)
        for old, new in zip(node.inputs, batched_inputs, strict=True)
    ]
    if gained[2]:
        flag = tensor_var(flag).any()
    if not any(gained[:2]):
        return op.make_node(in1, in2, flag)  # type: ignore[no-any-return]
    return Blockwise(op, signature=op.gufunc_signature).make_node(in1, in2, flag)


_vectorize_node.register(Convolve1d, _vectorize_convolve)

_convolve_1d = Convolve1d()
_blockwise_convolve_1d = Blockwise(_convolve_1d)


def convolve1d(
    in1: Any, in2: Any, mode: Literal["full", "valid", "same"] = "full"
) -> TensorVariable:
    """Convolve two one-dimensional arrays (batched over leading dimensions).

    Parameters
    ----------
    in1 : (..., N,) tensor_like
        First input.
    in2 : (..., M,) tensor_like
        Second input.
    mode : {'full', 'valid', 'same'}, optional
        The size of the output: ``'full'``, the full discrete linear convolution, of shape
        ``(..., N+M-1)``; ``'valid'``, the elements that do not rely on zero-padding, of
        shape ``(..., max(N, M) - min(N, M) + 1)``; ``'same'``, the size of ``in1``,
        centered with respect to the ``'full'`` output.

    Returns
    -------
    TensorVariable
        The discrete linear convolution of ``in1`` with ``in2``.
    """
    in1 = as_tensor_variable(in1)
    in2 = as_tensor_variable(in2)
    if mode == "same":
        # "same" is "valid" with a zero-padded in1.
        in1_batch_shape = tuple(in1.shape)[:-1]
        zeros_left = in2.shape[-1] // 2
        zeros_right = (in2.shape[-1] - 1) // 2
        in1 = join(
            -1,
            zeros((*in1_batch_shape, zeros_left), dtype=in1.dtype),
            in1,
            zeros((*in1_batch_shape, zeros_right), dtype=in1.dtype),
        )
        mode = "valid"
    full_mode = as_scalar(np.bool_(mode == "full"))
    return tensor_out(_blockwise_convolve_1d(in1, in2, full_mode))


class Convolve2d(AbstractConvolveNd, Op):
    """Two-dimensional convolution of two matrices, ``full`` or ``valid`` by the boolean
    third input.

    Parameters
    ----------
    method
        SciPy's ``signal.convolve`` method: ``"direct"``, ``"fft"`` or ``"auto"``.
    """

    __props__ = ("method",)
    ndim = 2

    def __init__(self, method: Literal["direct", "fft", "auto"] = "auto") -> None:
        self.method = method


def convolve2d(
    in1: Any,
    in2: Any,
    mode: Literal["full", "valid", "same"] = "full",
    boundary: Literal["fill", "wrap", "symm"] = "fill",
    fillvalue: float | int = 0,
    method: Literal["direct", "fft", "auto"] = "auto",
) -> TensorVariable:
    """Convolve two two-dimensional arrays (batched over leading dimensions).

    Parameters
    ----------
    in1 : (..., N, M) tensor_like
        First input.
    in2 : (..., K, L) tensor_like
        Second input.
    mode : {'full', 'valid', 'same'}, optional
        The size of the output: ``'full'``, ``(..., N+K-1, M+L-1)``; ``'valid'``,
        ``(..., max(N, K) - min(N, K) + 1, max(M, L) - min(M, L) + 1)``; ``'same'``, the
        size of ``in1``, centered with respect to the ``'full'`` output.
    boundary : {'fill', 'wrap', 'symm'}, optional
        How ``in1`` is extended: padded with ``fillvalue``, wrapped circularly, or
        reflected symmetrically.
    fillvalue : float or int, optional
        The padding value for ``boundary='fill'``. Default is 0.
    method : {'direct', 'fft', 'auto'}, optional
        How the kernel computes: directly, through FFTs, or chosen at run time.

    Returns
    -------
    TensorVariable
        The discrete linear convolution of ``in1`` with ``in2``.

    Raises
    ------
    ValueError
        For an unknown ``boundary`` (when padding is needed).
    """
    in1 = as_tensor_variable(in1)
    in2 = as_tensor_variable(in2)
    ndim = max(in1.type.ndim, in2.type.ndim)

    def _pad_input(input_tensor: Any, pad_width: Any) -> Any:
        if boundary == "fill":
            return pad(
                input_tensor, pad_width=pad_width, mode="constant", constant_values=fillvalue
            )
        if boundary == "wrap":
            return pad(input_tensor, pad_width=pad_width, mode="wrap")
        if boundary == "symm":
            return pad(input_tensor, pad_width=pad_width, mode="symmetric")
        raise ValueError(f"Unsupported boundary mode: {boundary}")

    if mode == "same":
        # "same" is "valid" with a padded input.
        pad_width = zeros((ndim, 2), dtype="int64")
        pad_width = pad_width[-2, 0].set(in2.shape[-2] // 2)
        pad_width = pad_width[-2, 1].set((in2.shape[-2] - 1) // 2)
        pad_width = pad_width[-1, 0].set(in2.shape[-1] // 2)
        pad_width = pad_width[-1, 1].set((in2.shape[-1] - 1) // 2)
        in1 = _pad_input(in1, pad_width)
        mode = "valid"

    if mode != "valid" and (boundary != "fill" or fillvalue != 0):
        # A valid convolution of in1 padded by the kernel's lengths minus one.
        *_, k, l = tuple(in2.shape)  # noqa: E741 - PyTensor's names
        pad_width = zeros((ndim, 2), dtype="int64")
        pad_width = pad_width[-2, :].set(k - 1)
        pad_width = pad_width[-1, :].set(l - 1)
        in1 = _pad_input(in1, pad_width)
        mode = "valid"

    full_mode = as_scalar(np.bool_(mode == "full"))
    return tensor_out(Blockwise(Convolve2d(method=method))(in1, in2, full_mode))


_vectorize_node.register(Convolve2d, _vectorize_convolve)
