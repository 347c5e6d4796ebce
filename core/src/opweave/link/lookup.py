"""Finding linkers by name among what the installed plugins provide.

A linker is *installed* when a plugin offers it (``opweave_linkers``) and *usable* when
the backend that provides it does not report itself unavailable
(``opweave_backend_info``: no C compiler, no CUDA driver). ``linker="auto"`` picks the
usable linker of highest ``priority`` and says once, in a :class:`LinkerFallbackWarning`,
why it passed over better ones; asking for an unusable linker by name raises
:class:`LinkerUnavailableError` with the backend's reason.
"""

from __future__ import annotations

from typing import Any

from opweave.plugins.hints import extra_distributions
from opweave.plugins.manager import OpweavePluginManager, get_plugin_manager


def linker_distributions() -> dict[str, str]:
    """The distribution that provides each linker opweave knows of, by the linker's name.

    Read from opweave's own metadata: each linker is an extra of the ``opweave``
    distribution that requires its backend (``pip install "opweave[cvm]"`` installs
    opweave-c), so the core's code names no backend
    (:func:`opweave.plugins.hints.extra_distributions`). Empty when the metadata cannot be
    read (opweave imported from a source tree that was never installed).
    """
    return dict(extra_distributions())


class LinkerNotFoundError(ValueError):
    """The requested linker is unknown or its backend is not installed."""


class LinkerUnavailableError(LinkerNotFoundError):
    """The requested linker is installed but cannot be used on this machine."""


class LinkerFallbackWarning(UserWarning):
    """``linker="auto"`` passed over an installed linker that cannot be used here."""


def available_linkers(pm: OpweavePluginManager | None = None) -> dict[str, type]:
    """Return ``{name: Linker class}`` from every plugin's ``opweave_linkers`` hook.

    This is every *installed* linker, usable here or not (see :func:`unusable_linkers`).

    Raises
    ------
    ValueError
        If two plugins offer different classes under the same name.
    """
    pm = pm or get_plugin_manager()
    found: dict[str, type] = {}
    owner: dict[str, str] = {}
    for plugin, offered in reversed(pm.answers("opweave_linkers")):
        for linker_name, cls in offered.items():
            if linker_name in found and found[linker_name] is not cls:
                raise ValueError(
                    f"linker {linker_name!r} is offered by both {owner[linker_name]!r} "
                    f"and {plugin!r}"
                )
            found[linker_name] = cls
            owner[linker_name] = plugin
    return found


def unusable_linkers(pm: OpweavePluginManager | None = None) -> dict[str, str]:
    """``{linker name: reason}`` for installed linkers whose backend reports itself
    unavailable (``opweave_backend_info``), e.g. ``c`` without a C compiler."""
    pm = pm or get_plugin_manager()
    found: dict[str, str] = {}
    for backend in pm.hook.opweave_backend_info():
        if not backend.get("available", True):
            reason = str(backend.get("reason") or "unavailable")
            for name in backend.get("linkers", ()):
                found[name] = f"{backend['name']} is installed but unavailable: {reason}"
    return found


def resolve_linker(
    name: str | Any, pm: OpweavePluginManager | None = None, fast_compile: bool = False
) -> type:
    """Return the Linker class called ``name`` (``"auto"``: the best usable one).

    With ``fast_compile``, ``"auto"`` ranks the linkers by their ``compile_priority``
    (the quickest to compile) instead of their ``priority``.

    Raises
    ------
    LinkerUnavailableError
        The linker is installed but its backend cannot work here; the message says
        why (the backend's reason, or its plugin's load or hook error).
    LinkerNotFoundError
        Listing the installed linkers and naming the distribution to install.
    """
    pm = pm or get_plugin_manager()
    linkers = available_linkers(pm)
    unusable = unusable_linkers(pm)
    if name == "auto":
        return _auto(pm, linkers, unusable, "compile_priority" if fast_compile else "priority")
    if name in linkers:
        if name in unusable:
            raise LinkerUnavailableError(
                f"linker {name!r} cannot be used here: {unusable[name]}. "
                f"Usable linkers: {', '.join(_usable(linkers, unusable)) or 'none'}."
            )
        return linkers[name]
    dist = linker_distributions().get(name)
    problems = pm.problems_of(dist) if dist else []
    if problems:
        raise LinkerUnavailableError(
            f"linker {name!r} cannot be used: {dist} is installed, but "
            f"{'; '.join(problems)}. Usable linkers: "
            f"{', '.join(_usable(linkers, unusable)) or 'none'}."
        )
    installed = ", ".join(sorted(linkers)) or "none"
    hint = (
        f"it is provided by {dist}: pip install {dist}"
        if dist
        else "no known distribution provides it; check the name or install the plugin that does"
    )
    failed = [rec for rec in pm.records if not rec.loaded] + list(pm.failures)
    if failed and not dist:
        hint += "; note that some plugins failed (see `python -m opweave info`)"
    raise LinkerNotFoundError(
        f"linker {name!r} is not installed ({hint}). Installed linkers: {installed}."
    )


def _usable(linkers: dict[str, type], unusable: dict[str, str]) -> list[str]:
    return sorted(name for name in linkers if name not in unusable)


def _auto(
    pm: OpweavePluginManager, linkers: dict[str, type], unusable: dict[str, str], rank: str
) -> type:
    ranked = sorted(linkers.items(), key=lambda item: -getattr(item[1], rank, 0))
    for name, cls in ranked:
        if name not in unusable:
            return cls
        pm.warn_once(f"linker='auto' skips {name!r}: {unusable[name]}", LinkerFallbackWarning, 4)
    why = "; ".join(f"{name}: {reason}" for name, reason in sorted(unusable.items()))
    raise LinkerNotFoundError(
        "no usable linker is installed: opweave alone builds graphs but cannot run them. "
        f"Install a backend: {_install_hint()}."
        + (f" Installed but unavailable: {why}." if why else "")
    )


def _install_hint() -> str:
    """``pip install <dist> (linkers)`` for each backend opweave's metadata names."""
    by_dist: dict[str, list[str]] = {}
    for linker, dist in linker_distributions().items():
        by_dist.setdefault(dist, []).append(linker)
    if not by_dist:
        return "pip install the distribution of a backend (see opweave's documentation)"
    return " or ".join(f"pip install {d} ({', '.join(ls)})" for d, ls in by_dist.items())
