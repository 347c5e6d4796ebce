"""The CUDA backend's configuration flags (registered through ``opweave_addoption``)."""

from __future__ import annotations

from opweave.configuration import BoolParam, Config

__all__ = ["add_cuda_options"]


def add_cuda_options(config: Config) -> None:
    """Register the CUDA backend's flags on ``config``.

    Parameters
    ----------
    config
        The configuration (``opweave.config``, or one made by ``build_config``).
    """
    config.add(
        "cuda__check_launches",
        "Whether every kernel launch waits for the kernel and checks it ran.\n\n"
        "Kernels run asynchronously: without this, a kernel that faults is reported by the\n"
        "next operation that waits for the device (usually a download), which then names the\n"
        "download. With it, the failure names the kernel, and the node that launched it; each\n"
        "launch then costs a device synchronisation.",
        BoolParam(False),
    )
