"""The remaining special functions of ``pytensor.tensor.math``, elementwise: the Bessel
functions ``jv``, ``kve``, ``kv`` and ``kn``, the Gauss hypergeometric function ``hyp2f1``,
the inverse incomplete beta function ``betaincinv`` and Owen's T function ``owens_t``.

``jv``, ``kve``, ``hyp2f1``, ``betaincinv`` and ``owens_t`` are
:class:`~opweave.tensor.elemwise.Elemwise` instances of the scalar Ops of the same names
(:mod:`opweave.scalar.bessel`, :mod:`opweave.scalar.hyp2f1`,
:mod:`opweave.scalar.probability`): they broadcast like NumPy, cast integers to float and
fuse into elementwise loops. As in PyTensor, ``kv(v, x)`` is the graph
``kve(v, x) * exp(-x)`` and ``kn(n, x)`` is ``kv(n, x)``.
"""

from __future__ import annotations

from typing import Any

from opweave.scalar import bessel, probability
from opweave.scalar import hyp2f1 as _hyp2f1
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.variable import TensorVariable

__all__ = ["betaincinv", "hyp2f1", "jv", "kn", "kv", "kve", "owens_t"]


def _elemwise(scalar_op: Any, doc: str) -> Elemwise:
    op = Elemwise(scalar_op, name=scalar_op.name)
    op.__doc__ = doc
    return op


jv = _elemwise(bessel.jv, "Elementwise Bessel function of the first kind of real order v.")
kve = _elemwise(
    bessel.kve,
    "Elementwise ``exp(x) * kv(v, x)``: the exponentially scaled modified Bessel function of "
    "the second kind of real order v.",
)
hyp2f1 = _elemwise(_hyp2f1.hyp2f1, "Elementwise Gauss hypergeometric function 2F1(a, b; c; z).")
betaincinv = _elemwise(
    probability.betaincinv,
    "Elementwise inverse of the regularized incomplete beta function in its last argument.",
)
owens_t = _elemwise(probability.owens_t, "Elementwise Owen's T function T(h, a).")


def kv(v: Any, x: Any) -> TensorVariable:
    """The modified Bessel function of the second kind of real order ``v``,
    ``kve(v, x) * exp(-x)``.

    Parameters
    ----------
    v
        The orders (a tensor; ``kv`` is even in ``v``).
    x
        The arguments (a tensor broadcast with ``v``; NaN below 0, ``inf`` at 0).
    """
    x = as_tensor_variable(x)
    return tensor_out(tm.mul(kve(v, x), tm.exp(tm.neg(x))))


def kn(n: Any, x: Any) -> TensorVariable:
    """The modified Bessel function of the second kind of integer order ``n``: ``kv(n, x)``.

    Parameters
    ----------
    n
        The orders (a tensor).
    x
        The arguments (a tensor broadcast with ``n``).
    """
    return kv(n, x)
