"""The ``nplog`` linker, also served as ``opweave.link.nplog``."""

from __future__ import annotations

from opweave.link.loop import LoopLinker

__all__ = ["NPLogLinker"]


class NPLogLinker(LoopLinker):
    """Runs every node through this backend's logged kernels (NumPy underneath)."""

    name = "nplog"
    priority = 1  # below the shipped linkers: linker="auto" never picks it
    impls = ("nplog", "py")
