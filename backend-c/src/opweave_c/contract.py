"""Finding the C implementation of Types and Ops, and calling the ``c_*`` contract.

Types and Ops whose class (or instance, as in seed 002's tutorial) defines the C
methods are used as they are; for the others the plugin manager is asked through
``opweave_c_type`` / ``opweave_c_code``. Every optional method may be missing
(raise :class:`MethodNotDefined`), and the ``c_compiler``-taking methods may be
written with or without that argument.
"""

from __future__ import annotations

import inspect
from typing import Any

from opweave.graph.c_interface import CLinkerOp, CLinkerType
from opweave.graph.utils import MethodNotDefined
from opweave.plugins import get_plugin_manager


class NoCCode(NotImplementedError):
    """A Type or Op has no C implementation (neither its own nor from a plugin)."""


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
        raise NoCCode(f"Type {type_} ({type(type_).__name__}) has no C implementation")
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
    found = get_plugin_manager().hook.opweave_c_code(op=op, node=node)
    if found is None:
        raise NoCCode(f"{op} has no C implementation (node {node})")
    return found


def _accepts(fn: Any, parameter: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    if parameter in params:
        return True
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def call_optional(obj: Any, method: str, *args: Any, default: Any = None, **kwargs: Any) -> Any:
    """``obj.method(*args, **kwargs)``, or ``default`` when the method is missing or undefined.

    Keyword arguments the method does not accept (``check_input`` for the seed's
    two-argument ``c_declare``) are left out.
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


def version_of(obj: Any, node: Any = None) -> tuple[Any, ...]:
    """The ``c_code_cache_version`` (``_apply`` for nodes) of ``obj``; ``()`` when unversioned."""
    if node is not None:
        fn = getattr(obj, "c_code_cache_version_apply", None)
        if fn is not None:
            version = call_optional(obj, "c_code_cache_version_apply", node, default=())
            return tuple(version or ())
    return tuple(call_optional(obj, "c_code_cache_version", default=()) or ())
