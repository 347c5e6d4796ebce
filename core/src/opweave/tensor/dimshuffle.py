"""`DimShuffle`: reorder the axes of a tensor, insert broadcastable axes, drop length-1 axes.

``DimShuffle(input_ndim, new_order)`` follows PyTensor's current signature. Each entry of
``new_order`` is an input axis or ``"x"`` (a new axis of length 1). An input axis left out
is dropped, which is only allowed when its static length is 1. The output is a view of
the input (``view_map = {0: [0]}``); backends compute it with a transpose and a reshape.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.type import TensorType, discrete_dtypes

__all__ = ["DimShuffle"]


def _as_tensor(x: Any) -> Variable:
    return as_tensor_variable(x)


#: The largest rank of a tensor (NumPy's limit).
MAX_NDIM = 64


class DimShuffle(Op):
    """Reorder, add (``"x"``) and drop (length 1) axes of a tensor.

    Parameters
    ----------
    input_ndim
        The rank of the input this Op applies to.
    new_order
        One entry per output axis: an input axis (an ``int`` in ``[0, input_ndim)``) or
        ``"x"`` for a new broadcastable axis. Input axes may not repeat; an input axis not
        listed is dropped (its static length must be 1).

    Attributes
    ----------
    shuffle : tuple of int
        The kept input axes, in output order.
    drop : tuple of int
        The dropped input axes.
    augment : tuple of int
        The output positions of the new ``"x"`` axes.
    transposition : tuple of int
        ``shuffle + drop``: the transpose the backend applies first.

    Examples
    --------
    >>> DimShuffle(input_ndim=2, new_order=(1, 0))        # transpose
    >>> DimShuffle(input_ndim=1, new_order=("x", 0))      # vector to row
    >>> DimShuffle(input_ndim=2, new_order=(1,))          # drop axis 0 (static length 1)
    """

    __props__ = ("input_ndim", "new_order")
    view_map = {0: [0]}

    def __init__(self, input_ndim: int, new_order: Sequence[int | str]) -> None:
        if not isinstance(input_ndim, int | np.integer) or isinstance(input_ndim, bool):
            raise TypeError(f"DimShuffle: input_ndim must be an integer, got {input_ndim!r}")
        if input_ndim < 0:
            raise ValueError(f"DimShuffle: input_ndim must be >= 0, got {input_ndim}")
        if isinstance(new_order, str) or not isinstance(new_order, Sequence):
            raise TypeError(
                f"DimShuffle: new_order must be a sequence of axes and 'x', got {new_order!r}"
            )
        order: list[int | str] = []
        for i, entry in enumerate(new_order):
            if isinstance(entry, str):
                if entry != "x":
                    raise ValueError(
                        f"DimShuffle: new_order[{i}] is {entry!r}; entries must be input axes "
                        "or 'x'"
                    )
                order.append("x")
                continue
            if not isinstance(entry, int | np.integer) or isinstance(entry, bool):
                raise TypeError(
                    f"DimShuffle: new_order[{i}] must be an int axis or 'x', got "
                    f"{type(entry).__name__} {entry!r}"
                )
            axis = int(entry)
            if not 0 <= axis < input_ndim:
                raise ValueError(
                    f"DimShuffle: new_order[{i}] is {axis}, but the input has only "
                    f"{input_ndim} axes (valid: 0..{input_ndim - 1})"
                )
            if axis in order:
                raise ValueError(
                    f"DimShuffle: input axis {axis} appears twice in new_order {tuple(new_order)}"
                )
            order.append(axis)
        self.input_ndim = int(input_ndim)
        self.new_order: tuple[int | str, ...] = tuple(order)
        self.shuffle: tuple[int, ...] = tuple(a for a in order if a != "x")  # type: ignore[misc]
        self.drop: tuple[int, ...] = tuple(a for a in range(input_ndim) if a not in order)
        self.augment: tuple[int, ...] = tuple(i for i, a in enumerate(order) if a == "x")
        self.transposition: tuple[int, ...] = self.shuffle + self.drop

    # ------------------------------------------------------------------ descriptions

    @property
    def is_transpose(self) -> bool:
        """True if the Op only permutes the axes."""
        return not self.drop and not self.augment

    @property
    def is_identity(self) -> bool:
        """True if the Op returns the input unchanged."""
        return self.new_order == tuple(range(self.input_ndim))

    @property
    def is_expand_dims(self) -> bool:
        """True if the Op only inserts new axes, keeping the input's order."""
        return not self.drop and self.shuffle == tuple(range(self.input_ndim))

    @property
    def is_left_expand_dims(self) -> bool:
        """True if the Op only prepends new axes."""
        n = len(self.augment)
        return self.is_expand_dims and self.augment == tuple(range(n))

    @property
    def is_squeeze(self) -> bool:
        """True if the Op only drops axes, keeping the order of the others."""
        return bool(self.drop) and not self.augment and self.shuffle == tuple(sorted(self.shuffle))

    def __str__(self) -> str:
        """PyTensor's names: ``MatrixTranspose``, ``ExpandDims{axis=0}``,
        ``Squeeze{axes=(0, 2)}``, ``Transpose{axes=(1, 0, 2)}``, else
        ``DimShuffle{order=[1,x,0]}``."""
        n, shuffled = self.input_ndim, self.shuffle != tuple(sorted(self.shuffle))
        if not self.augment and shuffled and self.new_order == (*range(n - 2), n - 1, n - 2):
            return "MatrixTranspose"
        for name, axes, only in (
            ("ExpandDims", self.augment, not self.drop),
            ("Squeeze", self.drop, not self.augment),
        ):
            if axes and only and not shuffled:
                return f"{name}{{axis={axes[0]}}}" if len(axes) == 1 else f"{name}{{axes={axes}}}"
        if not self.drop and not self.augment and shuffled:
            return f"Transpose{{axes={self.shuffle}}}"
        return "DimShuffle{order=[" + ",".join(str(a) for a in self.new_order) + "]}"

    # ------------------------------------------------------------------ graph

    def make_node(self, x: Any) -> Apply:
        """Check the input's rank and the dropped axes; the output keeps the dtype.

        Raises
        ------
        TypeError
            If the input does not have ``input_ndim`` dimensions, or a dropped axis has a
            static length other than 1.
        ValueError
            If a dropped axis has an unknown static length.
        """
        x = _as_tensor(x)
        if len(self.new_order) > MAX_NDIM:
            raise ValueError(
                f"maximum supported dimension for a TensorType is currently {MAX_NDIM}, "
                f"found {len(self.new_order)}"
            )
        if x.type.ndim != self.input_ndim:
            raise TypeError(
                f"{self} expects a {self.input_ndim}-d input, got {x} of type {x.type!r} "
                f"({x.type.ndim} dimensions)"
            )
        for axis in self.drop:
            if x.type.shape[axis] != 1:
                error = ValueError if x.type.shape[axis] is None else TypeError
                raise error(
                    f"{self} drops input axis {axis}, but {x} of type {x.type!r} does not have "
                    f"static length 1 there (length {x.type.shape[axis]}); only broadcastable "
                    "axes can be dropped"
                )
        shape = tuple(1 if a == "x" else x.type.shape[a] for a in self.new_order)
        out = TensorType(x.type.dtype, shape=shape)()
        return Apply(self, [x], [out])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]) -> list[Any]:
        """The kept input lengths in the new order, 1 for new axes."""
        (ishape,) = shapes
        return [tuple(1 if a == "x" else ishape[a] for a in self.new_order)]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Variable]) -> list[Any]:
        """Linear: the same DimShuffle of the evaluation point."""
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0])]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The inverse DimShuffle of ``gz``: new axes are summed away, dropped ones restored.

        A discrete input gets a ``floatX`` zero gradient (the rule for discrete inputs).
        """
        (x,) = inputs
        (gz,) = output_grads
        if x.type.dtype in discrete_dtypes:
            # late: opweave.tensor.elemwise builds on this module (same floor, above it)
            from opweave.tensor.elemwise import zeros_like_float

            return [zeros_like_float(x)]
        gz = _as_tensor(gz)
        # New axes: drop them (summing if gz does not know they have length 1).
        to_sum = [i for i in self.augment if gz.type.shape[i] != 1]
        if to_sum:
            # late: opweave.tensor.reductions builds on this module (same floor, above it)
            from opweave.tensor.reductions import sum as tensor_sum

            gz = tensor_sum(gz, axis=to_sum, keepdims=True)
        kept = [i for i in range(len(self.new_order)) if self.new_order[i] != "x"]
        gz = DimShuffle(gz.type.ndim, kept)(gz) if self.augment else gz
        # Now gz's axis k is input axis shuffle[k]; restore the input's order.
        inverse: list[int | str] = ["x"] * self.input_ndim
        for k, axis in enumerate(self.shuffle):
            inverse[axis] = k
        gx = DimShuffle(gz.type.ndim, inverse)(gz)
        return [gx]

    #: PyTensor's name for the C source of the Op, relative to its module; opweave's C
    #: code lives in the C backend, so only the name is kept, for code that reads it
    #: (with :meth:`get_path`) when it derives a class.
    c_func_file = "c_code/dimshuffle.c"

    @classmethod
    def get_path(cls, f: Path) -> Path:
        """``f`` made absolute, relative to the folder of the module defining ``cls``
        (an absolute ``f`` is returned unchanged); PyTensor's contract."""
        f = Path(f)
        if f.is_absolute():
            return f
        module = sys.modules.get(cls.__module__)
        base = Path(getattr(module, "__file__", None) or ".").resolve().parent
        return base / f
