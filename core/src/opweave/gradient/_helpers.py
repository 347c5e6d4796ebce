"""Small helpers shared by the gradient modules.

The gradient machinery sits below the symbolic standard library (floor 4 of
:mod:`opweave._layers`: :mod:`opweave.scalar` and :mod:`opweave.tensor` use its helpers in
their Ops' ``grad``), so it builds scalar and tensor graphs through the variables it is given
(their ``zeros_like``/``ones_like``/``astype`` methods) and converts other objects with the
conversion the tensor library registers on :func:`opweave.graph.symbolic._as_symbolic`,
never by importing those libraries.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from opweave.configdefaults import config
from opweave.graph.basic import Variable
from opweave.graph.symbolic import _as_symbolic
from opweave.graph.type import Generic


def dtype_of(obj: Any) -> str | None:
    """The canonical NumPy dtype name of a Variable or Type, or ``None`` if it has none."""
    t = obj.type if isinstance(obj, Variable) else obj
    dtype = getattr(t, "dtype", None)
    if dtype is None:
        return None
    try:
        name: str = np.dtype(dtype).name
    except TypeError:
        return None
    return name


def is_discrete(dtype: str | None) -> bool:
    """True for boolean and integer dtypes."""
    return dtype is not None and np.dtype(dtype).kind in "biu"


def is_float(dtype: str | None) -> bool:
    """True for real floating-point dtypes."""
    return dtype is not None and np.dtype(dtype).kind == "f"


def is_continuous(dtype: str | None) -> bool:
    """True for floating-point and complex dtypes."""
    return dtype is not None and np.dtype(dtype).kind in "fc"


def floatx() -> str:
    """``config.floatX`` (``"float64"`` if the configuration cannot tell)."""
    try:
        return str(np.dtype(str(config.floatX)).name)
    except Exception:  # pragma: no cover - config always has floatX in practice
        return "float64"


def ndim_of(obj: Any) -> int | None:
    """The ``ndim`` of a Variable's Type (or of a Type), or ``None`` if it has none."""
    t = obj.type if isinstance(obj, Variable) else obj
    ndim = getattr(t, "ndim", None)
    return ndim if isinstance(ndim, int) else None


def filled_like(var: Variable, value: int, dtype: str | None = None) -> Variable:
    """A variable shaped like ``var`` holding ``value`` (0 or 1) everywhere.

    Parameters
    ----------
    var
        The model variable.
    value
        ``0`` (``zeros_like``) or ``1`` (``ones_like``).
    dtype
        The result's dtype, for Types that have one (default: ``var``'s).

    The rule, by ``var``'s Type:

    - a Type defining ``zeros_like(var)`` / ``ones_like(var)`` (such as a sparse Type):
      that method;
    - a Type with a ``dtype`` whose variables have ``zeros_like(dtype=...)`` /
      ``ones_like(dtype=...)`` methods (tensor and scalar variables: ``TensorVariable``'s
      call ``opweave.tensor.basic.zeros_like``, ``ScalarVariable``'s
      ``opweave.scalar.basic.zeros_like``): that method;
    - a scalar-valued Type whose ``filter`` accepts the Python float ``0.0`` / ``1.0``
      (such as a ``Double`` Type): a :class:`~opweave.graph.basic.Constant` of that value.

    Raises
    ------
    TypeError
        For any other Type (the message names it and the hook to define).
    """
    name = "zeros_like" if value == 0 else "ones_like"
    t = var.type
    hook = getattr(t, name, None)
    if callable(hook):
        result = hook(var)
        if not isinstance(result, Variable):
            raise TypeError(
                f"{type(t).__name__}.{name}({var}) must return a Variable, "
                f"got {type(result).__name__}"
            )
        return result
    method = getattr(var, name, None)
    if callable(method) and getattr(t, "dtype", None) is not None:
        filled: Variable = method(dtype=dtype)
        return filled
    if not isinstance(t, Generic) and getattr(t, "dtype", None) is None:
        try:
            data = t.filter(float(value))
        except Exception:
            data = None
        if data is not None and np.ndim(data) == 0:
            return t.make_constant(data)
    raise TypeError(
        f"cannot build {name}({var}): its Type {t} ({type(t).__name__}) is neither a tensor nor "
        f"a scalar Type, defines no {name}(var) method and does not hold Python floats; define "
        f"{type(t).__name__}.{name}(var) returning a Variable to take gradients through it"
    )


def float_filled_like(var: Variable, value: int) -> Variable:
    """Like :func:`filled_like`, with a float dtype: ``var``'s if continuous, else floatX.

    Gradients never have an integer dtype, even for integer variables.
    """
    dtype = dtype_of(var)
    if dtype is not None and not is_continuous(dtype):
        dtype = floatx()
    return filled_like(var, value, dtype)


def cast_to(var: Variable, dtype: str | None) -> Variable:
    """``var`` cast to ``dtype`` (``var`` itself if it already has it or has no dtype)."""
    current = dtype_of(var)
    if current is None or dtype is None or current == dtype:
        return var
    astype = getattr(var, "astype", None)
    if callable(astype):
        return astype(dtype)  # type: ignore[no-any-return]
    return var


def as_variable(x: Any, what: str) -> Variable:
    """``x`` if it is a Variable, else ``opweave.tensor.as_tensor_variable(x)``.

    The conversion is the one the tensor library registers for any object on
    :func:`opweave.graph.symbolic._as_symbolic` (``import opweave`` loads it); without the
    tensor library, converting raises ``TypeError``.
    """
    if isinstance(x, Variable):
        return x
    return _as_symbolic.dispatch(object)(x)


def as_list(x: Any) -> tuple[list[Any], bool, bool]:
    """``(items, was_list, was_tuple)`` for a single item, a list or a tuple."""
    if isinstance(x, list):
        return list(x), True, False
    if isinstance(x, tuple):
        return list(x), False, True
    return [x], False, False


def format_as(use_list: bool, use_tuple: bool, outputs: Sequence[Any]) -> Any:
    """Return ``outputs`` as a list, a tuple, or (neither) its single element."""
    if use_list:
        return list(outputs)
    if use_tuple:
        return tuple(outputs)
    if len(outputs) != 1:
        raise ValueError(f"expected a single result, got {len(outputs)}")
    return outputs[0]


def check_option(name: str, value: Any, allowed: Sequence[str]) -> str:
    """Return the lower-cased option ``value``, or raise ``ValueError`` listing ``allowed``."""
    lowered = value.lower() if isinstance(value, str) else value
    if lowered not in allowed:
        raise ValueError(
            f"invalid value for {name}: {value!r}; expected one of "
            + ", ".join(repr(a) for a in allowed)
        )
    return lowered


def sum_terms(var: Variable, terms: list[Variable]) -> Variable:
    """Add up the gradient terms of ``var``.

    With ``terms[0].type.grad_add(terms)`` when the gradient's Type defines it (a
    Type-level hook for Types whose variables have no graph-building ``+``), else
    with ``functools.reduce(operator.add, terms)``.

    Raises
    ------
    TypeError
        If neither works, naming the Type and the hook to define.
    """
    if len(terms) == 1:
        return terms[0]
    gtype = terms[0].type
    hook: Callable[[list[Variable]], Any] | None = getattr(gtype, "grad_add", None)
    if callable(hook):
        total = hook(list(terms))
        how = f"{type(gtype).__name__}.grad_add"
    else:
        how = "+"
        try:
            total = functools.reduce(operator.add, terms)
        except TypeError as exc:
            raise TypeError(
                f"cannot add up the {len(terms)} gradient terms of {var}: their Type {gtype} "
                f"({type(gtype).__name__}) defines no grad_add(terms) method and its variables "
                "do not support '+'; define grad_add on the Type (or use each variable once) "
                "to take gradients through variables with several uses"
            ) from exc
    if not isinstance(total, Variable):
        raise TypeError(
            f"adding up the gradient terms of {var} with {how} returned "
            f"{type(total).__name__}, not a Variable"
        )
    return total
