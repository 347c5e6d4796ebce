"""``pycuda.tools`` on the emulated device: the memory pool (no pooling: every block is new
and poisoned, so reads of unwritten memory show)."""

from __future__ import annotations

from pycuda import driver


class DeviceMemoryPool:
    """Allocates fresh emulated blocks; holds nothing."""

    def __init__(self) -> None:
        self.active_blocks = 0
        self.held_blocks = 0

    def allocate(self, nbytes: int) -> driver.DeviceAllocation:
        return driver.DeviceAllocation(nbytes)

    def free_held(self) -> None:
        """Nothing is held."""

    def stop_holding(self) -> None:
        """Nothing is held."""


def make_default_context() -> driver.Context:
    return driver.Context()


def clear_context_caches() -> None:
    """Nothing is cached per context."""
