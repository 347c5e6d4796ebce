"""How untyped values get a dtype when they become constants (as PyTensor does).

A Python number has no dtype of its own, so every constant made from one (by
``opweave.scalar.constant``, ``opweave.tensor.constant``, or implicitly in ``x + 2``)
goes through :func:`convert`, whose choice depends on ``config.cast_policy``:

``"custom"`` (the default)
    A Python ``int`` gets the *smallest* of ``int8``, ``int16``, ``int32``, ``int64``
    that holds it (:data:`autocast_int`): ``2`` is ``int8``, ``1000`` is ``int16``,
    ``-129`` is ``int16``. A constant then never widens the variables it is combined
    with more than its value needs (``bvector() + 1`` stays ``int8``, ``bvector() + 1000``
    is ``int16``). A Python ``bool`` counts as the integer 0 or 1 (``int8``); pass
    ``np.True_`` or ``dtype="bool"`` for a boolean constant. An int beyond ``int64`` is
    ``uint64`` when it fits there (NumPy's choice, never a wrapped value).

    A Python ``float`` is ``config.floatX`` when ``floatX`` is ``float32`` or ``float16``
    (even if that rounds it: the user asked for narrow floats). With ``floatX="float64"``
    it gets the first of ``float32``, ``float64`` (:data:`autocast_float`) that holds it
    exactly: ``1.5`` is ``float32``, ``1.1`` is ``float64``. So ``fvector() + 1.5`` stays
    ``float32`` while ``fvector() + 1.1`` is ``float64``, because ``1.1`` in ``float32``
    is another number. NaN equals no value, so ``nan`` is ``float64``; ``inf`` is ``float32``.

``"numpy+floatX"``
    NumPy's own conversion (``np.asarray``): ints are ``int64`` (``uint64`` beyond it),
    bools ``bool``; except that a Python ``float`` is ``config.floatX``.

Under both policies NumPy scalars and arrays keep their dtype (they were typed on
purpose), complex numbers are ``complex128``, nested sequences follow NumPy (an empty
one is ``floatX``), and an explicit ``dtype`` casts the value (possibly losing precision).
:class:`autocast_float_as` temporarily changes the float candidates of the ``custom`` policy.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from types import TracebackType
from typing import Any

import numpy as np

from opweave.configdefaults import config
from opweave.graph.utils import is_masked_array
from opweave.scalar.type import normalize_dtype

__all__ = ["NumpyAutocaster", "autocast_float", "autocast_float_as", "autocast_int", "convert"]


def _floatX() -> str:
    return str(config.floatX)


def _numpy_int(x: int) -> np.ndarray:
    """NumPy's dtype for a Python int: ``int64``, else ``uint64``; a ``TypeError`` beyond."""
    for dtype in ("int64", "uint64"):
        info = np.iinfo(dtype)
        if info.min <= x <= info.max:
            return np.asarray(x, dtype=dtype)
    raise TypeError(f"the Python int {x} does not fit in int64 or uint64")


def _holds(value: np.ndarray, candidate: np.ndarray) -> bool:
    """True if ``candidate`` (a cast of ``value``) compares equal to ``value``.

    Compared as Python numbers (exact for every int and float dtype, and warning-free).
    """
    return bool(value.item() == candidate.item())


class NumpyAutocaster:
    """Give a Python number the first dtype of a preference list that holds it.

    Under ``config.cast_policy == "custom"``, calling the autocaster on a Python ``int``,
    ``bool`` or ``float`` ``x`` returns ``x`` as a 0-d array of:

    * ``config.floatX``, if ``x`` is a float and ``floatX`` (not ``float64``) is in
      :attr:`dtypes` (a deliberate, possibly lossy, narrowing);
    * else the first dtype of :attr:`dtypes` whose cast of ``x`` equals ``x`` (``float16``
      is skipped unless ``floatX`` is ``float16``);
    * else, for a float, the last candidate (rounding it); for an int, NumPy's choice
      (``int64``, ``uint64``), so that an integer constant never silently wraps around.

    Under ``"numpy+floatX"`` it returns ``np.asarray(x)``, except that a float becomes
    ``config.floatX``. A NumPy scalar or 0-d array is returned as an array of its own dtype.

    Parameters
    ----------
    dtypes
        The preferred dtypes, narrowest first.

    Attributes
    ----------
    dtypes : tuple of str
        The candidates; :class:`autocast_float_as` swaps them temporarily.
    """

    def __init__(self, dtypes: Iterable[Any]) -> None:
        self.dtypes = tuple(normalize_dtype(d) for d in dtypes)
        if not self.dtypes:
            raise ValueError("NumpyAutocaster needs at least one candidate dtype")

    def __repr__(self) -> str:
        return f"NumpyAutocaster({self.dtypes})"

    def __call__(self, x: Any) -> np.ndarray:
        """Return ``x`` as a 0-d array of the dtype the current ``cast_policy`` gives it.

        Raises
        ------
        TypeError
            If ``x`` is not a real number (or 0-d real array), or is an int that fits in
            neither ``int64`` nor ``uint64``.
        """
        if isinstance(x, np.generic | np.ndarray):
            arr = np.asarray(x)
            if arr.ndim != 0 or arr.dtype.kind not in "biuf":
                raise TypeError(
                    f"{self!r} expects a real number, got a value of dtype {arr.dtype} "
                    f"and shape {arr.shape}"
                )
            return arr
        if not isinstance(x, builtins.int | builtins.float):
            raise TypeError(f"{self!r} expects a Python int or float, got {type(x).__name__}")
        if config.cast_policy == "numpy+floatX":
            if isinstance(x, builtins.float):
                return np.asarray(x, dtype=_floatX())
            if isinstance(x, builtins.bool):
                return np.asarray(x)
            return _numpy_int(x)
        return self._custom(x)

    def _custom(self, x: int | float) -> np.ndarray:
        fx = _floatX()
        if isinstance(x, builtins.float) and fx != "float64" and fx in self.dtypes:
            with np.errstate(over="ignore"):
                return np.asarray(x, dtype=fx)
        value = _numpy_int(x) if isinstance(x, builtins.int) else np.asarray(x, dtype="float64")
        candidates = [d for d in self.dtypes if fx == "float16" or d != "float16"]
        cast = value
        with np.errstate(all="ignore"):  # an out-of-range cast is detected, not reported
            for dtype in candidates:
                cast = value.astype(dtype)
                if _holds(value, cast):
                    return cast
        if isinstance(x, builtins.int):
            return value
        return cast


#: The integer candidates of the ``custom`` policy, narrowest first.
autocast_int = NumpyAutocaster(("int8", "int16", "int32", "int64"))
#: The float candidates of the ``custom`` policy (``float16`` only counts when ``floatX`` is
#: ``float16``).
autocast_float = NumpyAutocaster(("float16", "float32", "float64"))


class autocast_float_as:  # noqa: N801 (PyTensor's name)
    """Context manager: use other float candidates in :data:`autocast_float` for a while.

    Only meaningful under ``config.cast_policy == "custom"``.

    Parameters
    ----------
    *dtypes
        The float candidates to use inside the ``with`` block, narrowest first.

    Raises
    ------
    ValueError
        If ``config.cast_policy`` is not ``"custom"`` when the object is made or entered.

    Examples
    --------
    >>> from opweave.tensor import fvector
    >>> with autocast_float_as("float32"):
    ...     (fvector() + 1.1).dtype
    'float32'
    >>> (fvector() + 1.1).dtype
    'float64'
    """

    def __init__(self, *dtypes: Any) -> None:
        self.dtypes = tuple(normalize_dtype(d) for d in dtypes)
        if not self.dtypes:
            raise ValueError("autocast_float_as needs at least one float dtype")
        self._check_policy()
        self._old: tuple[str, ...] | None = None

    @staticmethod
    def _check_policy() -> None:
        if config.cast_policy != "custom":
            raise ValueError(
                "autocast_float_as only applies under config.cast_policy='custom', "
                f"but cast_policy is {config.cast_policy!r}"
            )

    def __enter__(self) -> autocast_float_as:
        self._check_policy()
        self._old = autocast_float.dtypes
        autocast_float.dtypes = self.dtypes
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._old is not None:
            autocast_float.dtypes = self._old
            self._old = None


def convert(x: Any, dtype: Any = None) -> np.ndarray:
    """Return ``x`` as a NumPy array typed by the casting rules (see the module docstring).

    Parameters
    ----------
    x
        A Python or NumPy number, a NumPy array, or a (nested) sequence of numbers.
    dtype
        Force this dtype (``"floatX"`` means ``config.floatX``): ``x`` is cast to it,
        possibly losing precision. By default the dtype is inferred: Python ints and
        bools by :data:`autocast_int`, Python floats by :data:`autocast_float`, anything
        else by NumPy (an empty sequence is ``floatX``).

    Returns
    -------
    numpy.ndarray
        Not necessarily a copy of ``x``.

    Raises
    ------
    TypeError
        For masked arrays, or an int too large for ``uint64``.
    """
    if is_masked_array(x):
        raise TypeError("masked arrays cannot be converted to constants")
    if dtype is not None:
        target = _floatX() if isinstance(dtype, str) and dtype == "floatX" else dtype
        return np.asarray(x).astype(np.dtype(target))
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, np.generic):
        return np.asarray(x)
    if isinstance(x, builtins.int):
        return autocast_int(x)
    if isinstance(x, builtins.float):
        return autocast_float(x)
    arr = np.asarray(x)
    if arr.size == 0 and not hasattr(x, "dtype"):
        arr = np.asarray(x, dtype=_floatX())
    return arr
