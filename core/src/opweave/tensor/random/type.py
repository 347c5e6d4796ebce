"""The Type of random generators (``pytensor.tensor.random.type``).

A :class:`RandomGeneratorType` variable holds a ``numpy.random.Generator``; random
variables take one as their first input and return the advanced generator as their first
output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from opweave.graph.type import Type

__all__ = ["RandomGeneratorType", "RandomType", "random_generator_type"]


def _states_equal(a: Any, b: Any) -> bool:
    """Whether two bit-generator states (nested dicts of numbers and arrays) are equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_states_equal(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


class RandomType(Type):
    """Base class of the Types whose values are random number generators."""

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """Generators share state only when they are the same object."""
        return a is b


class RandomGeneratorType(RandomType):
    """The Type of ``numpy.random.Generator`` values.

    Every instance is equal to every other; use :data:`random_generator_type`.
    """

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``data`` if it is a ``numpy.random.Generator``.

        Raises
        ------
        TypeError
            For any other value (there is no conversion, strict or not).
        """
        if isinstance(data, np.random.Generator):
            return data
        raise TypeError(
            f"{self}: expected a numpy.random.Generator, got {type(data).__name__} {data!r:.60}"
        )

    def is_valid_value(self, a: Any) -> bool:
        """Whether ``a`` is a ``numpy.random.Generator``."""
        return isinstance(a, np.random.Generator)

    def values_eq(self, a: Any, b: Any) -> bool:
        """Whether two generators have the same bit generator and the same state."""
        if not (isinstance(a, np.random.Generator) and isinstance(b, np.random.Generator)):
            return False
        if type(a.bit_generator) is not type(b.bit_generator):
            return False
        return _states_equal(a.bit_generator.state, b.bit_generator.state)

    def values_eq_approx(self, a: Any, b: Any) -> bool:
        """Generators compare exactly (see :meth:`values_eq`)."""
        return self.values_eq(a, b)

    def __reduce__(self) -> tuple[Any, ...]:
        return (RandomGeneratorType, ())

    def __str__(self) -> str:
        return "RandomGeneratorType"


#: The :class:`RandomGeneratorType` instance.
random_generator_type = RandomGeneratorType()
