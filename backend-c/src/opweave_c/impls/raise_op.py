"""C code for :mod:`opweave.raise_op`: ``CheckAndRaise`` and its subclasses.

The output is the checked array itself, as in the Python backend. When a condition is
false the exception class is looked up by module and name (only then, so a passing check
costs nothing more) and raised with the Op's message. A class that cannot be found that
way (one defined inside a function) has no C code: ``cvm`` runs such nodes in Python.
"""

from __future__ import annotations

import sys
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.raise_op import CheckAndRaise
from opweave_c.impls.common import SnippetImpl, c_string, tensor_dtype
from opweave_c.impls.csource import render

__all__ = ["C_OPS"]


def _importable(exc_type: type) -> bool:
    """Whether ``exc_type`` is the attribute of its module named by its ``__qualname__``."""
    module = sys.modules.get(exc_type.__module__)
    name = exc_type.__qualname__
    return module is not None and "." not in name and getattr(module, name, None) is exc_type


class CheckAndRaiseC(SnippetImpl):
    """Check every 0-d boolean condition; the output is the value itself."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Raise ``exc_type(msg)`` unless every condition is true; else alias the value."""
        x, *conds = inputs
        (z,) = outputs
        op = node.op
        held = [f"(*(npy_bool*)PyArray_DATA({c}))" for c in conds]
        return render(
            "raise_op.c",
            "check_and_raise",
            all_conds=" && ".join(held) or "1",
            module=c_string(op.exc_type.__module__),  # type: ignore[attr-defined]
            qualname=c_string(op.exc_type.__qualname__),  # type: ignore[attr-defined]
            msg=c_string(op.msg),  # type: ignore[attr-defined]
            fail=sub["fail"],
            x=x,
            z=z,
        )


def _check_and_raise(op: CheckAndRaise, node: Apply) -> CheckAndRaiseC | None:
    if tensor_dtype(node.inputs[0]) is None or not _importable(op.exc_type):
        return None
    if any(tensor_dtype(c) != "bool" for c in node.inputs[1:]):
        return None
    return CheckAndRaiseC()


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({CheckAndRaise: _check_and_raise})
