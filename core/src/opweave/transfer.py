"""Moving variables between devices (``transfer`` and ``register_transfer``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Variable
from opweave.plugins.hints import install_hint
from opweave.plugins.manager import get_plugin_manager
from opweave.plugins.registration import TransferFunctionPlugin, register_plugin_object


def transfer(var: Variable, target: str) -> Variable:
    """Return ``var`` moved to ``target`` (``"cpu"``, or a target a plugin adds).

    The installed plugins' ``opweave_transfer`` hooks are asked in turn; the first
    non-``None`` answer wins.

    Raises
    ------
    TypeError
        If ``var`` is not a Variable or ``target`` is not a string.
    ValueError
        If no installed plugin can move ``var`` to ``target``.
    """
    if not isinstance(var, Variable):
        raise TypeError(f"transfer expects a Variable, got {type(var).__name__}: {var!r}")
    if not isinstance(target, str):
        raise TypeError(f"transfer target must be a string such as 'cpu', got {target!r}")
    result = get_plugin_manager().hook.opweave_transfer(var=var, target=target)
    if result is None:
        raise ValueError(
            f"cannot transfer {var} (type {var.type}) to target {target!r}: no installed plugin "
            f"handles it (built in: 'cpu'; for another target, "
            f"{install_hint(target, target.rstrip('0123456789'))})"
        )
    return result


def register_transfer(fn: Callable[[Variable, str], Any]) -> None:
    """Register ``fn(var, target)`` as a transfer implementation.

    ``fn`` returns the transferred variable (``var`` itself if nothing needs to
    move) or ``None`` if it cannot handle the pair. It is registered on the
    plugin manager as an ``opweave_transfer`` hook implementation.
    """
    if not callable(fn):
        raise TypeError(f"register_transfer expects a callable, got {fn!r}")
    register_plugin_object(
        TransferFunctionPlugin(fn), f"transfer:{getattr(fn, '__qualname__', fn)}"
    )
