"""Shared random generators (``pytensor.tensor.random.var``).

:func:`randomgen_constructor` makes the :class:`RandomGeneratorSharedVariable` that
holds a ``numpy.random.Generator`` between calls of compiled functions.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from opweave.compile.sharedvalue import SharedVariable
from opweave.tensor.random.type import random_generator_type

__all__ = ["RandomGeneratorSharedVariable", "randomgen_constructor"]


class RandomGeneratorSharedVariable(SharedVariable):
    """A shared variable whose value is a ``numpy.random.Generator``."""

    def __str__(self) -> str:
        return self.name or f"RNG({self.container!r})"


def randomgen_constructor(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
) -> RandomGeneratorSharedVariable:
    """Return a :class:`RandomGeneratorSharedVariable` holding ``value``.

    Parameters
    ----------
    value
        A ``numpy.random.Generator``.
    name
        Optional name.
    strict, allow_downcast
        How later values are filtered (a generator is always required).
    borrow
        Keep ``value`` itself instead of a deep copy (its state then advances with the
        variable's).

    Raises
    ------
    TypeError
        If ``value`` is not a ``numpy.random.Generator``.
    """
    if not isinstance(value, np.random.Generator):
        raise TypeError(
            "randomgen_constructor: expected a numpy.random.Generator, got "
            f"{type(value).__name__} {value!r:.60}"
        )
    if not borrow:
        value = copy.deepcopy(value)
    return RandomGeneratorSharedVariable(
        random_generator_type, value, strict=strict, allow_downcast=allow_downcast, name=name
    )
