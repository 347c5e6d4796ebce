"""The C-linker contract as mixins whose methods default to "not defined".

A backend that generates C (``opweave-c``) calls these on Types and Ops. Every
method raises :class:`~opweave.graph.utils.MethodNotDefined` unless a class
overrides it, so the backend can tell a missing piece from a broken one and
fall back to an implementation supplied through the ``opweave_implementation`` hook
(``backend="c"``) or to Python. Methods that take ``c_compiler`` may be overridden with or without
that argument; callers try the version with it first.
"""

from __future__ import annotations

import inspect
from typing import Any

from opweave.graph.utils import MethodNotDefined


def _undefined(obj: object, method: str) -> MethodNotDefined:
    return MethodNotDefined(f"{type(obj).__name__}.{method} is not defined")


class CLinkerObject:
    """Methods shared by every object that contributes C code."""

    def c_headers(self, c_compiler: Any = None) -> list[str]:
        """Return the ``#include`` names this object needs."""
        raise _undefined(self, "c_headers")

    def c_header_dirs(self, c_compiler: Any = None) -> list[str]:
        """Return include directories."""
        raise _undefined(self, "c_header_dirs")

    def c_libraries(self, c_compiler: Any = None) -> list[str]:
        """Return libraries to link against (without ``-l``)."""
        raise _undefined(self, "c_libraries")

    def c_lib_dirs(self, c_compiler: Any = None) -> list[str]:
        """Return library directories."""
        raise _undefined(self, "c_lib_dirs")

    def c_compile_args(self, c_compiler: Any = None) -> list[str]:
        """Return extra compiler arguments."""
        raise _undefined(self, "c_compile_args")

    def c_no_compile_args(self, c_compiler: Any = None) -> list[str]:
        """Return compiler arguments that must be removed."""
        raise _undefined(self, "c_no_compile_args")

    def c_support_code(self, **kwargs: Any) -> str | list[str]:
        """Return helper functions/structs (a string or a list of strings)."""
        raise _undefined(self, "c_support_code")

    def c_init_code(self, **kwargs: Any) -> list[str]:
        """Return snippets run once when the generated module is initialised."""
        raise _undefined(self, "c_init_code")

    def c_compiler(self) -> Any:
        """Return a compiler that must be used for the block holding this object."""
        raise _undefined(self, "c_compiler")

    def c_code_cache_version(self) -> tuple[Any, ...]:
        """Return the version of this object's C code; ``()`` means unversioned."""
        return ()


class CLinkerType(CLinkerObject):
    """C interface of a Type: how a Python value becomes C data and back."""

    def c_declare(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        """Return C declarations of the variables holding ``name``'s data."""
        raise _undefined(self, "c_declare")

    def c_init(self, name: str, sub: dict[str, str]) -> str:
        """Return C code initialising what :meth:`c_declare` declared."""
        raise _undefined(self, "c_init")

    def c_extract(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        """Return C code filling the declared variables from ``py_<name>``."""
        raise _undefined(self, "c_extract")

    def c_extract_out(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        """Like :meth:`c_extract`, but ``py_<name>`` may be ``Py_None`` (then :meth:`c_init`)."""
        try:
            takes_check = "check_input" in inspect.signature(self.c_extract).parameters
        except (TypeError, ValueError):
            takes_check = True
        extract = (
            self.c_extract(name, sub, check_input) if takes_check else self.c_extract(name, sub)
        )
        return f"if (py_{name} == Py_None) {{\n{self.c_init(name, sub)}\n}} else {{\n{extract}\n}}"

    def c_sync(self, name: str, sub: dict[str, str]) -> str:
        """Return C code storing the C data back into ``py_<name>`` (outputs only)."""
        raise _undefined(self, "c_sync")

    def c_cleanup(self, name: str, sub: dict[str, str]) -> str:
        """Return C code releasing what extract/init acquired."""
        raise _undefined(self, "c_cleanup")

    def c_is_simple(self) -> bool:
        """True for small builtin C types that may be passed on the stack."""
        return False

    def c_literal(self, data: Any) -> str:
        """Return a C literal for a constant ``data`` of this Type."""
        raise _undefined(self, "c_literal")

    def c_element_type(self) -> str:
        """Return the C type of the elements (e.g. ``"npy_float64"``)."""
        raise _undefined(self, "c_element_type")


class CLinkerOp(CLinkerObject):
    """C interface of an Op: the computation of one Apply node in C."""

    def c_code(
        self,
        node: Any,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Return the C code computing ``outputs`` from ``inputs``."""
        raise _undefined(self, "c_code")

    def c_code_cleanup(
        self,
        node: Any,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Return C code run after :meth:`c_code`, on success and failure alike."""
        raise _undefined(self, "c_code_cleanup")

    def c_support_code_apply(self, node: Any, name: str) -> str:
        """Return support code specialised for one node."""
        raise _undefined(self, "c_support_code_apply")

    def c_init_code_apply(self, node: Any, name: str) -> str:
        """Return module-init code specialised for one node."""
        raise _undefined(self, "c_init_code_apply")

    def c_code_cache_version_apply(self, node: Any) -> tuple[Any, ...]:
        """Return the version of the C code generated for ``node``."""
        return self.c_code_cache_version()
