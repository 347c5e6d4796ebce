"""Builders named by module and function, imported on their first call.

The dask linker's table (:mod:`opweave_dask.table`) must be importable without Dask: the
plugin publishes it in ``opweave_backend_info`` and every opweave user loads the plugin.
Its entries are therefore :class:`LazyBuilder` references to the modules that use Dask
(:mod:`opweave_dask.elemwise`, :mod:`opweave_dask.reductions`, :mod:`opweave_dask.arrays`),
which are imported the first time a node of their Ops is linked.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Apply

__all__ = ["LazyBuilder"]


class LazyBuilder:
    """A builder ``module.function`` imported on its first call.

    Parameters
    ----------
    module
        The module's full name (``"opweave_dask.arrays"``).
    function
        The builder's name in that module (``"build_dot"``).

    Raises
    ------
    TypeError
        When ``module`` or ``function`` is not a non-empty string.
    """

    __slots__ = ("_resolved", "function", "module")

    def __init__(self, module: str, function: str) -> None:
        for label, value in (("module", module), ("function", function)):
            if not isinstance(value, str) or not value:
                raise TypeError(f"LazyBuilder: {label} must be a non-empty str, got {value!r}")
        self.module = module
        self.function = function
        self._resolved: Callable[[Apply, str], Any] | None = None

    def resolve(self) -> Callable[[Apply, str], Any]:
        """The builder itself (its module imported on the first call).

        Raises
        ------
        ImportError
            When the module cannot be imported (Dask not installed).
        AttributeError
            When the module has no such function.
        """
        if self._resolved is None:
            found = getattr(importlib.import_module(self.module), self.function, None)
            if not callable(found):
                raise AttributeError(
                    f"{self.module} has no builder {self.function!r} (dask linker table)"
                )
            self._resolved = found
        return self._resolved

    def __call__(self, node: Apply, linker: str) -> Any:
        """Build ``node``'s runner (see :mod:`opweave_dask.table`)."""
        return self.resolve()(node, linker)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LazyBuilder):
            return NotImplemented
        return (self.module, self.function) == (other.module, other.function)

    def __hash__(self) -> int:
        return hash((LazyBuilder, self.module, self.function))

    def __repr__(self) -> str:
        return f"<LazyBuilder {self.module}.{self.function}>"
