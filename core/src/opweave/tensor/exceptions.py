"""The exceptions of the tensor library, where PyTensor keeps them (``tensor.exceptions``).

* :class:`NotScalarConstantError`: a variable has no constant scalar value
  (:func:`~opweave.tensor.basic.get_underlying_scalar_constant_value` and
  :func:`~opweave.tensor.basic.get_scalar_constant_value`); re-exported by
  :mod:`opweave.tensor.variable`, whose constants raise it.
* :class:`EmptyConstantError`: the same, for a constant without any element; a subclass,
  so ``except NotScalarConstantError`` catches it.
* :class:`ShapeError`: a shape cannot be computed.
* :class:`AdvancedIndexingError`: basic indexing (``Subtensor``) was given an advanced
  index. opweave's indexing sends integer-array indices to the advanced Ops itself, so
  the class is there for code that catches it.
"""

from __future__ import annotations

__all__ = [
    "AdvancedIndexingError",
    "EmptyConstantError",
    "NotScalarConstantError",
    "ShapeError",
]


class NotScalarConstantError(Exception):
    """The variable is not (or cannot be shown to be) a constant scalar."""


class EmptyConstantError(NotScalarConstantError):
    """A constant has no element, so no scalar value (a :class:`NotScalarConstantError`)."""


class ShapeError(Exception):
    """A shape cannot be computed."""


class AdvancedIndexingError(TypeError):
    """Basic indexing was asked to do advanced (integer-array) indexing."""
