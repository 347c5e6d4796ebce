"""Real fast Fourier transforms (``pytensor.tensor.fft``): :class:`RFFTOp`, :class:`IRFFTOp`,
:data:`rfft_op`, :data:`irfft_op`, :func:`rfft` and :func:`irfft`.

The first axis of the input counts the batches; the transform runs over the other axes
(``numpy.fft.rfftn`` / ``numpy.fft.irfftn`` over the last ``len(s)`` axes). The complex
spectrum is stored as real numbers with a trailing axis of length 2 (real part, imaginary
part), in the input's dtype. The Ops compute unnormalized transforms; :func:`rfft` and
:func:`irfft` apply the normalization. Both Ops have gradients (each is the other's
adjoint up to the weights of the frequencies counted twice). The kernels live in the
backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.type import disconnected_type
from opweave.tensor._typing import tensor_out, tensor_var
from opweave.tensor.basic import as_tensor_variable
from opweave.tensor.exceptions import ShapeError
from opweave.tensor.math import sqrt
from opweave.tensor.subtensor import set_subtensor
from opweave.tensor.type import TensorType, integer_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = ["IRFFTOp", "RFFTOp", "irfft", "irfft_op", "rfft", "rfft_op"]

Norm = Literal["ortho", "no_norm"] | None


def _lengths_input(s: Any, who: str) -> TensorVariable:
    """``s`` (the transform lengths) as an integer tensor."""
    var = as_tensor_variable(s)
    if var.dtype not in integer_dtypes:
        raise TypeError(f"{who}: length of the transformed axis must be of type integer")
    return var


def _static_length(s: Variable, who: str) -> int:
    """The number of transformed axes, when the type of ``s`` says it."""
    length = tensor_var(s).type.shape[0] if tensor_var(s).ndim == 1 else None
    if length is None:
        raise ShapeError(f"{who}: the number of transformed axes is not known statically")
    return int(length)


def _halved_gradient(g: TensorVariable, s: Variable, factor: float) -> TensorVariable:
    """``g`` with the frequencies ``1 .. ceil(n / 2) - 1`` of the last transformed axis
    (those standing for a positive and a negative frequency) scaled by ``factor``."""
    last = tensor_var(s)[-1]
    idx = (
        *([slice(None)] * (g.ndim - 2)),
        slice(1, (last // 2) + (last % 2)),
        slice(None),
    )
    return set_subtensor(g[idx], g[idx] * factor)


class RFFTOp(Op):
    """Unnormalized ``numpy.fft.rfftn`` over the last ``len(s)`` axes of a real input.

    Inputs: ``a`` (at least 2-d, the first axis counting batches) and ``s`` (an integer
    vector, the transform lengths; default ``a.shape[1:]``). Output: the spectrum in
    ``a``'s dtype with a trailing axis of length 2 (real part, imaginary part).
    """

    __props__ = ()

    def output_type(self, inp: TensorVariable) -> TensorType:
        """``inp``'s dtype, one more axis (of length 2) than ``inp``, other lengths unknown."""
        return TensorType(inp.dtype, shape=((None,) * inp.type.ndim) + (2,))

    def make_node(self, a: Any, s: Any = None) -> Apply:
        """The node of ``a`` and the lengths ``s``.

        Raises
        ------
        TypeError
            For an input of fewer than 2 dimensions, or non-integer lengths.
        """
        a = as_tensor_variable(a)
        if a.ndim < 2:
            raise TypeError(
                f"{self.__class__.__name__}: input must have dimension >= 2, with first "
                "dimension batches"
            )
        if s is None:
            s = as_tensor_variable(a.shape[1:])
        else:
            s = _lengths_input(s, self.__class__.__name__)
        return Apply(self, [a, s], [self.output_type(a)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The untransformed leading lengths, ``s[:-1]``, ``s[-1] // 2 + 1`` and 2."""
        a_shape = shapes[0]
        s = tensor_var(node.inputs[1])
        k = _static_length(s, self.__class__.__name__)
        lead = list(a_shape[: len(a_shape) - k])
        return [[*lead, *(s[i] for i in range(k - 1)), s[-1] // 2 + 1, 2]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The unnormalized inverse transform of the output gradient, whose doubly counted
        frequencies are halved first."""
        (gout,) = output_grads
        s = inputs[1]
        gout = _halved_gradient(tensor_var(gout), s, 0.5)
        return [irfft_op(gout, s), disconnected_type()]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The lengths shape the output; they carry no gradient."""
        return [[True], [False]]


#: The :class:`RFFTOp` instance.
rfft_op = RFFTOp()


class IRFFTOp(Op):
    """Unnormalized ``numpy.fft.irfftn`` (times ``prod(s)``) over the last ``len(s)`` axes.

    Inputs: ``a`` (at least 3-d: batches first, real and imaginary parts last) and ``s``
    (an integer vector, the output lengths; default ``a.shape[1:-1]`` with the last one
    ``2 * (n - 1)``). Output: a real tensor in ``a``'s dtype, one axis fewer than ``a``.
    """

    __props__ = ()

    def output_type(self, inp: TensorVariable) -> TensorType:
        """``inp``'s dtype, one axis fewer than ``inp``, lengths unknown."""
        return TensorType(inp.dtype, shape=(None,) * (inp.type.ndim - 1))

    def make_node(self, a: Any, s: Any = None) -> Apply:
        """The node of ``a`` and the lengths ``s``.

        Raises
        ------
        TypeError
            For an input of fewer than 3 dimensions, or non-integer lengths.
        """
        a = as_tensor_variable(a)
        if a.ndim < 3:
            raise TypeError(
                f"{self.__class__.__name__}: input must have dimension >= 3,  with "
                "first dimension batches and last real/imag parts"
            )
        if s is None:
            s = as_tensor_variable(a.shape[1:-1])
            s = as_tensor_variable(set_subtensor(s[-1], (s[-1] - 1) * 2))
        else:
            s = _lengths_input(s, self.__class__.__name__)
        return Apply(self, [a, s], [self.output_type(a)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The untransformed leading lengths, then ``s``."""
        a_shape = shapes[0]
        s = tensor_var(node.inputs[1])
        k = _static_length(s, self.__class__.__name__)
        lead = list(a_shape[: len(a_shape) - 1 - k])
        return [[*lead, *(s[i] for i in range(k))]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The unnormalized forward transform of the output gradient, whose doubly counted
        frequencies are doubled."""
        (gout,) = output_grads
        s = inputs[1]
        gf = tensor_out(rfft_op(gout, s))
        return [_halved_gradient(gf, s, 2), disconnected_type()]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The lengths shape the output; they carry no gradient."""
        return [[True], [False]]


#: The :class:`IRFFTOp` instance.
irfft_op = IRFFTOp()


def rfft(inp: Any, norm: Norm = None) -> TensorVariable:
    r"""The fast Fourier transform of a real-valued input.

    The input is a real-valued variable of dimensions ``(m, ..., n)``: ``m`` batches of
    transforms of size ``(..., n)``. The output has dimensions ``(m, ..., n//2+1, 2)``:
    the ``n//2+1`` non-trivial elements of each real-valued FFT, with the real and
    imaginary parts as a pair of floats on the last axis.

    Parameters
    ----------
    inp
        Array of floats of size ``(m, ..., n)``.
    norm : {None, 'ortho', 'no_norm'}
        Normalization of the transform. Following NumPy, the default ``None`` normalizes
        only the inverse transform by ``n``; ``'ortho'`` gives the unitary transform
        (:math:`1/\sqrt n` forward and inverse); ``'no_norm'`` leaves it unnormalized.

    Returns
    -------
    TensorVariable
        The spectrum, ``(m, ..., n//2+1, 2)``.

    Raises
    ------
    ValueError
        For another ``norm``.
    """
    inp = as_tensor_variable(inp)
    s = inp.shape[1:]
    cond_norm = _unitary(norm)
    scaling: Any = 1
    if cond_norm == "ortho":
        scaling = sqrt(s.prod().astype(inp.dtype))
    # Divided also by 1, as in PyTensor: an integer input gives a float output.
    out: TensorVariable = tensor_out(rfft_op(inp, s)) / scaling
    return out


def irfft(inp: Any, norm: Norm = None, is_odd: bool = False) -> TensorVariable:
    r"""The inverse fast Fourier transform with real-valued output.

    The input has dimensions ``(m, ..., n//2+1, 2)``: the non-trivial elements of ``m``
    real-valued Fourier transforms of size ``(..., n)``, real and imaginary parts on the
    last axis. The output, ``(m, ..., n)``, holds the ``m`` inverse transforms.

    Parameters
    ----------
    inp
        Array of size ``(m, ..., n//2+1, 2)``.
    norm : {None, 'ortho', 'no_norm'}
        Normalization of the transform, as for :func:`rfft`.
    is_odd : {True, False}
        True for an odd last output length, ``(N - 1) * 2 + 1`` for an input last
        dimension of length ``N`` (otherwise ``(N - 1) * 2``).

    Returns
    -------
    TensorVariable
        The real signals, ``(m, ..., n)``.

    Raises
    ------
    ValueError
        For another ``norm``, or an ``is_odd`` that is not True or False.
    """
    if is_odd not in (True, False):
        raise ValueError(f"Invalid value {is_odd} for id_odd, must be True or False")
    inp = as_tensor_variable(inp)
    s = inp.shape[1:-1]
    last = (s[-1] - 1) * 2 + 1 if is_odd else (s[-1] - 1) * 2
    s = set_subtensor(s[-1], last)
    cond_norm = _unitary(norm)
    scaling: Any = 1
    # NumPy's default normalization is 1/N on the inverse transform.
    if cond_norm is None:
        scaling = s.prod().astype(inp.dtype)
    elif cond_norm == "ortho":
        scaling = sqrt(s.prod().astype(inp.dtype))
    out: TensorVariable = tensor_out(irfft_op(inp, s)) / scaling
    return out


def _unitary(norm: Any) -> Norm:
    if norm not in (None, "ortho", "no_norm"):
        raise ValueError(f"Invalid value {norm} for norm, must be None, 'ortho' or 'no norm'")
    return norm  # type: ignore[no-any-return]
