"""Turn plain functions and table entries into plugin objects on the plugin manager.

``register_transfer`` and the ``register_*_c_code`` functions of
:mod:`opweave.compile.ops` (entries of a backend's collect hooks) use these so that what
they register lives in the plugin manager, like everything else contributed to opweave.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.plugins.hookspecs import hookimpl
from opweave.plugins.manager import get_plugin_manager
from opweave.plugins.module_paths import install_finder

# What plugins register includes module paths (``opweave_modules``): serve them from now on.
install_finder(get_plugin_manager)


class TransferFunctionPlugin:
    """A plugin answering ``opweave_transfer`` with a user function ``fn(var, target)``."""

    def __init__(self, fn: Callable[[Any, str], Any]) -> None:
        self.fn = fn

    @hookimpl
    def opweave_transfer(self, var: Any, target: str) -> Any:
        return self.fn(var, target)


class CollectHookEntry:
    """A plugin answering the collect hook named ``hook_name`` with ``[entry]``.

    The hook may be declared by a plugin that is not installed (a backend's own hook, such
    as the C backend's ``opweave_register_deep_copy_op_c_code``): the implementation is
    optional, so the entry loads anyway and is simply never asked for.
    """

    def __init__(self, hook_name: str, entry: Any) -> None:
        self.entry = entry

        def entries() -> list[Any]:
            return [entry]

        setattr(self, hook_name, hookimpl(specname=hook_name, optionalhook=True)(entries))


def register_plugin_object(plugin: Any, name: str) -> None:
    """Register ``plugin`` on the process-wide manager under a unique ``name``."""
    pm = get_plugin_manager()
    unique = name
    n = 1
    while pm.has_plugin(unique):
        n += 1
        unique = f"{name}#{n}"
    pm.register(plugin, name=unique)
