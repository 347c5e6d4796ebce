"""``config.device``: which backend provides a device, and the rewrites it brings.

A backend provides a device kind by listing it under ``devices`` in its
``opweave_backend_info`` answer (the CUDA backend lists ``"cuda"``); where none is
installed, the error says what to install, from opweave's metadata extras. Compiling with
``config.device`` set to that kind (``"cuda"``, or ``"cuda<N>"``) includes the rewrites
tagged with the kind's name, which move the graph to the device. ``"cpu"`` needs nothing.
"""

from __future__ import annotations

import re

from opweave.plugins.hints import install_hint
from opweave.plugins.manager import OpweavePluginManager, get_plugin_manager

__all__ = ["DeviceUnavailableError", "device_kind", "device_rewrite_tags"]


class DeviceUnavailableError(RuntimeError):
    """``config.device`` names a device that no installed backend can use here."""


def device_kind(device: str) -> str:
    """The kind of ``device``: ``"cuda"`` for ``"cuda"`` and ``"cuda1"``, ``"cpu"`` for cpu."""
    match = re.fullmatch(r"([A-Za-z_]+?)\d*", device)
    return match.group(1) if match else device


def device_rewrite_tags(device: str, pm: OpweavePluginManager | None = None) -> tuple[str, ...]:
    """Return the rewrite tags a compilation for ``device`` includes.

    Parameters
    ----------
    device
        A ``config.device`` value.
    pm
        The plugin manager to ask (default: the process-wide one).

    Returns
    -------
    tuple of str
        ``()`` for ``"cpu"``, else ``(kind,)``.

    Raises
    ------
    DeviceUnavailableError
        If no installed backend provides the device (naming the distribution to
        install), or the one that does is unavailable here (with its reason).
    """
    kind = device_kind(device)
    if kind == "cpu":
        return ()
    pm = pm or get_plugin_manager()
    providers = [
        info
        for info in pm.hook.opweave_backend_info()
        if info and kind in (info.get("devices") or ())
    ]
    if not providers:
        hint = install_hint(kind)
        raise DeviceUnavailableError(
            f"config.device={device!r}: no installed backend provides the device {kind!r} "
            f"({hint}); use device='cpu' to compute on the host"
        )
    usable = [info for info in providers if info.get("available")]
    if not usable:
        reasons = "; ".join(f"{info.get('name')}: {info.get('reason')}" for info in providers)
        raise DeviceUnavailableError(
            f"config.device={device!r} cannot be used on this machine ({reasons}); use "
            "device='cpu' to compute on the host"
        )
    return (kind,)
