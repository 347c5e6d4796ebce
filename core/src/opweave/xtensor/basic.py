"""The base classes of xtensor Ops and the casts between tensors and xtensors
(PyTensor's ``pytensor.xtensor.basic``).

:class:`XOp` Ops exist only before linking: the ``lower_xtensor`` phase
(:mod:`opweave.xtensor.rewriting`) replaces every one of them with tensor Ops, so they
carry no implementation and no backend implements them. The casts
(:class:`TensorFromXTensor`, :class:`XTensorFromTensor`, :class:`Rename`) change only the
Type, not the value: they are :class:`~opweave.compile.ops.TypeCastingOp` Ops, which every
backend runs as the identity, and they remain where a function's inputs or outputs are
xtensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from opweave.compile.ops import TypeCastingOp
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.type import TensorType
from opweave.xtensor.type import XTensorType, XTensorVariable, as_xtensor, xtensor

__all__ = [
    "Rename",
    "TensorFromXTensor",
    "XOp",
    "XTensorFromTensor",
    "XTypeCastOp",
    "rename",
    "tensor_from_xtensor",
    "xtensor_from_tensor",
]


class XOp(Op):
    """Base of the xtensor Ops that are lowered to tensor Ops before linking.

    Such an Op has no implementation in any backend (``lowered_before_linking``): a
    function that still holds one after rewriting was compiled with the ``lower_xtensor``
    phase excluded.
    """

    #: Read by the backends' implementation tables: not an Op they implement.
    lowered_before_linking: ClassVar[bool] = True

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Never folded: the lowering replaces the node first."""
        return False

    def vectorize_node(self, node: Apply, *new_inputs: Variable, new_dim: str | None) -> Any:
        """Not available for this Op."""
        raise NotImplementedError(f"Vectorized node not implemented for {self}")


class XTypeCastOp(TypeCastingOp):
    """Base of the Ops that cast between tensor and xtensor Types (the value is kept)."""

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return list(input_shapes)

    def vectorize_node(self, node: Apply, *new_inputs: Variable, new_dim: str | None) -> Any:
        """Not available for this Op."""
        raise NotImplementedError(f"Vectorized node not implemented for {self}")


class TensorFromXTensor(XTypeCastOp):
    """The xtensor's data as a tensor, axes in the order of its dims."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        """One xtensor input; the output is a tensor of its dtype and static shape.

        Raises
        ------
        TypeError
            If ``x`` is not an xtensor.
        """
        if not isinstance(x, Variable) or not isinstance(x.type, XTensorType):
            raise TypeError(
                f"TensorFromXTensor: x must have an XTensorType, got "
                f"{getattr(x, 'type', type(x))!r}"
            )
        return Apply(self, [x], [TensorType(x.type.dtype, shape=x.type.shape)()])

    def L_op(self, inputs: Sequence[Any], outputs: Sequence[Any], g_outs: Sequence[Any]) -> list:
        """The gradient, given the input's dims back."""
        [x] = inputs
        [g_out] = g_outs
        return [xtensor_from_tensor(g_out, dims=x.type.dims)]

    def vectorize_node(self, node: Apply, *new_inputs: Variable, new_dim: str | None) -> Any:
        """The cast of the batched input, its original dims last."""
        [old_x] = node.inputs
        [new_x] = new_inputs
        if new_x.type.ndim - old_x.type.ndim > 1:  # type: ignore[attr-defined]
            raise NotImplementedError(
                f"Vectorization of {self} cannot guarantee correct placement of multiple "
                "batch dimensions. Vectorize one batch dimension at a time, or use "
                "opweave.xtensor.vectorization.vectorize_graph."
            )
        return [self(new_x.transpose(..., *old_x.dims))]  # type: ignore[attr-defined]


tensor_from_xtensor = TensorFromXTensor()


class XTensorFromTensor(XTypeCastOp):
    """A tensor's data as an xtensor with the given dims.

    Parameters
    ----------
    dims
        The names of the dimensions, one per axis of the tensor.
    """

    __props__: tuple[str, ...] = ("dims",)  # type: ignore[assignment]

    def __init__(self, dims: Sequence[str]) -> None:
        super().__init__()
        self.dims = tuple(dims)

    def make_node(self, x: Any) -> Apply:
        """One tensor input of rank ``len(dims)``.

        Raises
        ------
        TypeError
            If ``x`` is not a tensor.
        ValueError
            If its rank differs from the number of dims.
        """
        if not isinstance(x, Variable) or not isinstance(x.type, TensorType):
            raise TypeError(
                f"XTensorFromTensor: x must have a TensorType, got {getattr(x, 'type', type(x))!r}"
            )
        if x.type.ndim != len(self.dims):
            raise ValueError(
                f"XTensorFromTensor: dims {self.dims} name {len(self.dims)} dimensions, the "
                f"tensor {x} has {x.type.ndim}"
            )
        out = xtensor(dtype=x.type.dtype, dims=self.dims, shape=x.type.shape)
        return Apply(self, [x], [out])

    def L_op(self, inputs: Sequence[Any], outputs: Sequence[Any], g_outs: Sequence[Any]) -> list:
        """The gradient as a tensor."""
        [g_out] = g_outs
        return [tensor_from_xtensor(g_out)]

    def vectorize_node(self, node: Apply, *new_inputs: Variable, new_dim: str | None) -> Any:
        """The cast of the batched input, the new dimension first."""
        [old_x] = node.inputs
        [new_x] = new_inputs
        if new_x.type.ndim != old_x.type.ndim:  # type: ignore[attr-defined]
            if new_dim is None:
                raise NotImplementedError(
                    f"Vectorization of {self} cannot infer the new dimension labels. Use "
                    "opweave.xtensor.vectorization.vectorize_graph instead."
                )
            return [type(self)(dims=(new_dim, *self.dims))(new_x)]
        return [self(new_x)]


def xtensor_from_tensor(x: Any, dims: Sequence[str], name: str | None = None) -> XTensorVariable:
    """The tensor ``x`` as an xtensor with dimensions ``dims``.

    Parameters
    ----------
    x
        A tensor variable (or a value a tensor constant can hold).
    dims
        The names of its dimensions.
    name
        The name of the result.
    """
    if isinstance(dims, str):
        dims = (dims,)
    if not isinstance(x, Variable):
        x = as_tensor_variable(x)
    out = XTensorFromTensor(dims=dims)(x, name=name)
    assert isinstance(out, XTensorVariable)
    return out


class Rename(XTypeCastOp):
    """The same xtensor with its dimensions named ``new_dims``.

    Parameters
    ----------
    new_dims
        The new names, one per dimension, in order.
    """

    __props__: tuple[str, ...] = ("new_dims",)  # type: ignore[assignment]

    def __init__(self, new_dims: tuple[str, ...]) -> None:
        super().__init__()
        self.new_dims = tuple(new_dims)

    def make_node(self, x: Any) -> Apply:
        """One xtensor input with as many dims as ``new_dims``."""
        x = as_xtensor(x)
        if len(self.new_dims) != x.type.ndim:
            raise ValueError(
                f"Rename: {len(self.new_dims)} new names {self.new_dims} for the "
                f"{x.type.ndim} dims {x.type.dims}"
            )
        return Apply(self, [x], [x.type.clone(dims=self.new_dims)()])

    def L_op(self, inputs: Sequence[Any], outputs: Sequence[Any], g_outs: Sequence[Any]) -> list:
        """The gradient with the input's names back."""
        [x] = inputs
        [g_out] = g_outs
        return [Rename(x.type.dims)(g_out)]

    def vectorize_node(self, node: Apply, *new_inputs: Variable, new_dim: str | None) -> Any:
        """Renames the batched input's old dims, keeps its new ones."""
        [old_x] = node.inputs
        [new_x] = new_inputs
        mapping = dict(zip(old_x.type.dims, self.new_dims, strict=True))  # type: ignore[attr-defined]
        dims = tuple(mapping.get(d, d) for d in new_x.type.dims)  # type: ignore[attr-defined]
        return [type(self)(dims)(new_x)]


def rename(x: Any, /, name_dict: dict[str, str] | None = None, **names: str) -> XTensorVariable:
    """``x`` with some dimensions renamed (``rename(x, {"a": "b"})`` or ``rename(x, a="b")``).

    Raises
    ------
    ValueError
        If both a dict and keywords are given, or an old name is not a dim of ``x``.
    """
    if name_dict is not None:
        if names:
            raise ValueError("Cannot use both positional and keyword names in rename")
        names = dict(name_dict)
    x = as_xtensor(x)
    old = x.type.dims
    new = list(old)
    for old_name, new_name in names.items():
        if old_name not in old:
            raise ValueError(f"Cannot rename {old_name} to {new_name}: {old_name} not in {old}")
        new[old.index(old_name)] = new_name
    out = Rename(tuple(new))(x)
    assert isinstance(out, XTensorVariable)
    return out
