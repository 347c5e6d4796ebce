"""Graph Types for ``None`` and ``slice`` values, and the Op building a slice.

These are PyTensor's names (``pytensor.tensor.type_other``):

* :class:`NoneTypeT`, the Type whose only value is ``None``; :data:`none_type_t` is its
  instance and :data:`NoneConst` the constant ``None`` (what an absent optional input,
  such as a random variable's ``size``, is given as);
* :class:`SliceType` (instance :data:`slicetype`), the Type of Python ``slice`` objects,
  with :class:`SliceConstant` for constant slices and :data:`NoneSliceConst` for
  ``slice(None)``;
* :class:`MakeSlice` (instance :data:`make_slice`), which builds a slice from symbolic
  ``start``/``stop``/``step`` (``None`` or 0-d integer tensors).

opweave's indexing Ops keep their slices in the Op (``idx_list``) and never take slice
variables as inputs; these Types serve code that passes ``None`` or slices through
graphs. :func:`~opweave.graph.symbolic.as_symbolic` turns ``None`` into
:data:`NoneConst` and a ``slice`` into a :class:`SliceConstant` (or a :data:`make_slice`
node when a bound is symbolic).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.symbolic import _as_symbolic
from opweave.graph.type import Generic, Type, disconnected_type
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.type import integer_dtypes

__all__ = [
    "MakeSlice",
    "NoneConst",
    "NoneSliceConst",
    "NoneTypeT",
    "SliceConstant",
    "SliceType",
    "as_int_none_variable",
    "make_slice",
    "none_type_t",
    "slicetype",
]


class NoneTypeT(Generic):
    """The Type whose only valid value is ``None``."""

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``None``.

        Raises
        ------
        TypeError
            For any other value.
        """
        if data is None:
            return data
        raise TypeError(f"NoneTypeT: expected None, got {type(data).__name__} {data!r:.60}")

    def is_valid_value(self, a: Any) -> bool:
        """Only ``None`` is valid."""
        return a is None

    def __str__(self) -> str:
        return "NoneTypeT"


#: The :class:`NoneTypeT` instance.
none_type_t = NoneTypeT()

#: The constant ``None``.
NoneConst = Constant(none_type_t, None, name="NoneConst")


class SliceType(Type):
    """The Type of Python ``slice`` objects."""

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return the slice ``data``.

        Raises
        ------
        TypeError
            When ``data`` is not a ``slice``.
        """
        if isinstance(data, slice):
            return data
        raise TypeError(f"SliceType: expected a slice, got {type(data).__name__} {data!r:.60}")

    def clone(self, dtype: Any = None, broadcastable: Any = None) -> SliceType:
        """A new instance (every SliceType is equal; the arguments are ignored)."""
        return type(self)()

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "slice"

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """Slices hold no memory: only a slice and itself "share" it."""
        return isinstance(a, slice) and a is b


#: The :class:`SliceType` instance.
slicetype = SliceType()


def _plain_bound(bound: Any) -> Any:
    """A 0-d integer array bound as a Python int (slices must be hashable)."""
    if isinstance(bound, np.ndarray):
        if bound.ndim != 0 or str(bound.dtype) not in integer_dtypes:
            raise TypeError(f"SliceConstant: a slice bound must be an integer, got {bound!r}")
        return int(bound)
    return bound


class SliceConstant(Constant):
    """A constant ``slice``; 0-d integer array bounds are stored as Python ints.

    Parameters
    ----------
    type
        A :class:`SliceType`.
    data
        The slice.
    name
        Optional name.
    """

    def __init__(self, type: SliceType, data: slice, name: str | None = None) -> None:
        if not isinstance(data, slice):
            raise TypeError(f"SliceConstant: expected a slice, got {type(data).__name__}")
        data = slice(_plain_bound(data.start), _plain_bound(data.stop), _plain_bound(data.step))
        super().__init__(type, data, name)

    def signature(self) -> tuple[Any, ...]:
        """Slices are equal when their bounds are."""
        return (SliceConstant, self.data.start, self.data.stop, self.data.step)

    def __str__(self) -> str:
        data = self.data
        return f"{type(self).__name__}{{{data.start}, {data.stop}, {data.step}}}"


SliceType.constant_type = SliceConstant

#: The constant ``slice(None)``.
NoneSliceConst = SliceConstant(slicetype, slice(None), name="slice(None)")


def as_int_none_variable(x: Any) -> Variable:
    """A slice bound as a graph variable: :data:`NoneConst` for ``None``, else a 0-d
    integer tensor.

    Raises
    ------
    TypeError
        If ``x`` is not ``None`` and not a 0-d integer.
    """
    if x is None:
        return NoneConst
    if isinstance(x, Variable) and isinstance(x.type, NoneTypeT):
        return x
    bound = as_tensor_variable(x)
    if bound.type.ndim != 0 or bound.type.dtype not in integer_dtypes:
        raise TypeError(f"a slice bound must be a 0-d integer or None, got {bound.type}")
    return bound


class MakeSlice(Op):
    """Build a ``slice`` from ``start``, ``stop`` and ``step`` (each ``None`` or a 0-d
    integer); ``make_slice(slice(a, b, c))`` is accepted too."""

    __props__ = ()

    def make_node(self, slc: Any, stop: Any = None, step: Any = None) -> Apply:
        """The three bounds as :data:`NoneConst` or 0-d integer tensors.

        Raises
        ------
        TypeError
            For a bound that is neither ``None`` nor a 0-d integer, or a ``slice`` given
            together with ``stop``/``step``.
        """
        if isinstance(slc, slice):
            if stop is not None or step is not None:
                raise TypeError("MakeSlice: give either a slice or start, stop and step")
            bounds = [slc.start, slc.stop, slc.step]
        else:
            bounds = [slc, stop, step]
        return Apply(self, [as_int_none_variable(b) for b in bounds], [slicetype()])

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The bounds are disconnected from the slice's gradient."""
        return [disconnected_type() for _ in inputs]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """No input is differentiably connected."""
        return [[False] for _ in node.inputs]


#: The :class:`MakeSlice` instance.
make_slice = MakeSlice()


@_as_symbolic.register(object)
def _tensor_as_symbolic(x: Any, **kwargs: Any) -> Variable:
    """What has no conversion of its own becomes a tensor."""
    return as_tensor_variable(x, **kwargs)


@_as_symbolic.register(slice)
def _slice_as_symbolic(x: slice, **kwargs: Any) -> Variable:
    """A :class:`SliceConstant`, or a :data:`make_slice` node when a bound is symbolic."""
    if any(isinstance(b, Variable) for b in (x.start, x.stop, x.step)):
        out = make_slice(x)
        assert isinstance(out, Variable)
        return out
    return SliceConstant(slicetype, x)


@_as_symbolic.register(type(None))
def _none_as_symbolic(x: None, **kwargs: Any) -> Variable:
    """:data:`NoneConst`."""
    return NoneConst
