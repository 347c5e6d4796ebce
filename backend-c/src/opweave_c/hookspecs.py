"""The C backend's own hooks, declared through ``opweave_addhooks``.

The backend-neutral ``opweave_implementation(op, node, backend="c")`` hook gives Ops their
C; these hooks cover what only the C backend asks: the C interface of a Type, and C code
per Type for the helper Ops ``DeepCopyOp``, ``ViewOp``, ``Shape`` and ``Shape_i``
(fed by :func:`opweave.compile.ops.register_deep_copy_op_c_code` and its siblings).

A plugin implementing one of them should mark the implementation
``@hookimpl(optionalhook=True)``, so that it loads where opweave-c is not installed.
"""

from __future__ import annotations

from typing import Any

from opweave.plugins import hookspec
from opweave.plugins.isolation import answer_check


def entries_problem(result: Any, kwargs: Any) -> str | None:
    """What is wrong with a registry hook's answer (``None`` when it is a list of
    ``(Type class, C code, ...)`` tuples)."""
    if not isinstance(result, list | tuple) or not all(
        isinstance(entry, tuple) and entry and isinstance(entry[0], type) for entry in result
    ):
        return f"returned {result!r}; expected a list of (Type class, C code, ...) tuples"
    return None


def implementation_problem(result: Any) -> str | None:
    """What a C implementation must be when it is not (``None`` when it has ``c_code``):
    the C backend's answer to ``implementation_checks`` in ``opweave_backend_info``."""
    return None if hasattr(result, "c_code") else "an object with a c_code method"


@hookspec(firstresult=True)
def opweave_c_type(type_: Any) -> Any | None:
    """Return the C interface of ``type_``, or ``None``.

    **Kind:** first result.

    The result is an object with the C contract of Theano's documented Type interface
    (``c_declare``, ``c_init``, ``c_extract``, ``c_sync``, ``c_cleanup`` and
    optionally ``c_extract_out``, ``c_literal``, ``c_is_simple``,
    ``c_element_type``, ``c_headers``, ``c_support_code``, ``c_init_code``,
    ``c_code_cache_version`` ...). Asked only for Types whose class (or
    instance) does not define ``c_declare`` itself: a plugin's ``Double`` is
    used as it is, while the C backend answers for the core's ``TensorType``,
    ``ScalarType`` and ``Generic``.
    """


@answer_check(entries_problem)
@hookspec
def opweave_register_deep_copy_op_c_code() -> list[tuple[type, str, tuple[Any, ...]]]:
    """Return ``(Type class, C code, version)`` entries for ``DeepCopyOp``.

    **Kind:** collect.

    The C code uses ``%(iname)s`` and ``%(oname)s`` for the input and output
    names and ``%(fail)s`` on error. ``register_deep_copy_op_c_code`` in
    :mod:`opweave.compile.ops` feeds the same registry.
    """


@answer_check(entries_problem)
@hookspec
def opweave_register_view_op_c_code() -> list[tuple[type, str, tuple[Any, ...]]]:
    """Return ``(Type class, C code, version)`` entries for ``ViewOp``.

    **Kind:** collect. Same templating as the DeepCopyOp entries.
    """


@answer_check(entries_problem)
@hookspec
def opweave_register_shape_c_code() -> list[tuple[type, str, tuple[Any, ...]]]:
    """Return ``(Type class, C code, version)`` entries for ``Shape``.

    **Kind:** collect. Same templating as the DeepCopyOp entries.
    """


@answer_check(entries_problem)
@hookspec
def opweave_register_shape_i_c_code() -> list[tuple[type, str, str, tuple[Any, ...]]]:
    """Return ``(Type class, C code, CHECK_INPUT code, version)`` entries for ``Shape_i``.

    **Kind:** collect. The code may also use ``%(i)s``, the dimension asked for;
    ``CHECK_INPUT`` must check that the input has more than ``i`` dimensions.
    """
