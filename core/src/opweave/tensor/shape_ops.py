"""The Ops reading a variable's shape: :class:`Shape` (the whole shape, an int64 vector) and
:class:`Shape_i` (one length, an int64 scalar).

They are type-generic (any input whose Type has an ``ndim``) and need nothing of the tensor
library but :class:`~opweave.tensor.type.TensorType`, so the modules below
:mod:`opweave.tensor.shape` (reductions, ``blas``, constant values) build them too.
:mod:`opweave.tensor.shape` and :mod:`opweave.compile.ops` give them under PyTensor's paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.type import disconnected_type
from opweave.tensor.type import TensorType

__all__ = ["Shape", "Shape_i"]


class Shape(Op):
    """The shape of any value that has a ``shape`` attribute, as an int64 vector."""

    __props__ = ()

    if TYPE_CHECKING:
        # One input, one output: calling the Op gives that output.
        def __call__(self, x: Variable, **kwargs: Any) -> Variable: ...

    def make_node(self, x: Variable) -> Apply:
        """One input with a shape; an int64 vector output."""
        if not isinstance(x, Variable):
            raise TypeError(f"Shape expects a Variable, got {x!r}")
        ndim = getattr(x.type, "ndim", None)
        out = TensorType("int64", shape=(ndim,) if ndim is not None else (None,))
        return Apply(self, [x], [out()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """A vector with one entry per input dimension."""
        return [(len(shapes[0]),)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The output depends on the input's shape only."""
        return [[False]]

    def grad(self, inputs: Any, output_grads: Any) -> list[Any]:
        """The input's elements do not affect the shape."""
        return [disconnected_type()]

    def R_op(self, inputs: Any, eval_points: Any) -> list[Any]:
        """The input's elements do not affect the shape: no tangent."""
        return [None]


class Shape_i(Op):  # noqa: N801 - PyTensor's name
    """Dimension ``i`` of the input's shape, as an int64 scalar.

    Parameters
    ----------
    i
        The dimension.
    """

    __props__ = ("i",)

    if TYPE_CHECKING:
        # One input, one output: calling the Op gives that output.
        def __call__(self, x: Variable, **kwargs: Any) -> Variable: ...

    def __init__(self, i: int) -> None:
        if not isinstance(i, int | np.integer) or isinstance(i, bool) or i < 0:
            raise TypeError(f"Shape_i expects a non-negative int dimension, got {i!r}")
        i = int(i)
        self.i = i

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.i}}}"  # PyTensor's Shape_i{0}

    def make_node(self, x: Variable) -> Apply:
        """One input with at least ``i + 1`` dimensions; an int64 scalar output."""
        if not isinstance(x, Variable):
            raise TypeError(f"Shape_i expects a Variable, got {x!r}")
        ndim = getattr(x.type, "ndim", None)
        if ndim is not None and ndim <= self.i:
            raise TypeError(f"{x} has {ndim} dimensions; Shape_i({self.i}) needs more")
        return Apply(self, [x], [TensorType("int64", shape=())()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """A scalar."""
        return [()]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The output depends on the input's shape only."""
        return [[False]]

    def grad(self, inputs: Any, output_grads: Any) -> list[Any]:
        """The input's elements do not affect the shape."""
        return [disconnected_type()]

    def R_op(self, inputs: Any, eval_points: Any) -> list[Any]:
        """The input's elements do not affect the shape: no tangent."""
        return [None]
