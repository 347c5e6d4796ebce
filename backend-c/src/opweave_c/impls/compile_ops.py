"""C code for DeepCopyOp, ViewOp, Shape and Shape_i: per Type, from the registries.

The C of these type-generic Ops depends on their input's Type, so it is looked up in the
C backend's own collect hooks (``opweave_register_deep_copy_op_c_code`` and its
view/shape/shape_i siblings, declared in :mod:`opweave_c.hookspecs`). The C backend
answers them for the core's Types (the ``*_entries`` functions below); a plugin answers
for its own Types, or registers them with ``opweave.compile.ops.register_*_c_code``.
``FromFunctionOp`` (``as_op``) runs a user's Python function: it has no C code, and its
table entry says so.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.compile.ops import DeepCopyOp, FromFunctionOp, TypeCastingOp
from opweave.graph.basic import Apply
from opweave.graph.type import Generic
from opweave.plugins import get_plugin_manager
from opweave.scalar.type import ScalarType
from opweave.tensor.shape import Shape, Shape_i
from opweave.tensor.type import TensorType
from opweave.xtensor.type import XTensorType
from opweave_c.impls.common import python_only
from opweave_c.impls.csource import snippet

VERSION = (1,)

TENSOR_DEEP_COPY = snippet("compile_ops.c", "tensor_deep_copy")

TENSOR_VIEW = snippet("compile_ops.c", "tensor_view")

TENSOR_SHAPE = snippet("compile_ops.c", "tensor_shape")

TENSOR_SHAPE_I = snippet("compile_ops.c", "tensor_shape_i")

TENSOR_SHAPE_I_CHECK = snippet("compile_ops.c", "tensor_shape_i_check")

SCALAR_COPY = "%(oname)s = %(iname)s;"

GENERIC_VIEW = snippet("compile_ops.c", "generic_view")


def deep_copy_entries() -> list[tuple[type, str, tuple[Any, ...]]]:
    """DeepCopyOp for arrays (named-dimension ones too) and scalars."""
    return [
        (TensorType, TENSOR_DEEP_COPY, VERSION),
        (XTensorType, TENSOR_DEEP_COPY, VERSION),
        (ScalarType, SCALAR_COPY, VERSION),
    ]


def view_entries() -> list[tuple[type, str, tuple[Any, ...]]]:
    """ViewOp (and the other type casts) for arrays, named-dimension arrays, scalars and
    generic objects."""
    return [
        (TensorType, TENSOR_VIEW, VERSION),
        (XTensorType, TENSOR_VIEW, VERSION),
        (ScalarType, SCALAR_COPY, VERSION),
        (Generic, GENERIC_VIEW, VERSION),
    ]


def shape_entries() -> list[tuple[type, str, tuple[Any, ...]]]:
    """Shape of arrays (named-dimension ones too)."""
    return [(TensorType, TENSOR_SHAPE, VERSION), (XTensorType, TENSOR_SHAPE, VERSION)]


def shape_i_entries() -> list[tuple[type, str, str, tuple[Any, ...]]]:
    """Shape_i of arrays (named-dimension ones too), with the rank check."""
    return [
        (TensorType, TENSOR_SHAPE_I, TENSOR_SHAPE_I_CHECK, VERSION),
        (XTensorType, TENSOR_SHAPE_I, TENSOR_SHAPE_I_CHECK, VERSION),
    ]


#: The registry hook of each type-generic Op class (subclasses included).
REGISTRY_HOOKS: MappingProxyType[type, str] = MappingProxyType(
    {
        DeepCopyOp: "opweave_register_deep_copy_op_c_code",
        TypeCastingOp: "opweave_register_view_op_c_code",
        Shape: "opweave_register_shape_c_code",
        Shape_i: "opweave_register_shape_i_c_code",
    }
)


def registry_hook_of(op: Any) -> str | None:
    """The registry hook giving ``op``'s C per input Type, or ``None``."""
    for cls in type(op).__mro__:
        hook = REGISTRY_HOOKS.get(cls)
        if hook is not None:
            return hook
    return None


def registered_entry(hook_name: str, type_: Any) -> tuple[Any, ...] | None:
    """The entry registered through ``hook_name`` for ``type(type_)``, or ``None``.

    Entries for a base class apply to subclasses; an exact class match wins, and among
    equals the plugin registered last.
    """
    hook = getattr(get_plugin_manager().hook, hook_name)
    candidates: list[tuple[Any, ...]] = [entry for entries in hook() for entry in (entries or ())]
    for entry in candidates:
        if type(type_) is entry[0]:
            return entry
    for entry in candidates:
        if isinstance(type_, entry[0]):
            return entry
    return None


class RegisteredC:
    """The C of one node of a type-generic Op: the entry registered for its input's Type.

    Parameters
    ----------
    entry
        ``(Type class, code, version)``, or ``(Type class, code, check_input, version)``
        for ``Shape_i``.
    """

    def __init__(self, entry: tuple[Any, ...]) -> None:
        self.entry = entry

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """The registered code (after its ``CHECK_INPUT`` for ``Shape_i``), templated."""
        template: dict[str, Any] = dict(sub, iname=inputs[0], oname=outputs[0])
        if isinstance(node.op, Shape_i):
            _, code, check_input, _ = self.entry
            template["i"] = node.op.i
            return str(check_input % template) + str(code % template)
        return str(self.entry[1] % template)

    def c_code_cache_version_apply(self, node: Apply) -> tuple[Any, ...]:
        """The registered version (``()``, unversioned, when none was given)."""
        version = tuple(self.entry[-1] or ())
        return (1, *version) if version else ()


def _registered(op: Any, node: Apply) -> RegisteredC | None:
    hook = registry_hook_of(op)
    entry = registered_entry(hook, node.inputs[0].type) if hook is not None else None
    return RegisteredC(entry) if entry is not None else None


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {FromFunctionOp: python_only, **dict.fromkeys(REGISTRY_HOOKS, _registered)}
)
