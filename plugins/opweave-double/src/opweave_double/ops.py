"""The tutorial's arithmetic Ops on ``double``, and the hidden-output ``Add``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from opweave import graph as gof
from opweave_double.type import double


class BinaryDoubleOp(gof.Op):
    """An Op applying ``fn`` to two doubles.

    Parameters
    ----------
    name
        Printed name (``add``, ``mul``...).
    fn
        The Python function of two floats.
    """

    __props__ = ("name", "fn")

    def __init__(self, name: str, fn: Callable[[float, float], float]) -> None:
        self.name = name
        self.fn = fn

    def make_node(self, x: Any, y: Any) -> gof.Apply:
        """Wrap Python numbers as constants; refuse anything that is not a double."""
        if isinstance(x, int | float):
            x = gof.Constant(double, x)
        if isinstance(y, int | float):
            y = gof.Constant(double, y)
        if not isinstance(x, gof.Variable) or not isinstance(y, gof.Variable):
            raise TypeError(f"{self.name} only works on doubles")
        if x.type != double or y.type != double:
            raise TypeError(f"{self.name} only works on doubles")
        return gof.Apply(self, [x, y], [double()])

    def perform(self, node: gof.Apply, inp: Sequence[float], out: list[list[Any]]) -> None:
        """``z = fn(x, y)``."""
        x, y = inp
        (z,) = out
        z[0] = self.fn(x, y)

    def grad(
        self, inputs: Sequence[gof.Variable], output_grads: Sequence[gof.Variable]
    ) -> list[Any]:
        """Gradients of the four arithmetic operations, built from the same Ops."""
        x, y = inputs
        (gz,) = output_grads
        if self.name == "add":
            return [gz, gz]
        if self.name == "sub":
            return [gz, mul(gz, -1.0)]
        if self.name == "mul":
            return [mul(gz, y), mul(gz, x)]
        if self.name == "div":
            return [div(gz, y), mul(gz, div(mul(x, -1.0), mul(y, y)))]
        raise NotImplementedError(f"no gradient for {self.name}")

    def __str__(self) -> str:
        return self.name

    def c_code(
        self,
        node: gof.Apply,
        name: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        sub: dict[str, str],
    ) -> str:
        """``z = x <op> y;`` on the C doubles of :class:`~opweave_double.type.Double`."""
        x, y = inputs
        (z,) = outputs
        return f"{z} = {x} {C_OPERATORS[self.name]} {y};"

    def c_code_cache_version(self) -> tuple[int, ...]:
        """Version of :meth:`c_code`."""
        return (1,)


#: The C operator of each arithmetic Op.
C_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


def _add(x: float, y: float) -> float:
    return x + y


def _sub(x: float, y: float) -> float:
    return x - y


def _mul(x: float, y: float) -> float:
    return x * y


def _div(x: float, y: float) -> float:
    return x / y


add = BinaryDoubleOp(name="add", fn=_add)
sub = BinaryDoubleOp(name="sub", fn=_sub)
mul = BinaryDoubleOp(name="mul", fn=_mul)
div = BinaryDoubleOp(name="div", fn=_div)


class DoubleVector(gof.Type):
    """One-dimensional float64 NumPy arrays (used by the hidden-buffer ``Add``)."""

    def filter(
        self, x: Any, strict: bool = False, allow_downcast: bool | None = None
    ) -> np.ndarray:
        """Accept a 1-d float64 array; cast lists and other arrays unless ``strict``."""
        if isinstance(x, np.ndarray) and x.dtype == np.float64 and x.ndim == 1:
            return x
        if strict:
            raise TypeError(f"Expected a 1-d float64 ndarray, got {type(x).__name__}")
        arr = np.asarray(x)
        if arr.ndim != 1:
            raise TypeError(f"Expected a 1-d array, got {arr.ndim} dimensions")
        if not allow_downcast and not np.can_cast(arr.dtype, np.float64, casting="safe"):
            raise TypeError(f"cannot safely cast {arr.dtype} to float64")
        return arr.astype(np.float64)

    def values_eq(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Equal shapes and equal elements (NaN differs from everything, as in NumPy)."""
        return a.shape == b.shape and bool(np.array_equal(a, b))

    def values_eq_approx(self, a: np.ndarray, b: np.ndarray) -> bool:
        """``numpy.allclose`` on equal shapes."""
        return a.shape == b.shape and bool(np.allclose(a, b))

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "double_vector"


double_vector = DoubleVector()


class HiddenBufferAdd(gof.Op):
    """The Op tutorial's ``Add`` with a hidden output: a growing private buffer.

    ``z`` is a view of the first ``x.size`` items of the hidden buffer ``stor``,
    which is reallocated only when an input grows past it.
    """

    __props__ = ()
    default_output = 0

    def make_node(self, x: gof.Variable, y: gof.Variable) -> gof.Apply:
        """Two inputs of the same Type; the result and the hidden buffer as outputs."""
        if not isinstance(x, gof.Variable) or not isinstance(y, gof.Variable):
            raise TypeError("HiddenBufferAdd expects two Variables")
        if x.type != y.type:
            raise TypeError(f"HiddenBufferAdd expects equal types, got {x.type} and {y.type}")
        return gof.Apply(self, [x, y], [x.type.make_variable(), x.type.make_variable()])

    def perform(
        self, node: gof.Apply, inputs: Sequence[np.ndarray], outputs: list[list[Any]]
    ) -> None:
        """Add into a view of the hidden buffer, growing it only when needed."""
        x, y = inputs
        z, stor = outputs
        if z[0] is None or stor[0] is None:
            stor[0] = np.ndarray(x.size * 2)
        elif x.size > stor[0].size:
            stor[0].resize(x.size * 2, refcheck=0)
        z[0] = stor[0][: x.size]
        np.add(x, y, z[0])


hidden_buffer_add = HiddenBufferAdd()
