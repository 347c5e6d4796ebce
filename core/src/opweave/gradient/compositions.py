"""Gradients built from :func:`~opweave.gradient.grad` and :func:`pullback`: Hessian-vector
products, gradients of a subgraph, the push-forward through two pull-backs, and
PyTensor's small helper ``as_list_or_tuple``.

None needs a tensor operation of its own: products and sums go through the Variables'
operators, so they work for every Type that defines them.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

from opweave.configdefaults import config
from opweave.gradient.operators import pullback
from opweave.gradient.reverse import grad
from opweave.graph.basic import Variable

__all__ = [
    "V",
    "as_list_or_tuple",
    "hessian_vector_product",
    "pushforward_through_pullback",
    "subgraph_grad",
]

#: A Variable or ``None`` (the element type of :func:`as_list_or_tuple`).
V = TypeVar("V", bound=Variable | None)


def as_list_or_tuple(use_list: bool, use_tuple: bool, outputs: Any) -> Any:
    """``outputs`` as a list (``use_list``), a tuple (``use_tuple``) or a single object.

    Parameters
    ----------
    use_list, use_tuple
        At most one may be true. With neither, a one-element sequence is unpacked.
    outputs
        An object or a sequence of them.

    Raises
    ------
    ValueError
        If both flags are true, or if neither is and ``outputs`` is a sequence whose
        length is not 1.
    """
    if use_list and use_tuple:
        raise ValueError("as_list_or_tuple: use_list and use_tuple cannot both be True")
    is_sequence = isinstance(outputs, Sequence)
    if use_list:
        return list(outputs) if is_sequence else [outputs]
    if use_tuple:
        return tuple(outputs) if is_sequence else (outputs,)
    if is_sequence:
        if len(outputs) != 1:
            raise ValueError(
                f"as_list_or_tuple: expected a one-element sequence, got {len(outputs)} elements"
            )
        return outputs[0]
    return outputs


def hessian_vector_product(cost: Variable, wrt: Any, p: Any, **grad_kwargs: Any) -> Any:
    """The Hessian of ``cost`` with respect to ``wrt`` times ``p``, by two reverse passes.

    Parameters
    ----------
    cost
        A scalar (0-d) variable.
    wrt
        A variable, or a sequence of them.
    p
        The vector(s) multiplied, one per ``wrt``, each of its shape.
    **grad_kwargs
        Passed to both calls of :func:`~opweave.gradient.grad`.

    Returns
    -------
    Variable or list
        ``H @ p`` per ``wrt``: one variable when ``wrt`` is one, else a list.
    """
    wrt_list = list(wrt) if isinstance(wrt, Sequence) else [wrt]
    p_list = list(p) if isinstance(p, Sequence) else [p]
    if len(wrt_list) != len(p_list):
        raise ValueError(
            f"hessian_vector_product: {len(wrt_list)} wrt variables but {len(p_list)} vectors p"
        )
    gradients = grad(cost, wrt=wrt_list, **grad_kwargs)
    inner = functools.reduce(
        operator.add, [(g * v).sum() for g, v in zip(gradients, p_list, strict=True)]
    )
    products = grad(inner, wrt=wrt_list, **grad_kwargs)
    return products[0] if isinstance(wrt, Variable) else list(products)


def subgraph_grad(
    wrt: list[Variable],
    end: list[Variable],
    start: Mapping[Variable, Variable] | None = None,
    cost: Variable | None = None,
    details: bool = False,
) -> tuple[list[Any], ...]:
    """Gradients with respect to ``wrt`` and ``end`` of ``cost`` and/or known gradients
    ``start``, with the ``end`` variables held constant (the gradient stops at them).

    Parameters
    ----------
    wrt
        The variables whose gradients are wanted.
    end
        Where backpropagation stops; their gradients are returned too.
    start
        Known gradients: variable -> its gradient (``known_grads`` of ``grad``).
    cost
        A scalar cost whose gradient is added. ``cost`` or ``start`` must be given.
    details
        Also return the gradients from ``start`` and from ``cost`` separately.

    Returns
    -------
    tuple
        ``(wrt_grads, end_grads)``, or with ``details``
        ``(wrt_grads, end_grads, start_grads, cost_grads)`` (those two over
        ``wrt + end`` in an unspecified order, ``None`` when not computed).
    """
    if cost is None and start is None:
        raise ValueError("subgraph_grad: give cost or start (or both)")
    if not isinstance(end, list):
        raise TypeError(f"subgraph_grad: end must be a list, got {type(end).__name__}")
    if not isinstance(wrt, list):
        raise TypeError(f"subgraph_grad: wrt must be a list, got {type(wrt).__name__}")
    if start is not None and not isinstance(start, Mapping):
        raise TypeError(f"subgraph_grad: start must be a dict, got {type(start).__name__}")
    params = list(dict.fromkeys(wrt + end))
    common: dict[str, Any] = {"consider_constant": end, "disconnected_inputs": "ignore"}
    start_grads = (
        None
        if start is None
        else list(grad(cost=None, wrt=params, known_grads=dict(start), **common))
    )
    cost_grads = None if cost is None else list(grad(cost=cost, wrt=params, **common))
    if start_grads is None:
        total = cost_grads
    elif cost_grads is None:
        total = start_grads
    else:
        total = [a + b for a, b in zip(start_grads, cost_grads, strict=True)]
    by_param = dict(zip(params, total or [], strict=True))
    wrt_grads = [by_param[v] for v in wrt]
    end_grads = [by_param[v] for v in end]
    if details:
        return wrt_grads, end_grads, start_grads, cost_grads  # type: ignore[return-value]
    return wrt_grads, end_grads


def pushforward_through_pullback(
    outputs: Sequence[Variable],
    inputs: Sequence[Variable],
    tangents: Sequence[Variable],
    disconnected_outputs: Literal["ignore", "warn", "raise"] = "raise",
    return_disconnected: Literal["none", "zero", "disconnected"] = "zero",
) -> Any:
    """The push-forward (Jacobian-vector product) of ``outputs`` at ``tangents``, computed
    with two pull-backs (no ``R_op`` needed).

    The first pull-back is linear in auxiliary cotangents (zeros like the outputs); pulling
    it back again with respect to them at ``tangents`` gives ``J @ tangents``.

    Parameters
    ----------
    outputs
        The variables differentiated.
    inputs
        The variables the tangents belong to.
    tangents
        One per input, of its shape.
    disconnected_outputs, return_disconnected
        As for :func:`~opweave.gradient.pushforward`.
    """
    cotangents = [out.zeros_like(dtype=config.floatX) for out in outputs]  # type: ignore[attr-defined]
    input_cotangents = pullback(
        list(outputs),
        list(inputs),
        cotangents,
        disconnected_inputs=disconnected_outputs,
        return_disconnected="zero",
    )
    return pullback(
        input_cotangents,
        cotangents,
        list(tangents),
        disconnected_inputs="ignore",
        return_disconnected=return_disconnected,
    )
