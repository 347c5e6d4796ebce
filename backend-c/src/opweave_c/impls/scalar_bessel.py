"""C code of the scalar special functions ``jv``, ``kve`` (:mod:`opweave.scalar.bessel`), ``hyp2f1`` and ``betaincinv``/``owens_t`` (:mod:`opweave.scalar.probability`).

Filled in by its author; the table is merged into :mod:`opweave_c.impls.scalar_basic`.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

__all__ = ["EXPRESSIONS", "SUPPORT"]

#: The helper functions (plain C99 on ``<math.h>``).
SUPPORT = ""

#: Scalar Op class -> builder of its C expression (``None``: no C code for these dtypes).
EXPRESSIONS: MappingProxyType[type, Callable[[Any], "str | None"]] = MappingProxyType({})
