"""A reduction of an elementwise map in one pass: :class:`MapReduce`.

``sum(x ** 2)`` is, as written, an ``Elemwise{sqr}`` whose whole result is materialised and
then a ``Sum`` reading it back. The rewrite ``local_careduce_fusion``
(:mod:`opweave.tensor.rewriting.reduce_fusion`) replaces such a pair by one
``MapReduce(Elemwise{sqr}, Sum)`` node, which backends compute in one loop: each element is
mapped and accumulated at once, with no intermediate array.

The node means exactly ``careduce(elemwise(x))``: the same dtypes, the same accumulation,
the same errors. Its gradient is that of the two-node graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.gradient import grad
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor.elemwise import CAReduce, Elemwise

__all__ = ["MapReduce"]


class MapReduce(Op):
    """``careduce(elemwise(x))`` as one node.

    Parameters
    ----------
    elemwise
        A one-input, one-output, not-in-place :class:`~opweave.tensor.elemwise.Elemwise`
        (its scalar Op may be a :class:`~opweave.scalar.composite.Composite`).
    careduce
        The :class:`~opweave.tensor.elemwise.CAReduce` applied to its result, as it is in a
        graph (``axis``, ``dtype`` and ``acc_dtype`` resolved by its ``make_node``).

    Raises
    ------
    TypeError
        If ``elemwise`` is not a one-input, one-output Elemwise without an inplace pattern,
        or ``careduce`` is not a CAReduce.
    """

    __props__ = ("elemwise", "careduce")

    def __init__(self, elemwise: Elemwise, careduce: CAReduce) -> None:
        if not isinstance(elemwise, Elemwise) or elemwise.inplace_pattern:
            raise TypeError(f"MapReduce needs a not-in-place Elemwise, got {elemwise!r}")
        if elemwise.scalar_op.nin != 1 or elemwise.scalar_op.nout != 1:
            raise TypeError(
                f"MapReduce needs an Elemwise of one input and one output, got {elemwise}"
            )
        if not isinstance(careduce, CAReduce):
            raise TypeError(f"MapReduce needs a CAReduce, got {careduce!r}")
        self.elemwise = elemwise
        self.careduce = careduce

    def __str__(self) -> str:
        return f"{self.careduce}[{self.elemwise.scalar_op}]"

    def unfused(self, x: Variable) -> tuple[Apply, Apply]:
        """The two nodes this one stands for, applied to ``x``: ``(elemwise, careduce)``."""
        mapped = self.elemwise.make_node(x)
        return mapped, self.careduce.make_node(mapped.outputs[0])

    def make_node(self, x: Any) -> Apply:
        """The output of ``careduce(elemwise(x))``.

        Raises
        ------
        TypeError, ValueError
            As ``elemwise`` and ``careduce`` raise for ``x``.
        """
        mapped, reduced = self.unfused(x)
        return Apply(self, list(mapped.inputs), [reduced.outputs[0].type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]) -> list[Any]:
        """The reduction's shape (the map keeps the input's shape)."""
        return self.careduce.infer_shape(fgraph, node, shapes)

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """The gradient of the two-node graph."""
        (x,) = inputs
        _, reduced = self.unfused(x)
        return [grad(None, x, known_grads={reduced.outputs[0]: output_grads[0]})]
