"""PyTensor's ``pytensor.graph.null_type``: the Type of undefined values.

:class:`NullType` is defined in :mod:`opweave.graph.type`; this module re-exports it with
PyTensor's shared instance :data:`null_type`.
"""

from __future__ import annotations

from opweave.graph.type import NullType, null_type

__all__ = ["NullType", "null_type"]
