"""PyTensor's ``jax_funcify`` and ``jax_typify``, on opweave's ``jax`` lowerings.

:data:`jax_funcify` is called as PyTensor's is:

- ``jax_funcify(fgraph)``: the graph as a Python function of JAX arrays returning a tuple
  of the outputs' values (:func:`~opweave_jax.pytensor_link_jax.dispatch.graph
  .graph_function`), to compose with ``jax.jit``, ``jax.vmap`` ...;
- ``jax_funcify(op, node=node)``: the lowering of one node, a function of its input values
  returning its output value (a tuple for several outputs), from the core's resolver;
- ``jax_funcify.register(OpClass)(fn)``: ``fn(op, node=node, **kwargs)`` becomes the
  lowering of that class's nodes, in ``jax_funcify`` and in the ``jax`` linker alike (a
  plugin of opweave: :mod:`~opweave_jax.pytensor_link_jax.dispatch.overrides`).

:func:`jax_typify` turns a value into what a JAX function takes; it is a
:func:`functools.singledispatch` function, as PyTensor's. The ``jax`` linker passes its
inputs' NumPy values to JAX as they are and does not call it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, overload

import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op
from opweave.plugins.manager import get_plugin_manager
from opweave_jax.program import lowering_for
from opweave_jax.pytensor_link_jax.dispatch.graph import graph_function
from opweave_jax.pytensor_link_jax.dispatch.overrides import (
    best_override,
    register_override,
)

__all__ = ["JAXFuncify", "jax_funcify", "jax_typify"]

Funcify = Callable[..., Any]


class JAXFuncify:
    """The type of :data:`jax_funcify` (see the module's documentation)."""

    __name__ = "jax_funcify"
    __qualname__ = "jax_funcify"

    def __call__(self, op: Any, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
        """The JAX function of a graph or of one node.

        Parameters
        ----------
        op
            A :class:`~opweave.graph.fg.FunctionGraph`, or an Op.
        node
            For an Op: its node (opweave's lowerings are made for a node).
        **kwargs
            ``fgraph_name`` names a graph's function; PyTensor's other keyword arguments
            (``storage_map`` ...) are accepted and not used.

        Raises
        ------
        NotImplementedError
            For anything else than a graph or an Op.
        TypeError
            For an Op without ``node``.
        opweave.graph.utils.NoImplementationError
            For a node (of the graph) without a ``jax`` lowering.
        """
        if isinstance(op, FunctionGraph):
            return graph_function(op, kwargs.get("fgraph_name", "jax_funcified_fgraph"))
        if not isinstance(op, Op):
            raise NotImplementedError(f"No JAX conversion for the given `Op`: {op}")
        if node is None:
            override = best_override(type(op), get_plugin_manager())
            if override is not None:
                return override.fn(op, node=None, **kwargs)  # type: ignore[no-any-return]
            raise TypeError(
                f"jax_funcify({op}) needs node=: opweave's jax lowerings are made for a node "
                "(its input and output types)"
            )
        return lowering_for(node, op)

    @overload
    def register(self, cls: type, func: None = None) -> Callable[[Funcify], Funcify]: ...

    @overload
    def register(self, cls: type, func: Funcify) -> Funcify: ...

    def register(
        self, cls: type, func: Funcify | None = None
    ) -> Funcify | Callable[[Funcify], Funcify]:
        """Make ``func(op, node=node, **kwargs)`` the ``jax`` lowering of ``cls``'s nodes
        (``cls``'s subclasses too, unless one has its own), as
        :meth:`functools.singledispatch` ``register`` does; used as a decorator when
        ``func`` is left out. It returns ``func``.

        Raises
        ------
        TypeError
            When ``cls`` is not an Op class.
        """
        if func is None:

            def decorate(fn: Funcify) -> Funcify:
                register_override(cls, fn)
                return fn

            return decorate
        register_override(cls, func)
        return func

    def __repr__(self) -> str:
        return "<jax_funcify: opweave's jax lowerings>"


#: PyTensor's ``jax_funcify`` (see the module's documentation).
jax_funcify = JAXFuncify()


@functools.singledispatch
def jax_typify(data: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``data`` as a JAX value: unchanged without ``dtype``, else a JAX array of it."""
    if dtype is None:
        return data
    return jnp.array(data, dtype=dtype)


@jax_typify.register(np.ndarray)
def _jax_typify_ndarray(data: np.ndarray, dtype: Any = None, **kwargs: Any) -> Any:
    """A 0-d array as its Python scalar, others as JAX arrays (of ``dtype`` if given)."""
    if data.ndim == 0:
        return data.item()
    return jnp.array(data, dtype=dtype)
