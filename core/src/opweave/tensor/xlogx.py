"""``x * log(x)`` and ``x * log(y)``, 0 where ``x`` is 0: PyTensor's ``tensor.xlogx`` names.

Thin re-exports of :func:`opweave.tensor.special.xlogx` and
:func:`opweave.tensor.special.xlogy0` (elementwise Ops of the scalar Ops of
:mod:`opweave.scalar.math`).
"""

from opweave.tensor.special import xlogx, xlogy0

__all__ = ["xlogx", "xlogy0"]
