"""``Variable.eval``: compile the graph of a variable and run it, caching the function.

PyTensor offers ``eval`` on every :class:`~opweave.graph.basic.Variable`. It compiles with
``opweave.function``, the package's name read on each call (so that code replacing it is
heard), and graphs are the floor below the compiler (see :mod:`opweave._layers`): the method
is defined here, on the top floor, and given to ``Variable`` when this module is imported
(``import opweave`` imports it).
"""

from __future__ import annotations

import warnings
from typing import Any

import opweave
from opweave.graph.basic import Variable
from opweave.graph.walks import get_var_by_name

__all__ = ["eval_variable"]


def _hashable(value: Any) -> Any:
    """``value`` with its dicts, lists and tuples turned into tuples (for cache keys)."""
    if isinstance(value, dict):
        return tuple((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return value


def eval_variable(
    self: Variable[Any, Any],
    inputs_to_values: dict[Variable | str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Compile and evaluate this variable (``Variable.eval``).

    Parameters
    ----------
    inputs_to_values
        Maps the free input variables of the graph (or their names) to values.
    **kwargs
        Passed to :func:`opweave.function`: ``givens``, ``mode``,
        ``on_unused_input`` ...

    Returns
    -------
    The computed value.

    Raises
    ------
    ValueError
        For a name no variable of the graph has, or that several have (a missing
        name is allowed with ``on_unused_input="ignore"`` or ``"warn"``).
    TypeError
        For a key that is neither a Variable nor a str.

    Notes
    -----
    The compiled function is cached on the variable per set of inputs and keyword
    arguments (arguments that cannot be hashed, such as arrays in ``givens``, are
    compiled anew on each call).
    """
    missing_ok = kwargs.get("on_unused_input") in ("ignore", "warn")
    values: dict[Variable, Any] = {}
    for key, value in (inputs_to_values or {}).items():
        if isinstance(key, str):
            found = get_var_by_name([self], key)
            if len(found) > 1:
                raise ValueError(
                    f"eval: {len(found)} variables of the graph are named {key!r} "
                    f"(Found multiple variables with name {key})"
                )
            if not found:
                if missing_ok:
                    continue
                raise ValueError(
                    f"eval: no variable of the graph of {self} is named {key!r} "
                    f"({key} not found in graph)"
                )
            key = found[0]
        elif not isinstance(key, Variable):
            raise TypeError(
                f"eval: inputs_to_values keys must be Variables or names, got "
                f"{type(key).__name__} {key!r}"
            )
        values[key] = value
    inputs = tuple(sorted(values, key=id))
    cache = self.__dict__.setdefault("_fn_cache", {})
    cache_key: Any = (inputs, _hashable(kwargs))
    try:
        fn = cache.get(cache_key)
    except TypeError as exc:
        warnings.warn(
            "Keyword arguments could not be used to create a cache key for the "
            "underlying variable. A function will be recompiled on every call with "
            f"such keyword arguments.\n{exc}",
            UserWarning,
            stacklevel=2,
        )
        cache_key, fn = None, None
    if fn is None:
        fn = opweave.function(list(inputs), self, **kwargs)
        if cache_key is not None:
            cache[cache_key] = fn
    return fn(*(values[v] for v in inputs))


# The method of every Variable (see the module docstring).
Variable.eval = eval_variable  # type: ignore[method-assign]
