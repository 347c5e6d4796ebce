"""C interface of :class:`~opweave.graph.type.Generic`: a ``PyObject*``."""

from __future__ import annotations

from types import MappingProxyType

from opweave.graph.type import Generic


class GenericCType:
    """The C side of :class:`~opweave.graph.type.Generic`: a ``PyObject*``."""

    def c_declare(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        return f"PyObject* {name};"

    def c_init(self, name: str, sub: dict[str, str]) -> str:
        return f"{name} = NULL;"

    def c_extract(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        return f"{name} = py_{name};\nPy_XINCREF({name});"

    def c_sync(self, name: str, sub: dict[str, str]) -> str:
        return f"""
if (!{name}) {{ {name} = Py_None; Py_INCREF(Py_None); }}
if ({name} != py_{name}) {{
    Py_XDECREF(py_{name});
    py_{name} = {name};
    Py_INCREF(py_{name});
}}"""

    def c_cleanup(self, name: str, sub: dict[str, str]) -> str:
        return f"Py_XDECREF({name});\n{name} = NULL;"

    def c_code_cache_version(self) -> tuple[int, ...]:
        return (1,)


def _generic(type_: Generic) -> GenericCType:
    return GenericCType()


#: Type class -> ``factory(type_)`` giving the C interface or ``None``. Read-only.
C_TYPES = MappingProxyType({Generic: _generic})
