"""The device value standing for what a shared input's storage cell holds.

Shared variables live on the device between calls of a ``jax``-linker function: its
:class:`DeviceMirror` keeps the JAX array (or key) for the value the cell holds, passes
it to the jitted function as long as the cell holds that same value, and copies a new
value (one ``set_value`` stored) to the device at the next call. An update's result is
kept on the device for the next call while the cell gets its NumPy form.

Calls of one function may run in several threads: a mirror keeps what it knows as one
tuple, replaced whole, so that a call never pairs one value's host form with another's
device value (two calls meeting a new value may both copy it; either copy is right).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from opweave.graph.basic import Variable
from opweave.scalar.type import ScalarType
from opweave.sparse.type import SparseTensorType

__all__ = ["DeviceMirror", "to_host"]


def to_host(value: Any, var: Variable) -> Any:
    """``value`` as a NumPy array of ``var``'s dtype that the caller owns (a NumPy scalar
    for a :class:`~opweave.scalar.type.ScalarType`)."""
    dtype = getattr(var.type, "dtype", None)
    out = np.array(value, dtype=dtype, copy=True)
    return out[()] if isinstance(var.type, ScalarType) else out


class DeviceMirror:
    """The device value standing for what one shared input's storage cell holds.

    Parameters
    ----------
    device
        The JAX device (``None``: JAX's default one).
    is_rng
        Whether the input is a random generator (its device value is a JAX key).

    Attributes
    ----------
    host
        The cell value the device value stands for (compared by identity), or ``None``.
    value
        The device value.
    stamp
        For a generator, its key when it was taken (a generator advanced in place by
        another function no longer matches).
    """

    __slots__ = ("_state", "device", "is_rng")

    def __init__(self, device: Any, is_rng: bool) -> None:
        self.device = device
        self.is_rng = is_rng
        self._state: tuple[Any, Any, tuple[int, ...] | None] = (None, None, None)

    @property
    def host(self) -> Any:
        return self._state[0]

    @property
    def value(self) -> Any:
        return self._state[1]

    @property
    def stamp(self) -> tuple[int, ...] | None:
        return self._state[2]

    def get(self, cell: list[Any]) -> Any:
        """The device value of ``cell[0]``, copied to the device when it changed.

        A writable NumPy array is replaced in the cell by a read-only view of itself (no
        copy), so that ``set_value`` gives the cell a new array instead of writing into
        the one on the device already.
        """
        import jax

        from opweave_jax.lowerings.sparse_matrix import from_scipy, is_sparse_value
        from opweave_jax.values import key_data_of

        host = cell[0]
        known, value, stamp = self._state
        if host is known and value is not None and not value.is_deleted():
            if not self.is_rng or _stamp_of(host) == stamp:
                return value
        if self.is_rng:
            data = key_data_of(host)
            stamp = tuple(int(w) for w in data)
            value = jax.device_put(data, self.device)
        else:
            stamp = None
            if isinstance(host, np.ndarray) and host.flags.writeable:
                sealed = host.view()
                sealed.flags.writeable = False
                if cell[0] is host:  # not replaced meanwhile (set_value in another thread)
                    cell[0] = host = sealed
            if is_sparse_value(host):
                value = jax.device_put(from_scipy(host), self.device)
            else:
                value = jax.device_put(host, self.device)
        self._state = (host, value, stamp)
        return value

    def keep(self, value: Any, var: Variable, zero_copy: bool) -> Any:
        """Keep ``value`` (an update's result) and return its host form for the cell: a
        read-only NumPy array (on the CPU, with ``zero_copy``, a view of the device buffer),
        a NumPy scalar, or a ``numpy.random.Generator`` for a random generator."""
        from opweave_jax.lowerings.sparse_matrix import to_scipy
        from opweave_jax.values import generator_of

        stamp = None
        if self.is_rng:
            data = np.asarray(value)
            host: Any = generator_of(data)
            stamp = tuple(int(w) for w in data)
        elif isinstance(var.type, ScalarType):
            host = to_host(value, var)
        elif isinstance(var.type, SparseTensorType):
            # The SciPy matrix in the cell; the next call copies it to the device again
            # (exact: a padded result would change the jitted function's input shapes).
            host = to_scipy(value, var.type.format, var.type.dtype)
            value = None
        else:
            host = np.asarray(value) if zero_copy else np.array(value, copy=True)
            if host.flags.writeable:
                host.flags.writeable = False
        self._state = (host, value, stamp)
        return host


def _stamp_of(host: Any) -> tuple[int, ...]:
    from opweave_jax.values import key_data_of

    return tuple(int(w) for w in key_data_of(host))
