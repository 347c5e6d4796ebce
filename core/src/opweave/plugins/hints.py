"""Where to get what is not installed: hints read from opweave's metadata and the plugins.

The core names no backend. When something a backend provides is missing (a linker, a
mode, a device, a module path), the hint comes from opweave's own metadata: each extra of
the ``opweave`` distribution requires the distribution that provides what the extra is
named after (``pip install "opweave[cvm]"`` installs the backend of the ``cvm`` linker).
What is installed but unusable is said by the installed plugins themselves (the
``reason`` of their ``opweave_backend_info`` answers).

This module imports nothing of opweave, so that any floor may use it.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import metadata

__all__ = ["absent_hint", "extra_distributions", "install_hint"]

#: A ``Requires-Dist`` entry of an extra: the distribution and the extra's name.
_EXTRA_REQUIREMENT = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)[^;]*;.*\bextra\s*==\s*[\"']([^\"']+)[\"']"
)


@cache
def extra_distributions() -> dict[str, str]:
    """The distribution each extra of ``opweave`` requires, by the extra's name.

    Empty when the metadata cannot be read (opweave imported from a source tree that was
    never installed).
    """
    try:
        requires = metadata.requires("opweave") or []
    except metadata.PackageNotFoundError:
        return {}
    found: dict[str, str] = {}
    for requirement in requires:
        match = _EXTRA_REQUIREMENT.match(requirement)
        if match is not None:
            found[match.group(2)] = match.group(1)
    return found


def install_hint(*keys: str) -> str:
    """How to get what one of ``keys`` names (a linker, a mode, a device kind...).

    Returns
    -------
    str
        ``pip install <distribution>`` for the first key that is an extra of ``opweave``,
        else a pointer to the backend documentation.
    """
    extras = extra_distributions()
    for key in keys:
        dist = extras.get(key) or extras.get(key.lower())
        if dist is not None:
            return f"pip install {dist} (or pip install 'opweave[{key.lower()}]')"
    return "install the plugin distribution that provides it (see opweave's documentation)"


def absent_hint(key: str) -> str | None:
    """Why what the extra ``key`` of ``opweave`` provides is absent, and what to do; ``None``
    when ``key`` is no extra.

    Returns
    -------
    str or None
        ``pip install <distribution> ...`` when the distribution is not installed, else
        a sentence saying that its plugin is not loaded.
    """
    dist = extra_distributions().get(key.lower())
    if dist is None:
        return None
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return f"it is provided by a plugin that is not installed here: {install_hint(key)}"
    return (
        f"it is provided by {dist}, which is installed but whose plugin is not loaded "
        "(plugin autoloading is off, or the plugin failed to load: `python -m opweave info` "
        "says why)"
    )
