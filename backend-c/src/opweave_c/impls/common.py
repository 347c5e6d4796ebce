"""What every C implementation here shares: the common C helpers and the Python helpers.

The C helpers (``impls/c/common.c``, section ``helpers``): ``opw_prefix_error``,
``opw_make_view``, ``opw_broadcast_error`` and ``opw_runtime_broadcast_error``; the shape
as text is ``opw_shape_str`` of ``csrc/tensor.h`` (the TensorType support code every
module holds). Support code is deduplicated by exact text, so every implementation lists
:data:`SHARED_SUPPORT` and a module holds one copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.link.capabilities import CAPABILITY_ATTRIBUTE, FALLBACK
from opweave.tensor.type import TensorType
from opweave_c.impls.csource import snippet
from opweave_c.impls.tensor_type import C_DTYPES

__all__ = [
    "SHARED_SUPPORT",
    "SnippetImpl",
    "axes_mask",
    "c_string",
    "ctype",
    "dtype_kind",
    "int_value",
    "py_int",
    "python_only",
    "raw_value",
    "tensor_dtype",
    "typenum",
]

#: C helpers shared by the implementations (identical text: one copy per module).
SHARED_SUPPORT = snippet("common.c", "helpers")


def python_only(op: Any, node: Apply) -> None:
    """The table entry of an Op class without C code: ``cvm`` runs its nodes with the
    Python backend's implementation and ``c`` refuses them; the capability matrix reports
    the class as a fallback (it declares so)."""
    return None


setattr(python_only, CAPABILITY_ATTRIBUTE, FALLBACK)


def c_string(text: str) -> str:
    """``text`` as a C string literal (UTF-8; quotes, backslashes, controls escaped).

    Parameters
    ----------
    text
        Any text (an Op's ``str``, a Type's ``repr``).

    Returns
    -------
    str
        The literal, quotes included.
    """
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= byte < 127 and ch != "?":  # "?" could start a trigraph
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def typenum(dtype: str) -> str:
    """The NumPy type number constant of ``dtype`` (``NPY_FLOAT64``).

    Parameters
    ----------
    dtype
        A dtype name with C code.

    Returns
    -------
    str
        The C constant.
    """
    return "NPY_" + dtype.upper()


def ctype(dtype: str) -> str:
    """The NumPy C type of ``dtype`` (``npy_float64``).

    Parameters
    ----------
    dtype
        A dtype name with C code.

    Returns
    -------
    str
        The C type.
    """
    return f"npy_{dtype}"


def dtype_kind(dtype: str) -> str:
    """NumPy's kind character of ``dtype``: ``"b"``, ``"i"``, ``"u"`` or ``"f"``.

    Parameters
    ----------
    dtype
        A dtype name.

    Returns
    -------
    str
        The kind.
    """
    return np.dtype(dtype).kind


def axes_mask(ndim: int, axes: tuple[int, ...]) -> str:
    """The initializer of a C ``int[ndim]`` holding 1 for each axis in ``axes``, else 0.

    Parameters
    ----------
    ndim
        The rank (a 0-d value gives ``"0"``: C arrays cannot be empty).
    axes
        The marked axes.

    Returns
    -------
    str
        ``"1, 0, 1"`` and so on.
    """
    return ", ".join("1" if i in axes else "0" for i in range(ndim)) if ndim else "0"


def tensor_dtype(var: Any) -> str | None:
    """The dtype of a TensorType variable with C code, else ``None``.

    Parameters
    ----------
    var
        A graph variable.

    Returns
    -------
    str or None
        The dtype.
    """
    t = var.type
    if isinstance(t, TensorType) and t.dtype in C_DTYPES:
        return t.dtype
    return None


def raw_value(name: str) -> str:
    """C expression: the single element of the 0-d array ``name``, as its C type.

    Parameters
    ----------
    name
        The C name of the array (its element type is ``dtype_<name>``).

    Returns
    -------
    str
        The expression.
    """
    return f"(*(dtype_{name}*)PyArray_DATA({name}))"


def int_value(name: str, dtype: str) -> str:
    """C expression: the value of the 0-d integer array ``name`` as an ``npy_int64``.

    ``uint64`` values above the ``int64`` range saturate (slicing clamps them anyway).

    Parameters
    ----------
    name
        The C name of the array.
    dtype
        Its dtype.

    Returns
    -------
    str
        The expression.
    """
    raw = raw_value(name)
    if dtype == "uint64":
        return f"({raw} > (npy_uint64)NPY_MAX_INT64 ? NPY_MAX_INT64 : (npy_int64){raw})"
    return f"((npy_int64){raw})"


def py_int(name: str, dtype: str) -> str:
    """C expression: a new Python int holding the 0-d integer array ``name``'s value.

    Parameters
    ----------
    name
        The C name of the array.
    dtype
        Its dtype.

    Returns
    -------
    str
        The expression.
    """
    raw = raw_value(name)
    if dtype.startswith("uint") or dtype == "bool":
        return f"PyLong_FromUnsignedLongLong((unsigned long long){raw})"
    return f"PyLong_FromLongLong((long long){raw})"


class SnippetImpl:
    """Base of the C implementations of single Ops: shared support code and a version.

    Subclasses set ``version`` and write :meth:`c_code`.
    """

    #: (2,): the shared helpers were renamed and unified (``opw_shape_str``,
    #: ``opw_broadcast_error``).
    version: tuple[int, ...] = (2,)

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers.

        Parameters
        ----------
        **kwargs
            Unused (the contract may pass ``c_compiler``).

        Returns
        -------
        list of str
            The support snippets.
        """
        return [SHARED_SUPPORT]

    def c_code_cache_version(self) -> tuple[int, ...]:
        """Bumped whenever the generated code changes.

        Returns
        -------
        tuple of int
            The version.
        """
        return self.version

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """The node's C code (subclasses write it).

        Parameters
        ----------
        node
            The node.
        name
            Its name in the generated code.
        inputs, outputs
            The C names of its variables.
        sub
            ``fail``, ``id`` and the other substitutions of the contract.

        Returns
        -------
        str
            The code.
        """
        raise NotImplementedError
