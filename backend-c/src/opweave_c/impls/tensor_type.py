"""C interface of :class:`~opweave.tensor.type.TensorType` (NumPy arrays), and the dtypes with C."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from opweave.graph.utils import MethodNotDefined
from opweave.tensor.type import TensorType

TENSOR_SUPPORT = (Path(__file__).parent.parent / "csrc" / "tensor.h").read_text()

#: dtypes with C code. float16 and complex values run in Python (cvm falls back).
C_DTYPES = frozenset(
    [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
    ]
)


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class TensorCType:
    """The C side of a :class:`~opweave.tensor.type.TensorType`: a ``PyArrayObject*``.

    Declares ``PyArrayObject* <name>`` and ``typedef <element> dtype_<name>``. An input is
    checked for dtype, rank and static shape (``check_input``); a value that is not
    already exact goes through the Type's Python ``filter`` when the linker supplies it
    (``%(filter)s``), so the C path accepts exactly what the Python path accepts. Only a
    plain ndarray is exact: an instance of a subclass (``numpy.matrix``, a masked array)
    goes through the filter, which makes it a plain ndarray or refuses it.
    """

    def __init__(self, type_: TensorType) -> None:
        self.type = type_
        _, self.element, self.typenum = type_.dtype_specs()
        self.desc = _c_string(repr(type_))

    def c_declare(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        return f"PyArrayObject* {name};\ntypedef {self.element} dtype_{name};"

    def c_init(self, name: str, sub: dict[str, str]) -> str:
        return f"{name} = NULL;"

    def c_extract(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        fail = sub["fail"]
        lines = [f"{name} = NULL;"]
        if check_input:
            filt = sub.get("filter", "NULL")
            lines.append(
                f"if (opw_tensor_check(&py_{name}, {filt}, {self.typenum}, {self.type.ndim}, "
                f"{self.desc}) < 0) {fail}"
            )
            for i, n in enumerate(self.type.shape):
                if n is not None:
                    lines.append(
                        f"if (opw_check_dim((PyArrayObject*)py_{name}, {i}, {n}, {self.desc}) "
                        f"< 0) {fail}"
                    )
        lines.append(f"{name} = (PyArrayObject*)py_{name};\nPy_INCREF({name});")
        return "\n".join(lines)

    def c_extract_out(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        # An output cell holds None or what a previous run synced; reuse it when it fits.
        return (
            f"{name} = NULL;\nif (py_{name} != Py_None && opw_tensor_exact(py_{name}, "
            f"{self.typenum}, {self.type.ndim})) {{\n"
            f"    {name} = (PyArrayObject*)py_{name};\n    Py_INCREF({name});\n}}"
        )

    def c_extract_out_unshared(self, name: str, sub: dict[str, str]) -> str:
        """Take the previous value of a non-recycled output only when no one else holds it
        (``py_<name>`` and the cell are its only references): the caller dropped it, so
        writing into its memory cannot be observed and saves a fresh allocation."""
        return (
            f"{name} = NULL;\nif (py_{name} != Py_None && opw_tensor_unshared(py_{name}, 2, "
            f"{self.typenum}, {self.type.ndim})) {{\n"
            f"    {name} = (PyArrayObject*)py_{name};\n    Py_INCREF({name});\n}}"
        )

    def c_sync(self, name: str, sub: dict[str, str]) -> str:
        return f"""
if (!{name}) {{
    Py_XDECREF(py_{name});
    Py_INCREF(Py_None);
    py_{name} = Py_None;
}} else if ((PyObject*){name} != py_{name}) {{
    if (PyArray_TYPE({name}) != {self.typenum} || PyArray_NDIM({name}) != {self.type.ndim}) {{
        PyErr_Format(PyExc_TypeError, "generated C produced a %d-dimensional array of type "
                     "number %d for %s", PyArray_NDIM({name}), PyArray_TYPE({name}), {self.desc});
        {sub["fail"]}
    }}
    Py_XDECREF(py_{name});
    py_{name} = (PyObject*){name};
    Py_INCREF(py_{name});
}}"""

    def c_cleanup(self, name: str, sub: dict[str, str]) -> str:
        return f"Py_XDECREF({name});\n{name} = NULL;"

    def c_element_type(self) -> str:
        return self.element

    def c_is_simple(self) -> bool:
        return False

    def c_literal(self, data: Any) -> str:
        raise MethodNotDefined("tensor constants are passed in storage cells")

    def c_support_code(self, **kwargs: Any) -> list[str]:
        return [TENSOR_SUPPORT]

    def c_code_cache_version(self) -> tuple[int, ...]:
        return (4,)  # (4,): csrc/tensor.h's opw_shape_str takes a separator


def _tensor(type_: TensorType) -> TensorCType | None:
    return TensorCType(type_) if type_.dtype in C_DTYPES else None


#: Type class -> ``factory(type_)`` giving the C interface or ``None``. Read-only.
C_TYPES = MappingProxyType({TensorType: _tensor})
