"""Numerically stable logarithms of the modified Bessel functions ``kv`` and ``iv``
(PyTensor's ``local_log_kv`` and ``local_log_iv``).

``kv(v, x)`` underflows to 0 for large ``x`` (``kv(4.5, 1000.0)`` is about ``1e-436``)
and ``iv(v, x)`` overflows to ``inf``, so their logarithms are ``-inf`` and ``inf`` while
the true values are near ``-x`` and ``x``. The exponentially scaled ``kve`` and ``ive``
stay finite, so in the ``stabilize`` phase (tags ``fast_run``, ``stabilize``):

* ``local_log_kv``: ``log(kve(v, x) * exp(-x)) -> log(kve(v, x)) - x`` (``kv`` is built
  as that product, as in PyTensor; ``-x`` written ``neg(x)`` or ``x * -1``);
* ``local_log_iv``: ``log(iv(v, x)) -> log(ive(v, x)) + abs(x)``.

Each replacement has the dtype and broadcastable dimensions of the ``log`` it replaces
(a form that would have others is left alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import cast as typed

import opweave.scalar as ps
from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import node_rewriter
from opweave.scalar.bessel import Kve
from opweave.scalar.special import Iv
from opweave.tensor import math as tm
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.rewriting.math import (
    Replacement,
    _elemwise_owner,
    _replacement,
    _same,
    _strip_neg,
)
from opweave.tensor.special_extra import ive

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = ["local_log_iv", "local_log_kv", "register_bessel"]

# The elementwise functions built here, typed as the one-output functions they are.
_Fn = Callable[..., Variable]
_add, _sub, _log, _abs = (typed(_Fn, f) for f in (tm.add, tm.sub, tm.log, tm.abs))


def _kve_times_exp_minus_x(var: Variable) -> Apply | None:
    """The ``kve(v, x)`` node when ``var`` is ``kve(v, x) * exp(-x)`` (either order)."""
    mul = _elemwise_owner(var, ps.Mul)
    if mul is None or len(mul.inputs) != 2:
        return None
    for k, e in (mul.inputs, mul.inputs[::-1]):
        kve_node = _elemwise_owner(k, Kve)
        exp_node = _elemwise_owner(e, ps.Exp)
        if kve_node is None or exp_node is None:
            continue
        minus_x, negated = _strip_neg(exp_node.inputs[0])
        if negated and _same(minus_x, kve_node.inputs[1]):
            return kve_node
    return None


@node_rewriter([Elemwise], scalar_tracks=(ps.Log,))
def local_log_kv(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``log(kve(v, x) * exp(-x)) -> log(kve(v, x)) - x`` (finite where ``kv`` underflows)."""
    if _elemwise_owner(node.outputs[0], ps.Log) is None:
        return False
    kve_node = _kve_times_exp_minus_x(node.inputs[0])
    if kve_node is None:
        return False
    x = kve_node.inputs[1]
    return _replacement(node.outputs[0], [_sub(_log(kve_node.outputs[0]), x)])


@node_rewriter([Elemwise], scalar_tracks=(ps.Log,))
def local_log_iv(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``log(iv(v, x)) -> log(ive(v, x)) + abs(x)`` (finite where ``iv`` overflows)."""
    if _elemwise_owner(node.outputs[0], ps.Log) is None:
        return False
    iv_node = _elemwise_owner(node.inputs[0], Iv)
    if iv_node is None:
        return False
    v, x = iv_node.inputs
    return _replacement(node.outputs[0], [_add(_log(ive(v, x)), _abs(x))])


def register_bessel(db: RewriteDatabase) -> None:
    """Register ``local_log_kv`` and ``local_log_iv`` in the ``stabilize`` phase of ``db``.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    stabilize = db["stabilize"]
    for name, rewriter in (("local_log_kv", local_log_kv), ("local_log_iv", local_log_iv)):
        stabilize.register(name, rewriter, "fast_run", "stabilize")
