"""The ``opweave.plugins`` entry point of opweave-double.

The Ops define ``perform`` and ``c_code`` themselves and the Type its C interface, so
no implementation hook is needed; what the plugin contributes is rewrites, registered
like the core's own, the DeepCopyOp/ViewOp C code for ``Double``, and the graph that
``python -m opweave demo`` runs. Those two hooks
are the C backend's own (declared by opweave-c), so their implementations are marked
``optionalhook``: the plugin loads where opweave-c is not installed.
"""

from __future__ import annotations

from typing import Any

from opweave.plugins import hookimpl
from opweave_double.ops import add, mul
from opweave_double.rewrites import remove_add_zero, remove_mul_one
from opweave_double.type import Double, double


@hookimpl
def opweave_rewrites(db: Any) -> None:
    """Register the neutral-element rewrites in the ``canonicalize`` phase (FAST_RUN)."""
    db["canonicalize"].register("double_remove_add_zero", remove_add_zero, "fast_run", "double")
    db["canonicalize"].register("double_remove_mul_one", remove_mul_one, "fast_run", "double")


@hookimpl
def opweave_demo() -> dict[str, Any]:
    """The tutorial's ``(x + y) * z`` on doubles, for ``python -m opweave demo``."""
    x, y, z = double("x"), double("y"), double("z")
    return {
        "title": "(x + y) * z with x, y, z of the plugin Type 'double'",
        "inputs": [x, y, z],
        "output": mul(add(x, y), z),
        "values": (1.0, 2.0, 3.0),
        "expected": 9.0,
        "refused": (2**53 + 1, 2.5, 3.0),
    }


@hookimpl(optionalhook=True)
def opweave_register_deep_copy_op_c_code() -> list[tuple[type, str, tuple[int, ...]]]:
    """Copying a C double is assigning it (the DeepCopyOp registration of Theano's C tutorial)."""
    return [(Double, "%(oname)s = %(iname)s;", (1,))]


@hookimpl(optionalhook=True)
def opweave_register_view_op_c_code() -> list[tuple[type, str, tuple[int, ...]]]:
    """A view of a C double is the double itself."""
    return [(Double, "%(oname)s = %(iname)s;", (1,))]
