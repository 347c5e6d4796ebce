"""Finding linkers by name among what the installed plugins provide."""

from __future__ import annotations

from typing import Any

from opweave.plugins.manager import OpweavePluginManager, get_plugin_manager

#: The distribution that provides each of the standard linker names.
LINKER_DISTRIBUTIONS = {
    "py": "opweave-python",
    "vm": "opweave-python",
    "c": "opweave-c",
    "cvm": "opweave-c",
    "cuda": "opweave-cuda",
}


class LinkerNotFoundError(ValueError):
    """The requested linker is unknown or its backend is not installed."""


def available_linkers(pm: OpweavePluginManager | None = None) -> dict[str, type]:
    """Return ``{name: Linker class}`` from every plugin's ``opweave_linkers`` hook.

    Raises
    ------
    ValueError
        If two plugins offer different classes under the same name.
    """
    pm = pm or get_plugin_manager()
    found: dict[str, type] = {}
    owner: dict[str, str] = {}
    for impl in reversed(pm.hook.opweave_linkers.get_hookimpls()):
        name = pm.get_name(impl.plugin) or "?"
        offered = impl.function() or {}
        for linker_name, cls in offered.items():
            if linker_name in found and found[linker_name] is not cls:
                raise ValueError(
                    f"linker {linker_name!r} is offered by both {owner[linker_name]!r} and {name!r}"
                )
            found[linker_name] = cls
            owner[linker_name] = name
    return found


def resolve_linker(name: str | Any, pm: OpweavePluginManager | None = None) -> type:
    """Return the Linker class called ``name`` (``"auto"``: the highest-priority one).

    Raises
    ------
    LinkerNotFoundError
        Listing the installed linkers and naming the distribution to install.
    """
    linkers = available_linkers(pm)
    if name == "auto":
        if not linkers:
            raise LinkerNotFoundError(
                "no linker is installed: opweave alone builds graphs but cannot run them. "
                "Install a backend: pip install opweave-python (py, vm) or opweave-c (c, cvm)."
            )
        return max(linkers.values(), key=lambda cls: getattr(cls, "priority", 0))
    if name in linkers:
        return linkers[name]
    installed = ", ".join(sorted(linkers)) or "none"
    dist = LINKER_DISTRIBUTIONS.get(name)
    hint = (
        f"it is provided by {dist}: pip install {dist}"
        if dist
        else "no known distribution provides it; check the name or install the plugin that does"
    )
    raise LinkerNotFoundError(
        f"linker {name!r} is not installed ({hint}). Installed linkers: {installed}."
    )
