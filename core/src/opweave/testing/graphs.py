"""The standard library's conformance graphs that ``check_backend`` runs.

Each graph is a function building, afresh on every call, a :class:`Case`: symbolic inputs,
outputs, the updates of shared variables and the argument values of two calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from opweave import tensor as pt
from opweave.gradient import grad
from opweave.graph.basic import Variable
from opweave.ifelse import ifelse
from opweave.tensor.random import RandomStream
from opweave.tensor.sharedvar import shared

__all__ = ["STANDARD_GRAPHS", "Case"]


@dataclass
class Case:
    """One conformance graph: what to compile and the arguments of each call."""

    inputs: list[Variable]
    outputs: list[Variable]
    calls: list[list[Any]]
    updates: list[tuple[Variable, Variable]] = field(default_factory=list)
    shared: list[Any] = field(default_factory=list)
    #: The outputs are random draws: a linker drawing from another generator than the
    #: reference's is compared on what does not depend on the generator (see
    #: :func:`opweave.testing.backends.check_backend`).
    draws: bool = False


def _elemwise(dtype: str) -> Callable[[], Case]:
    def build() -> Case:
        x, y = pt.matrix("x", dtype=dtype), pt.matrix("y", dtype=dtype)
        a = (np.arange(12).reshape(3, 4) % 5 + 1).astype(dtype)
        outs = [x + y * 2, x * y - y, pt.maximum(x, y)]
        if dtype.startswith("float"):
            outs.append(pt.exp(x / 4) + pt.sqrt(y))
        return Case([x, y], outs, [[a, a[::-1].copy()], [a.T.copy().T, np.asfortranarray(a)]])

    return build


def _layouts() -> Case:
    x = pt.matrix("x")
    base = np.arange(40.0).reshape(5, 8)
    return Case([x], [x * 3 + 1, x.T * 2], [[base[::2, 1::3]], [np.asfortranarray(base)]])


def _reductions() -> Case:
    x = pt.matrix("x")
    a = np.arange(12.0).reshape(3, 4) - 5
    outs = [pt.sum(x), pt.sum(x, axis=0), pt.max(x, axis=1), pt.mean(x), pt.prod(x, axis=0)]
    return Case([x], outs, [[a], [a * 0.5]])


def _dot() -> Case:
    x, y, v = pt.matrix("x"), pt.matrix("y"), pt.vector("v")
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4) / 7
    calls = [[a, b, np.ones(3)], [a * 2, b[::-1].copy(), np.arange(3.0)]]
    return Case([x, y, v], [pt.dot(x, y), pt.dot(x, v)], calls)


def _indexing() -> Case:
    x, i = pt.matrix("x"), pt.lvector("i")
    a = np.arange(20.0).reshape(4, 5)
    outs = [x[1:3, ::2], x[i], x[-1], pt.set_subtensor(x[0, 1:], 0.0), x[::-1, 2]]
    return Case([x, i], outs, [[a, np.array([0, 3, 1])], [a * 2, np.array([2])]])


def _shapes() -> Case:
    x, y = pt.matrix("x"), pt.matrix("y")
    a = np.arange(6.0).reshape(2, 3)
    outs = [
        x.reshape((3, 2)),
        x.dimshuffle(1, "x", 0),
        pt.join(0, x, y),
        pt.alloc(1.5, 2, 3) + x,
        x.shape[0] * 2,
    ]
    return Case([x, y], outs, [[a, a + 1], [a * 3, a]])


def _random() -> Case:
    srng = RandomStream(1234)
    x = pt.vector("x")
    outs = [srng.normal(0, 1, size=(3,)) + x, srng.uniform(0, 1, size=(2, 2))]
    return Case([x], outs, [[np.zeros(3)], [np.ones(3)]], draws=True)


def _updates() -> Case:
    acc = shared(np.zeros(3), name="acc")
    x = pt.vector("x")
    return Case([x], [acc * 2], [[np.ones(3)], [np.arange(3.0)]], [(acc, acc + x)], [acc])


def _ifelse() -> Case:
    c, x = pt.scalar("c", dtype="int8"), pt.vector("x")
    out = ifelse(c, x * 2, pt.exp(x))
    return Case([c, x], [out], [[np.int8(1), np.arange(3.0)], [np.int8(0), np.arange(3.0)]])


def _gradient() -> Case:
    x = pt.vector("x")
    cost = pt.sum(pt.exp(x) * x**2)
    return Case([x], [grad(cost, x)], [[np.linspace(-1, 1, 4)], [np.arange(4.0)]])


#: ``name -> builder`` of every standard conformance graph.
STANDARD_GRAPHS: dict[str, Callable[[], Case]] = {
    **{f"elemwise_{dtype}": _elemwise(dtype) for dtype in ("float64", "float32", "int64", "int32")},
    "elemwise_layouts": _layouts,
    "reductions": _reductions,
    "dot": _dot,
    "indexing": _indexing,
    "shapes": _shapes,
    "random": _random,
    "shared_updates": _updates,
    "ifelse": _ifelse,
    "gradient": _gradient,
}
