"""C interface of :class:`~opweave.tensor.type.TensorType` (NumPy arrays), and the dtypes with C."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from opweave.graph.utils import MethodNotDefined
from opweave.tensor.type import TensorType
from opweave.xtensor.type import XTensorType
from opweave_c.impls.csource import render

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


def simple_c_string(text: str) -> str:
    """``text`` as a C string literal, escaping only quotes and backslashes.

    The Types' descriptions and DimShuffle's messages use it;
    :func:`opweave_c.impls.common.c_string` also escapes ``?`` and non-ASCII bytes, so
    switching them over would change the generated C.

    Parameters
    ----------
    text
        The text (a Type's ``repr``).

    Returns
    -------
    str
        The literal, quotes included.
    """
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
        self.desc = simple_c_string(repr(type_))

    def c_declare(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        return render("tensor_type.c", "declare", name=name, element=self.element)

    def c_init(self, name: str, sub: dict[str, str]) -> str:
        return f"{name} = NULL;"

    def c_extract(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        fail = sub["fail"]
        lines = [f"{name} = NULL;"]
        if check_input:
            filt = sub.get("filter", "NULL")
            lines.append(
                render(
                    "tensor_type.c",
                    "extract_check",
                    name=name,
                    filt=filt,
                    typenum=self.typenum,
                    ndim=self.type.ndim,
                    desc=self.desc,
                    fail=fail,
                )
            )
            for i, n in enumerate(self.type.shape):
                if n is not None:
                    lines.append(
                        render(
                            "tensor_type.c",
                            "extract_dim",
                            name=name,
                            i=i,
                            n=n,
                            desc=self.desc,
                            fail=fail,
                        )
                    )
        lines.append(render("tensor_type.c", "extract_take", name=name))
        return "\n".join(lines)

    def c_extract_out(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        # An output cell holds None or what a previous run synced; reuse it when it fits.
        return render(
            "tensor_type.c", "extract_out", name=name, typenum=self.typenum, ndim=self.type.ndim
        )

    def c_extract_out_unshared(self, name: str, sub: dict[str, str]) -> str:
        """Take the previous value of a non-recycled output only when no one else holds it
        (``py_<name>`` and the cell are its only references): the caller dropped it, so
        writing into its memory cannot be observed and saves a fresh allocation."""
        return render(
            "tensor_type.c",
            "extract_out_unshared",
            name=name,
            typenum=self.typenum,
            ndim=self.type.ndim,
        )

    def c_sync(self, name: str, sub: dict[str, str]) -> str:
        return render(
            "tensor_type.c",
            "sync",
            name=name,
            typenum=self.typenum,
            ndim=self.type.ndim,
            desc=self.desc,
            fail=sub["fail"],
        )

    def c_cleanup(self, name: str, sub: dict[str, str]) -> str:
        return render("tensor_type.c", "cleanup", name=name)

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


def _xtensor(type_: XTensorType) -> TensorCType | None:
    """A named-dimension tensor's value is an array with its axes in the order of its dims:
    its C side is the tensor's (its Python ``filter``, which the linker supplies, also
    takes an ``xarray.DataArray``)."""
    return _tensor(type_.tensor_type)


#: Type class -> ``factory(type_)`` giving the C interface or ``None``. Read-only.
C_TYPES = MappingProxyType({TensorType: _tensor, XTensorType: _xtensor})
