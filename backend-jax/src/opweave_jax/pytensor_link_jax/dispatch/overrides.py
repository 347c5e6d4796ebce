"""Lowerings given with ``jax_funcify.register(OpClass)``, as plugins of opweave.

Each registration is a :class:`LoweringOverride` registered on the process's plugin
manager: it answers the core's ``opweave_implementation`` hook for backend ``"jax"`` and
the nodes of its Op class, so that the core's resolver (and with it the ``jax`` linker and
:func:`~opweave_jax.pytensor_link_jax.dispatch.jax_funcify` of a graph) uses it before the
backend's own table. The registrations live in the plugin manager, nowhere else.

As with :func:`functools.singledispatch`, the registration for the most specific class of
an Op's MRO wins, and of two for the same class the later one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Apply
from opweave.graph.op import Op
from opweave.plugins import hookimpl
from opweave.plugins.manager import OpweavePluginManager, get_plugin_manager
from opweave.plugins.registration import register_plugin_object

__all__ = ["BACKEND", "LoweringOverride", "overrides_in", "register_override"]

#: The implementation name the overrides answer for.
BACKEND = "jax"

Funcify = Callable[..., Any]


class LoweringOverride:
    """The plugin answering ``opweave_implementation`` with ``fn(op, node=node)`` for the
    nodes of ``op_class`` on backend ``"jax"``.

    Parameters
    ----------
    op_class
        The Op class (its subclasses too).
    fn
        PyTensor's funcify signature: ``fn(op, node=node, **kwargs)`` returns a function
        of the node's input values (JAX arrays) returning its output value (a tuple for
        several outputs).
    pm
        The plugin manager it is registered on.
    """

    def __init__(self, op_class: type, fn: Funcify, pm: OpweavePluginManager) -> None:
        self.op_class = op_class
        self.fn = fn
        self.pm = pm

    def __repr__(self) -> str:
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        return f"<jax_funcify override {name} for {self.op_class.__qualname__}>"

    @hookimpl
    def opweave_implementation(self, op: Any, node: Apply, backend: str) -> Any:
        """``fn(op, node=node)`` when ``backend`` is ``"jax"`` and this registration is the
        one that applies to ``op`` (see the module's documentation), else ``None``."""
        if backend != BACKEND or not isinstance(op, self.op_class):
            return None
        if best_override(type(op), self.pm) is not self:
            return None
        return self.fn(op, node=node)


def overrides_in(pm: OpweavePluginManager) -> list[LoweringOverride]:
    """The overrides registered on ``pm``, oldest first."""
    return [
        impl.plugin
        for impl in pm.hook.opweave_implementation.get_hookimpls()
        if isinstance(impl.plugin, LoweringOverride)
    ]


def best_override(cls: type, pm: OpweavePluginManager) -> LoweringOverride | None:
    """The override for Ops of class ``cls``: the most specific class of its MRO, and the
    latest registered for that class; ``None`` when none applies."""
    mro = cls.__mro__
    found: LoweringOverride | None = None
    rank = len(mro)
    for override in overrides_in(pm):
        if override.op_class in mro and mro.index(override.op_class) <= rank:
            found, rank = override, mro.index(override.op_class)
    return found


def register_override(op_class: type, fn: Funcify) -> LoweringOverride:
    """Register ``fn`` as the ``jax`` lowering of ``op_class``'s nodes on the process's
    plugin manager.

    Raises
    ------
    TypeError
        When ``op_class`` is not an Op class or ``fn`` is not callable.
    """
    if not (isinstance(op_class, type) and issubclass(op_class, Op)):
        raise TypeError(
            f"jax_funcify.register expects an Op class, got {op_class!r}; the lowerings "
            "opweave's jax linker uses are per Op"
        )
    if not callable(fn):
        raise TypeError(f"jax_funcify.register({op_class.__qualname__}): {fn!r} is not callable")
    pm = get_plugin_manager()
    override = LoweringOverride(op_class, fn, pm)
    register_plugin_object(override, f"jax_funcify:{op_class.__module__}.{op_class.__qualname__}")
    return override
