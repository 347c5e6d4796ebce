"""``vectorize``: a NumPy-style vectorized version of a function of tensor variables."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from opweave.graph.replace import vectorize_graph
from opweave.tensor.utils import _parse_gufunc_signature
from opweave.tensor.variable import TensorVariable

if TYPE_CHECKING:
    from opweave.tensor.type import TensorType

__all__ = ["vectorize"]


def _core_input(value: Any, core_ndim: int) -> TensorVariable:
    """A variable of ``value``'s Type without its batch dimensions (the leading ones)."""
    if not isinstance(value, TensorVariable):
        raise TypeError(
            f"the inputs of a vectorized function must be tensor variables, got "
            f"{type(value).__name__}: {value!r}"
        )
    if value.type.ndim < core_ndim:
        raise ValueError(
            f"input {value} has {value.type.ndim} dimensions, fewer than the {core_ndim} core "
            "dimensions of the signature"
        )
    shape = value.type.shape[value.type.ndim - core_ndim :]
    core_type: TensorType = value.type.clone(shape=shape)
    return core_type(name=value.name)


def vectorize(func: Callable[..., Any], signature: str | None = None) -> Callable[..., Any]:
    """A version of ``func`` that accepts inputs with extra leading (batch) dimensions.

    Like ``numpy.vectorize``: ``func`` builds its outputs from inputs with only the core
    dimensions; the result applies it to batched inputs by vectorizing that graph
    (:func:`~opweave.graph.replace.vectorize_graph`).

    Parameters
    ----------
    func
        A function of tensor variables returning a variable or a list/tuple of them.
    signature
        A generalized-ufunc signature such as ``"(m,n),(n)->(m)"``; ``None`` means every
        input is a scalar at its core.

    Returns
    -------
    callable
        The vectorized function.
    """

    def vectorized(*inputs: Any) -> Any:
        if signature is None:
            core_ndims = [0] * len(inputs)
            outputs_signature = None
        else:
            inputs_signature, outputs_signature = _parse_gufunc_signature(signature)
            if len(inputs) != len(inputs_signature):
                raise ValueError(
                    f"vectorize: {len(inputs)} inputs given, the signature {signature!r} has "
                    f"{len(inputs_signature)}"
                )
            core_ndims = [len(dims) for dims in inputs_signature]
        core_inputs = [
            _core_input(value, ndim) for value, ndim in zip(inputs, core_ndims, strict=True)
        ]
        core_outputs = func(*core_inputs)
        if core_outputs is None:
            raise ValueError("vectorize: the function returned no outputs")
        several = isinstance(core_outputs, list | tuple)
        outputs = list(core_outputs) if several else [core_outputs]
        if outputs_signature is not None and len(outputs) != len(outputs_signature):
            raise ValueError(
                f"vectorize: the function returned {len(outputs)} outputs, the signature "
                f"{signature!r} has {len(outputs_signature)}"
            )
        batched = vectorize_graph(outputs, dict(zip(core_inputs, inputs, strict=True)))
        return batched if several else batched[0]

    return vectorized
