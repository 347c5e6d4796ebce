"""The seeds' ``Double`` type: Python floats (seed 000, final version)."""

from __future__ import annotations

from typing import Any

from opweave import graph as gof


class Double(gof.Type):
    """Python ``float`` values.

    ``filter`` casts ints and other numbers to float only when no precision is
    lost, unless ``allow_downcast`` is true; with ``strict`` only floats pass.
    """

    def filter(self, x: Any, strict: bool = False, allow_downcast: bool | None = None) -> float:
        """Return ``x`` as a float (see the class docstring for the rules)."""
        if strict:
            if isinstance(x, float):
                return x
            raise TypeError("Expected a float!")
        if allow_downcast:
            return float(x)
        # Covers both the False and None cases.
        x_float = float(x)
        if x_float == x:
            return x_float
        raise TypeError(
            f"The double type cannot accurately represent value {x} (of type {type(x)}): you "
            "must explicitly allow downcasting if you want to do this."
        )

    def values_eq_approx(self, x: float, y: float, tolerance: float = 1e-4) -> bool:
        """Relative comparison with ``tolerance``."""
        if x == y:
            return True
        return abs(x - y) / (abs(x) + abs(y)) < tolerance

    def __str__(self) -> str:
        return "double"


#: The one advertised instance (seed 000 hides the class behind it).
double = Double()
