"""C interface of :class:`~opweave.scalar.type.ScalarType`: one C number."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.utils import MethodNotDefined
from opweave.scalar.type import DTYPE_SPECS, ScalarType
from opweave_c.impls.csource import render, snippet
from opweave_c.impls.tensor_type import C_DTYPES, simple_c_string

SCALAR_SUPPORT = snippet("scalar_type.c", "support")


def scalar_literal(type_: ScalarType, data: Any) -> str:
    """A C expression for the constant ``data`` of ``type_`` (complex numbers have none).

    Raises
    ------
    MethodNotDefined
        For complex dtypes.
    """
    kind = np.dtype(type_.dtype).kind
    if kind == "c":
        raise MethodNotDefined("ScalarType has no C literal for complex numbers")
    value = type_.filter(data, allow_downcast=True)
    c_type = DTYPE_SPECS[type_.dtype][0]
    if kind == "b":
        return "1" if value else "0"
    if kind == "f":
        f = float(value)
        if np.isnan(f):
            return f"(({c_type})NAN)"
        if np.isinf(f):
            return f"(({c_type})INFINITY)" if f > 0 else f"(({c_type})-INFINITY)"
        return f"(({c_type}){f!r})"
    i = int(value)
    if kind == "u":
        return f"(({c_type}){i}ULL)"
    if i == np.iinfo(np.int64).min:
        return f"(({c_type})(-9223372036854775807LL - 1))"
    return f"(({c_type}){i}LL)"


class ScalarCType:
    """The C side of a :class:`~opweave.scalar.type.ScalarType`: one C number."""

    def __init__(self, type_: ScalarType) -> None:
        self.type = type_
        self.element = DTYPE_SPECS[type_.dtype][0]
        self.typenum = "NPY_" + type_.dtype.upper()
        self.desc = simple_c_string(f"ScalarType({type_.dtype})")

    def c_declare(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        return render("scalar_type.c", "declare", element=self.element, name=name)

    def c_init(self, name: str, sub: dict[str, str]) -> str:
        return f"{name} = 0;"

    def c_extract(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        fail = sub["fail"]
        filt = sub.get("filter", "NULL")
        return render(
            "scalar_type.c",
            "extract",
            name=name,
            typenum=self.typenum,
            filt=filt,
            fail=fail,
            desc=self.desc,
        )

    def c_support_code(self, **kwargs: Any) -> list[str]:
        return [SCALAR_SUPPORT]

    def c_sync(self, name: str, sub: dict[str, str]) -> str:
        # PyArray_Scalar does not steal the descriptor: release it (it used to leak one
        # reference per call).
        return render("scalar_type.c", "sync", typenum=self.typenum, name=name, fail=sub["fail"])

    def c_cleanup(self, name: str, sub: dict[str, str]) -> str:
        return ""

    def c_element_type(self) -> str:
        return self.element

    def c_is_simple(self) -> bool:
        return True

    def c_literal(self, data: Any) -> str:
        return scalar_literal(self.type, data)

    def c_code_cache_version(self) -> tuple[int, ...]:
        return (2,)


def _scalar(type_: ScalarType) -> ScalarCType | None:
    return ScalarCType(type_) if type_.dtype in C_DTYPES else None


#: Type class -> ``factory(type_)`` giving the C interface or ``None``. Read-only.
C_TYPES = MappingProxyType({ScalarType: _scalar})
