"""``jax_funcify`` (``pytensor.link.jax.dispatch``): the conversion of Ops to JAX functions.

A :func:`functools.singledispatch` function: code may register conversions for its own
Op classes (``@jax_funcify.register(MyOp)``); calling it for an object without one raises
an error saying that the JAX backend (the ``opweave-jax`` distribution) is not installed.
"""

from __future__ import annotations

from functools import singledispatch
from typing import Any

from opweave.link.jax import jax_backend_missing

__all__ = ["jax_funcify"]


@singledispatch
def jax_funcify(op: Any, node: Any = None, storage_map: Any = None, **kwargs: Any) -> Any:
    """Convert ``op`` (an Op or a FunctionGraph) into a JAX-traceable function.

    Raises
    ------
    ModuleNotFoundError
        For an object without a registered conversion: the JAX backend is not installed.
    """
    raise jax_backend_missing(f"jax_funcify({type(op).__name__})")
