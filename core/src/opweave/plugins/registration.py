"""Turn plain functions and table entries into plugin objects on the plugin manager.

``register_transfer`` and the ``register_*_c_code`` functions of
:mod:`opweave.compile.ops` use these so that what they register lives in the
plugin manager, like everything else contributed to opweave.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.plugins.hookspecs import hookimpl
from opweave.plugins.manager import get_plugin_manager


class TransferFunctionPlugin:
    """A plugin answering ``opweave_transfer`` with a user function ``fn(var, target)``."""

    def __init__(self, fn: Callable[[Any, str], Any]) -> None:
        self.fn = fn

    @hookimpl
    def opweave_transfer(self, var: Any, target: str) -> Any:
        return self.fn(var, target)


class CCodeEntryPlugin:
    """A plugin returning one ``register_*_c_code`` entry from the named collect hook."""

    def __init__(self, hook_name: str, entry: tuple[Any, ...]) -> None:
        self.entry = entry

        def entries() -> list[tuple[Any, ...]]:
            return [entry]

        # The registries' hooks are declared by the C backend: optional where it is absent.
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
