"""Finding the C implementation of Types and Ops, and calling the ``c_*`` contract.

Types and Ops whose class (or instance, as in Theano's C tutorial) defines the C
methods are used as they are; for the others the plugin manager is asked through
``opweave_c_type`` / ``opweave_implementation(op, node, backend="c")``. Every optional
method may be missing (raise :class:`MethodNotDefined`), and the ``c_compiler``-taking
methods may be written with or without that argument.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from opweave.compile.ops import DeepCopyOp, TypeCastingOp
from opweave.graph import c_interface
from opweave.graph.c_interface import CLinkerOp, CLinkerType
from opweave.graph.type import Generic
from opweave.graph.utils import MethodNotDefined
from opweave.plugins import get_plugin_manager
from opweave.scalar.type import ScalarType
from opweave.tensor.shape import Shape, Shape_i
from opweave.tensor.type import TensorType
from opweave_c.impls.compile_ops import registered_entry

#: The per-Type registries of the helper Ops: ``Op class -> (register function, hook,
#: the arguments after the Type class)``.
REGISTRIES: dict[type, tuple[str, str, str]] = {
    DeepCopyOp: (
        "register_deep_copy_op_c_code",
        "opweave_register_deep_copy_op_c_code",
        "code, version",
    ),
    TypeCastingOp: (
        "register_view_op_c_code",
        "opweave_register_view_op_c_code",
        "code, version",
    ),
    Shape: ("register_shape_c_code", "opweave_register_shape_c_code", "code, version"),
    Shape_i: (
        "register_shape_i_c_code",
        "opweave_register_shape_i_c_code",
        "code, check_input, version",
    ),
}

#: The core's own Types, whose C extraction refuses everything their ``filter`` refuses
#: (or, for ``Generic``, whose ``filter`` refuses nothing).
C_CHECK_COMPLETE: tuple[type, ...] = (TensorType, ScalarType, Generic)


class NoCCode(NotImplementedError):
    """A Type or Op has no C implementation (neither its own nor from a plugin)."""


class UnversionedCCodeWarning(UserWarning):
    """C code without a ``c_code_cache_version``: it is compiled again in every process."""


def _defines(obj: Any, method: str, base: type) -> bool:
    if method in getattr(obj, "__dict__", {}):
        return True
    for cls in type(obj).__mro__:
        if cls is base:
            return False
        if method in vars(cls):
            return True
    return False


def c_type_of(type_: Any) -> Any:
    """The object providing ``type_``'s C interface.

    Raises
    ------
    NoCCode
        Naming the Type when neither it nor any plugin provides C code for it.
    """
    if _defines(type_, "c_declare", CLinkerType):
        return type_
    found = get_plugin_manager().hook.opweave_c_type(type_=type_)
    if found is None:
        cls = type(type_).__name__
        raise NoCCode(
            f"Type {type_} ({cls}) has no C implementation; define c_declare, c_init, "
            f"c_extract, c_sync and c_cleanup on {cls}, or return an object with them from "
            "an opweave_c_type(type_) hook implementation"
        )
    return found


def c_op_of(node: Any) -> Any:
    """The object providing the C code of ``node``'s Op.

    Raises
    ------
    NoCCode
        Naming the node when neither its Op nor any plugin provides C code for it.
    """
    op = node.op
    if _defines(op, "c_code", CLinkerOp):
        return op
    check_registered(node)
    found = get_plugin_manager().hook.opweave_implementation(op=op, node=node, backend="c")
    if found is None:
        cls = type(op).__name__
        raise NoCCode(
            f"{op} has no C implementation (node {node}): give the Op class {cls} a c_code "
            "method (and c_code_cache_version), or return an object with c_code from an "
            'opweave_implementation(op, node, backend) hook implementation for backend="c"'
        )
    return found


def registry_of(op: Any) -> tuple[str, str, str] | None:
    """``(register function, hook, arguments)`` when ``op``'s C comes per Type from a
    registry (``DeepCopyOp``, ``ViewOp``, ``Shape``, ``Shape_i``), else ``None``."""
    for cls, registry in REGISTRIES.items():
        if isinstance(op, cls):
            return registry
    return None


def check_registered(node: Any) -> None:
    """Make sure a registry-dispatched node has C code registered for its input's Type.

    Raises
    ------
    NoCCode
        Naming the missing registration and the two ways to add it.
    """
    registry = registry_of(node.op)
    if registry is None:
        return
    function, hook, args = registry
    type_ = node.inputs[0].type
    c_type_of(type_)  # a Type without any C is named first
    if registered_entry(hook, type_) is not None:
        return
    cls = type(type_).__name__
    raise NoCCode(
        f"no C code is registered for {type(node.op).__name__} on Type {type_} ({cls}); "
        f"register it with opweave.compile.ops.{function}({cls}, {args}), or return "
        f"[({cls}, {args})] from an {hook}() hook implementation"
    )


def filter_checked_in_c(type_: Any) -> bool:
    """Does the C extraction of ``type_`` refuse every value its Python ``filter`` refuses?

    True for the core's own Types and for Types (or the C implementations a plugin gives
    for them) that declare ``c_extract_checks_filter = True``. For every other Type the
    linkers pass arguments through the Type's ``filter`` before handing them to C.
    """
    if getattr(type_, "c_extract_checks_filter", False) or type(type_) in C_CHECK_COMPLETE:
        return True
    try:
        ctype = c_type_of(type_)
    except NoCCode:
        return False
    return bool(getattr(ctype, "c_extract_checks_filter", False))


def _accepts(fn: Any, parameter: str) -> bool:
    """Does ``fn`` take a keyword argument named ``parameter``?"""
    try:
        return _function_accepts(getattr(fn, "__func__", fn), parameter)
    except TypeError:  # an unhashable callable: ask it directly
        return _function_accepts.__wrapped__(fn, parameter)


@functools.lru_cache(maxsize=4096)
def _function_accepts(fn: Any, parameter: str) -> bool:
    # Memoised per function: a module asks this for every node of every graph it builds.
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    if parameter in params:
        return True
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def call_optional(obj: Any, method: str, *args: Any, default: Any = None, **kwargs: Any) -> Any:
    """``obj.method(*args, **kwargs)``, or ``default`` when the method is missing or undefined.

    Keyword arguments the method does not accept (``check_input`` for Theano's
    documented two-argument ``c_declare``) are left out.
    """
    fn = getattr(obj, method, None)
    if fn is None:
        return default
    kwargs = {k: v for k, v in kwargs.items() if _accepts(fn, k)}
    try:
        return fn(*args, **kwargs)
    except MethodNotDefined:
        return default


def call_with_compiler(obj: Any, method: str, compiler: Any) -> list[str]:
    """A ``c_headers``-style list: the ``c_compiler`` version first, then the plain one."""
    fn = getattr(obj, method, None)
    if fn is None:
        return []
    try:
        if _accepts(fn, "c_compiler"):
            result = fn(c_compiler=compiler)
        else:
            result = fn()
    except MethodNotDefined:
        return []
    return list(result or [])


def as_snippets(code: Any) -> list[str]:
    """Support or init code given as a string or a list of strings, as a list."""
    if not code:
        return []
    if isinstance(code, str):
        return [code]
    return [str(c) for c in code]


def _declares_version(obj: Any) -> bool:
    """Does ``obj`` (or a class of its own, not the contract's base) define a version?"""
    methods = ("c_code_cache_version", "c_code_cache_version_apply")
    if any(m in getattr(obj, "__dict__", {}) for m in methods):
        return True
    for cls in type(obj).__mro__:
        if cls.__module__ == c_interface.__name__ or cls is object:
            continue
        if any(m in vars(cls) for m in methods):
            return True
    return False


def _unversioned_registration(obj: Any, node: Any) -> tuple[Any, str] | None:
    registry = registry_of(node.op) if node is not None else None
    if registry is None or _defines(node.op, "c_code", CLinkerOp):
        return None
    entry = registered_entry(registry[1], node.inputs[0].type)
    if entry is None or entry[-1]:
        return None
    type_cls = entry[0]
    return (type(node.op), type_cls), (
        f"the C code registered for {type(node.op).__name__} on {type_cls.__name__} has no "
        f"version; pass one, e.g. opweave.compile.ops.{registry[0]}({type_cls.__name__}, "
        "..., version=(1,))"
    )


def _unversioned(obj: Any, node: Any) -> tuple[Any, str] | None:
    """``(key, advice)`` when ``obj``'s C code has no version, else ``None``."""
    registered = _unversioned_registration(obj, node)
    if registered is not None or (
        node is not None and registry_of(node.op) is not None and obj is not node.op
    ):
        return registered
    if _declares_version(obj):
        return None
    cls = type(obj)
    return cls, f"define c_code_cache_version() on {cls.__name__}, e.g. returning (1,)"


def warn_unversioned(objects: list[tuple[Any, Any]]) -> None:
    """Warn once per class about C code without ``c_code_cache_version``.

    Parameters
    ----------
    objects
        ``(C implementation, node or None)`` pairs, as in a block's ``objects``.
    """
    pm = get_plugin_manager()
    for obj, node in objects:
        found = _unversioned(obj, node)
        if found is None:
            continue
        # The advice names the class (or the Op and Type of a registration): the plugin
        # manager says each one once.
        pm.warn_once(
            f"{type(obj).__name__} has C code without a c_code_cache_version: the module "
            "holding it is not cached on disk and is compiled again in every process; "
            f"{found[1]} (bump it whenever the C code changes)",
            UnversionedCCodeWarning,
        )


def version_of(obj: Any, node: Any = None) -> tuple[Any, ...]:
    """The ``c_code_cache_version`` (``_apply`` for nodes) of ``obj``; ``()`` when unversioned."""
    if node is not None:
        fn = getattr(obj, "c_code_cache_version_apply", None)
        if fn is not None:
            version = call_optional(obj, "c_code_cache_version_apply", node, default=())
            return tuple(version or ())
    return tuple(call_optional(obj, "c_code_cache_version", default=()) or ())
