"""Module paths under ``opweave`` that installed plugins serve (the ``opweave_modules`` hook).

A backend keeps PyTensor's module paths for what it provides without a file in the core:
its plugin answers ``opweave_modules()`` with ``{"opweave.link.mybackend":
"mybackend.pytensor_names"}``, and ``import opweave.link.mybackend`` (or a submodule of it)
gives that module, the very same object, under both names.

A module under ``opweave.link`` (PyTensor's namespace of backends) that neither the core
nor any installed plugin has raises a :class:`ModuleNotFoundError` saying how to get it,
from opweave's metadata extras (:mod:`opweave.plugins.hints`).

The finder is installed on ``sys.meta_path`` when opweave is imported; it
answers only for ``opweave.*`` names the core's own files do not provide, and only once
``opweave`` has finished importing (the plugins are loaded on first need, which needs
opweave).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from opweave.plugins.hints import absent_hint, install_hint

__all__ = ["PluginModuleFinder", "install_finder", "served_modules"]

#: The package whose missing submodules get an install hint.
BACKEND_NAMESPACE = "opweave.link."


def served_modules(pm: Any) -> dict[str, str]:
    """``{opweave module path: module that provides it}`` from the plugins of ``pm``."""
    found: dict[str, str] = {}
    for answer in pm.hook.opweave_modules():
        found.update(answer)
    return found


def _served(fullname: str, served: dict[str, str]) -> str | None:
    """The module that provides ``fullname``: the target of the longest served prefix."""
    best = max(
        (p for p in served if fullname == p or fullname.startswith(p + ".")),
        key=len,
        default=None,
    )
    return None if best is None else served[best] + fullname[len(best) :]


class _ServedLoader(importlib.abc.Loader):
    """Gives the plugin's module (imported under its own name) for an ``opweave`` path."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.own_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the plugin's module ran when it was imported; it keeps its spec."""
        module.__spec__ = self.own_spec


class _MissingLoader(importlib.abc.Loader):
    """Raises the :class:`ModuleNotFoundError` naming how to get a missing backend module."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        key = name[len(BACKEND_NAMESPACE) :].partition(".")[0]
        pytensor_name = "pytensor" + name.removeprefix("opweave")
        hint = absent_hint(key) or f"to get it, {install_hint(key)}"
        raise ModuleNotFoundError(
            f"No module named {name!r}: no installed plugin provides it (PyTensor's "
            f"{pytensor_name} is a backend's module); {hint}. `python -m opweave info` lists "
            "the installed backends and their linkers.",
            name=name,
        )


def _initializing(name: str) -> bool:
    spec = getattr(sys.modules.get(name), "__spec__", None)
    return spec is None or bool(getattr(spec, "_initializing", False))


class PluginModuleFinder(importlib.abc.MetaPathFinder):
    """The ``sys.meta_path`` entry serving the plugins' ``opweave`` module paths.

    Parameters
    ----------
    plugin_manager
        Returns the plugin manager to ask (the process-wide one).
    """

    def __init__(self, plugin_manager: Callable[[], Any]) -> None:
        self.plugin_manager = plugin_manager
        self._asking = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("opweave.") or self._asking or _initializing("opweave"):
            return None
        parent = sys.modules.get(fullname.rpartition(".")[0])
        own = getattr(parent, "__name__", None) == fullname.rpartition(".")[0]
        if own and importlib.machinery.PathFinder.find_spec(fullname, path) is not None:
            return None  # the core's own file
        self._asking = True
        try:
            provider = _served(fullname, served_modules(self.plugin_manager()))
        finally:
            self._asking = False
        if provider is not None:
            spec = importlib.machinery.ModuleSpec(fullname, _ServedLoader(provider))
            found = importlib.util.find_spec(provider)
            if found is not None and found.submodule_search_locations is not None:
                spec.submodule_search_locations = []
            return spec
        if fullname.startswith(BACKEND_NAMESPACE):
            return importlib.machinery.ModuleSpec(fullname, _MissingLoader())
        return None


def install_finder(plugin_manager: Callable[[], Any]) -> None:
    """Put the finder first on ``sys.meta_path`` (once), asking ``plugin_manager()``."""
    if not any(isinstance(f, PluginModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, PluginModuleFinder(plugin_manager))
