"""Typed views of graph objects for the scalar Ops (for type checkers only).

``Op.__call__`` returns ``Variable | list[Variable]`` and an Op's ``grad`` receives plain
``Variable`` inputs, although a scalar Op's inputs and outputs are scalar variables by
construction (:meth:`~opweave.scalar.basic.ScalarOp.make_node` builds them with
:func:`~opweave.scalar.basic.as_scalar`). The helpers below say so to the type checker,
as :mod:`opweave.tensor._typing` does for tensors.

They check nothing and return their argument unchanged: the run-time behaviour of the code
that calls them is the one it had without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from opweave.graph.basic import Variable
    from opweave.scalar.basic import ScalarVariable

__all__ = ["scalar_out", "scalar_var", "scalar_vars"]


def scalar_var(v: Variable) -> ScalarVariable:
    """``v`` typed as a :class:`~opweave.scalar.basic.ScalarVariable`.

    Parameters
    ----------
    v
        An input or output of a scalar Op (built by its ``make_node``).

    Returns
    -------
    ScalarVariable
        ``v`` itself.
    """
    return cast("ScalarVariable", v)


def scalar_vars(vs: Sequence[Variable]) -> Sequence[ScalarVariable]:
    """``vs`` typed as a sequence of scalar variables.

    Parameters
    ----------
    vs
        The inputs or outputs of a scalar Op.

    Returns
    -------
    sequence of ScalarVariable
        ``vs`` itself.
    """
    return cast("Sequence[ScalarVariable]", vs)


def scalar_out(out: Variable | Sequence[Variable]) -> ScalarVariable:
    """The result of calling a scalar Op with one output, typed as a scalar variable.

    Parameters
    ----------
    out
        What ``op(*inputs)`` returned.

    Returns
    -------
    ScalarVariable
        ``out`` itself.
    """
    return cast("ScalarVariable", out)
