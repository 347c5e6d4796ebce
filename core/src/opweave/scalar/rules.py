"""Output type rules: how a scalar Op derives its output Types from its input Types.

A rule is a callable ``rule(*input_types) -> tuple of output ScalarTypes`` given to
:class:`~opweave.scalar.basic.ScalarOp` as ``output_types_preference``. Two Ops of
the same class are equal when their rules are equal, so rules are module-level
functions or small immutable objects with value equality (:class:`TransferType`,
:class:`SpecificOut`). A rule raises ``TypeError`` for inputs it does not accept.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.scalar.type import (
    ScalarType,
    bool_,
    complex64,
    complex128,
    complex_types,
    discrete_types,
    float32,
    float64,
    float_types,
    get_scalar_type,
    int8,
    int64,
    integer_types,
    upcast,
)

Types = tuple[ScalarType, ...]


def _check_scalar_types(types: tuple[Any, ...]) -> None:
    for t in types:
        if not isinstance(t, ScalarType):
            raise TypeError(f"expected ScalarType inputs, got {t!r}")


def _no_complex(types: tuple[ScalarType, ...], what: str) -> None:
    for t in types:
        if t in complex_types:
            raise TypeError(f"{what} does not accept complex inputs (got {t})")


def upcast_out(*types: ScalarType) -> Types:
    """One output of the inputs' promoted dtype (:func:`~opweave.scalar.type.upcast`)."""
    _check_scalar_types(types)
    return (get_scalar_type(upcast(*types)),)


def upcast_out_nobool(*types: ScalarType) -> Types:
    """Like :func:`upcast_out`, but a ``bool`` result is an error."""
    (out,) = upcast_out(*types)
    if out == bool_:
        raise TypeError("this operation does not accept only-bool inputs")
    return (out,)


def upcast_out_min8(*types: ScalarType) -> Types:
    """Like :func:`upcast_out`, but a ``bool`` result becomes ``int8``."""
    (out,) = upcast_out(*types)
    return (int8,) if out == bool_ else (out,)


def upcast_out_no_complex(*types: ScalarType) -> Types:
    """Like :func:`upcast_out`, but complex inputs are an error."""
    _check_scalar_types(types)
    _no_complex(types, "this operation")
    return upcast_out(*types)


def upcast_out_no_complex_min8(*types: ScalarType) -> Types:
    """Like :func:`upcast_out_no_complex`, but a ``bool`` result becomes ``int8``.

    NumPy's rule for floor division and remainder: ``bool // bool`` and ``bool % bool``
    have no boolean loop and are computed (and returned) in ``int8``.
    """
    (out,) = upcast_out_no_complex(*types)
    return (int8,) if out == bool_ else (out,)


#: How :func:`upgrade_to_float` maps discrete dtypes (as PyTensor does).
_TO_FLOAT: MappingProxyType[str, str] = MappingProxyType(
    {
        "bool": "float32",
        "int8": "float32",
        "int16": "float32",
        "uint8": "float32",
        "uint16": "float32",
        "int32": "float64",
        "uint32": "float64",
        "int64": "float64",
        "uint64": "float64",
    }
)


def float_dtype_for(dtype: str) -> str:
    """Return the float dtype :func:`upgrade_to_float` uses for a value of ``dtype``."""
    return _TO_FLOAT.get(dtype, dtype)


def upgrade_to_float(*types: ScalarType) -> Types:
    """One float (or complex) output: discrete inputs count as floats wide enough for them.

    ``bool``, 8- and 16-bit integers become ``float32``; 32- and 64-bit integers
    ``float64``; then the dtypes are promoted.
    """
    _check_scalar_types(types)
    return (get_scalar_type(upcast(*[float_dtype_for(t.dtype) for t in types])),)


def upgrade_to_float_no_complex(*types: ScalarType) -> Types:
    """Like :func:`upgrade_to_float`, but complex inputs are an error."""
    _check_scalar_types(types)
    _no_complex(types, "this operation")
    return upgrade_to_float(*types)


def upgrade_to_float64(*types: ScalarType) -> Types:
    """Always one ``float64`` output."""
    _check_scalar_types(types)
    return (float64,)


def same_out(type: ScalarType) -> Types:
    """One output of the input's Type."""
    _check_scalar_types((type,))
    return (type,)


def same_out_nobool(type: ScalarType) -> Types:
    """Like :func:`same_out`, but a ``bool`` input is an error."""
    _check_scalar_types((type,))
    if type == bool_:
        raise TypeError("this operation does not accept bool inputs")
    return (type,)


def same_out_nocomplex(type: ScalarType) -> Types:
    """Like :func:`same_out`, but a complex input is an error."""
    _check_scalar_types((type,))
    _no_complex((type,), "this operation")
    return (type,)


def same_out_float_only(type: ScalarType) -> Types:
    """Like :func:`same_out`, but only float inputs are accepted."""
    _check_scalar_types((type,))
    if type not in float_types:
        raise TypeError(f"this operation only accepts float inputs (got {type})")
    return (type,)


def same_out_min8(type: ScalarType) -> Types:
    """Like :func:`same_out`, but a ``bool`` input gives an ``int8`` output."""
    _check_scalar_types((type,))
    return (int8,) if type == bool_ else (type,)


def sign_out(type: ScalarType) -> Types:
    """The input's Type; ``bool`` and complex inputs are errors."""
    _check_scalar_types((type,))
    if type == bool_:
        raise TypeError("sign does not accept bool inputs")
    _no_complex((type,), "sign")
    return (type,)


def real_out(type: ScalarType) -> Types:
    """The input's Type, with complex numbers mapped to their real part's float type."""
    _check_scalar_types((type,))
    if type == complex64:
        return (float32,)
    if type == complex128:
        return (float64,)
    return (type,)


def int_out(*types: ScalarType) -> Types:
    """Always one ``int64`` output."""
    return (int64,)


def float_out(*types: ScalarType) -> Types:
    """Always one ``float64`` output."""
    return (float64,)


def bool_out(*types: ScalarType) -> Types:
    """Always one ``bool`` output."""
    _check_scalar_types(types)
    return (bool_,)


def complex_out(*types: ScalarType) -> Types:
    """One complex output wide enough for the (real) inputs."""
    _check_scalar_types(types)
    _no_complex(types, "complex")
    up = upcast(*types)
    return (
        (complex128,) if up in ("float64", "int64", "uint64", "int32", "uint32") else (complex64,)
    )


def bitwise_out(*types: ScalarType) -> Types:
    """``bool`` if every input is ``bool``, else the promoted integer type.

    Raises ``TypeError`` for float or complex inputs, or for a mix of ``bool``
    and integers that NumPy would not promote to an integer.
    """
    _check_scalar_types(types)
    if all(t == bool_ for t in types):
        return (bool_,)
    for t in types:
        if t not in discrete_types:
            raise TypeError(f"bitwise operations need bool or integer inputs, got {t}")
    (out,) = upcast_out(*types)
    if out not in integer_types:
        raise TypeError(f"bitwise operation on {', '.join(map(str, types))} gives {out}")
    return (out,)


class TransferType:
    """A rule that gives output ``k`` the Type of input ``transfer[k]``.

    An entry may also be ``None`` (the inputs' promoted Type) or a ScalarType used as is.

    Parameters
    ----------
    *transfer
        One entry per output.
    """

    def __init__(self, *transfer: int | ScalarType | None) -> None:
        for t in transfer:
            if not (t is None or isinstance(t, int | ScalarType)):
                raise TypeError(f"transfer_type entries are ints, ScalarTypes or None, got {t!r}")
        self.transfer = tuple(transfer)

    def __call__(self, *types: ScalarType) -> Types:
        _check_scalar_types(types)
        out: list[ScalarType] = []
        for t in self.transfer:
            if t is None:
                out.extend(upcast_out(*types))
            elif isinstance(t, ScalarType):
                out.append(t)
            else:
                out.append(types[t])
        return tuple(out)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.transfer == other.transfer

    def __hash__(self) -> int:
        return hash((type(self), self.transfer))

    def __repr__(self) -> str:
        return f"transfer_type{self.transfer}"


def transfer_type(*transfer: int | ScalarType | None) -> TransferType:
    """Return the rule :class:`TransferType` ``(*transfer)``."""
    return TransferType(*transfer)


class SpecificOut:
    """A rule that always gives the same output Types.

    Parameters
    ----------
    *spec
        The output ScalarTypes.
    """

    def __init__(self, *spec: ScalarType) -> None:
        _check_scalar_types(spec)
        self.spec = tuple(spec)

    def __call__(self, *types: ScalarType) -> Types:
        return self.spec

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash((type(self), self.spec))

    def __repr__(self) -> str:
        return f"specific_out{self.spec}"


def specific_out(*spec: ScalarType) -> SpecificOut:
    """Return the rule :class:`SpecificOut` ``(*spec)``."""
    return SpecificOut(*spec)
