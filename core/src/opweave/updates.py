"""``OrderedUpdates``: a mapping from shared variables to their new values.

The name and contract are PyTensor's (``pytensor.updates``): a ``dict`` whose keys must be
:class:`~opweave.compile.sharedvalue.SharedVariable` objects, kept in insertion order,
whose :meth:`~OrderedUpdates.update` refuses to give a key a second, different value, and
where ``a + b`` is the union of two update mappings. ``opweave.function(..., updates=u)``
accepts it like any mapping.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from opweave.compile.sharedvalue import SharedVariable

__all__ = ["OrderedUpdates"]


def _check_key(key: Any) -> None:
    if not isinstance(key, SharedVariable):
        raise TypeError(
            f"OrderedUpdates keys must be SharedVariable objects, got {type(key).__name__} {key!r}"
        )


class OrderedUpdates(dict[Any, Any]):
    """A ``dict`` from :class:`SharedVariable` to its update expression.

    Parameters
    ----------
    *args, **kwargs
        As for ``dict``.

    Raises
    ------
    TypeError
        When a key is not a :class:`SharedVariable`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key in self:
            _check_key(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        _check_key(key)
        super().__setitem__(key, value)

    def update(  # type: ignore[override]
        self, other: Mapping[Any, Any] | Iterable[tuple[Any, Any]] | None = None
    ) -> None:
        """Add the pairs of ``other``.

        Raises
        ------
        KeyError
            When a key already present is given a different value (``"Collision"``).
        TypeError
            When a key is not a :class:`SharedVariable`.
        """
        if other is None:
            return
        for key, value in dict(other).items():
            if key in self:
                if self[key] is value:
                    continue
                raise KeyError("Collision", key)
            self[key] = value

    def __add__(self, other: Mapping[Any, Any]) -> OrderedUpdates:
        union = OrderedUpdates()
        union.update(self)
        union.update(other)
        return union

    def __radd__(self, other: Mapping[Any, Any]) -> OrderedUpdates:
        union = OrderedUpdates()
        union.update(other)
        union.update(self)
        return union
