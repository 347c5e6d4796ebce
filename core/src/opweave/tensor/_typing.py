"""Typed views of graph objects for the tensor library (for type checkers only).

``Op.__call__`` returns ``Variable | list[Variable]`` and an Op's ``grad`` or
``infer_shape`` receives plain ``Variable`` inputs, although a tensor Op's inputs and
outputs are tensor variables by construction (its ``make_node`` builds them). The helpers
below say so to the type checker where a run-time ``isinstance`` narrowing cannot be used:
variables of other array Types with the same interface (a backend's device arrays, whose
Type derives from :class:`~opweave.tensor.type.ShapedType`) go through the same code.

They check nothing and return their argument unchanged: the run-time behaviour of the code
that calls them is the one it had without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from opweave.graph.basic import Variable
    from opweave.tensor.type import TensorType
    from opweave.tensor.variable import TensorVariable

__all__ = ["tensor_out", "tensor_outs", "tensor_type_of", "tensor_var", "tensor_vars"]


def tensor_type_of(v: Variable) -> TensorType:
    """The Type of ``v``, typed as a :class:`~opweave.tensor.type.TensorType`.

    Parameters
    ----------
    v
        A variable of a tensor-like Type (``dtype``, ``ndim``, ``shape``, ``broadcastable``).

    Returns
    -------
    TensorType
        ``v.type`` itself.
    """
    return cast("TensorType", v.type)


def tensor_var(v: Variable) -> TensorVariable:
    """``v`` typed as a :class:`~opweave.tensor.variable.TensorVariable`.

    Parameters
    ----------
    v
        An input or output of a tensor Op (built by its ``make_node``).

    Returns
    -------
    TensorVariable
        ``v`` itself.
    """
    return cast("TensorVariable", v)


def tensor_vars(vs: Sequence[Variable]) -> Sequence[TensorVariable]:
    """``vs`` typed as a sequence of tensor variables.

    Parameters
    ----------
    vs
        The inputs or outputs of a tensor Op.

    Returns
    -------
    sequence of TensorVariable
        ``vs`` itself.
    """
    return cast("Sequence[TensorVariable]", vs)


def tensor_out(out: Variable | Sequence[Variable]) -> TensorVariable:
    """The result of calling an Op with one (or a default) output, typed as a tensor.

    Parameters
    ----------
    out
        What ``op(*inputs)`` returned.

    Returns
    -------
    TensorVariable
        ``out`` itself.
    """
    return cast("TensorVariable", out)


def tensor_outs(outs: Variable | Sequence[Variable]) -> list[TensorVariable]:
    """The result of calling an Op with several outputs, typed as a list of tensors.

    Parameters
    ----------
    outs
        What ``op(*inputs)`` returned (the list of its outputs).

    Returns
    -------
    list of TensorVariable
        ``outs`` itself.
    """
    return cast("list[TensorVariable]", outs)
