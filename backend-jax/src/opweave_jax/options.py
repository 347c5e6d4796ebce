"""The configuration flags of the JAX backend (``jax__device``, ``jax__python_fallback``,
``jax__compilation_cache``) and the device ``jax__device`` names.

``jax__device`` (``opweave.config.jax__device``, ``OPWEAVE_FLAGS=jax__device=gpu``) chooses
where the ``jax`` linker's functions run and their shared values live: ``""`` (the default)
is JAX's default device, or a GPU when the core's ``device`` flag is ``cuda`` /
``cuda<N>`` and JAX has one; ``"cpu"``, ``"gpu"``, ``"cuda"``, ``"rocm"``, ``"tpu"`` name
the first device of that platform, ``"cpu:1"`` its second. The device is looked up when a
function is linked (JAX's devices are known only then).

``jax__compilation_cache`` (on by default) keeps XLA's executables in JAX's persistent
compilation cache under ``<compiledir>/jax``, unless JAX has a cache directory of the user's
already (:mod:`opweave_jax.compile_cache`).
"""

from __future__ import annotations

import re
from typing import Any

from opweave.configuration import BoolParam, Config, StrParam
from opweave.plugins import hookimpl

__all__ = ["add_jax_options", "jax_device", "opweave_addoption"]

_SPEC = re.compile(r"([a-z]+)(?::([0-9]+))?")

#: Platform names JAX may know a device kind by.
_ALIASES = {"cuda": ("cuda", "gpu"), "rocm": ("rocm", "gpu"), "gpu": ("gpu",)}


def add_jax_options(config: Config) -> None:
    """Register ``jax__device``, ``jax__python_fallback`` and ``jax__compilation_cache``
    on ``config``."""
    config.add(
        "jax__device",
        "Where the jax linker's functions run and their shared values live: '' (JAX's\n"
        "default device, or its GPU when ``device`` is ``cuda``), 'cpu', 'gpu', 'cuda',\n"
        "'rocm', 'tpu', or one of them with an index ('cpu:1', 'gpu:0').",
        StrParam(""),
    )
    config.add(
        "jax__python_fallback",
        "Run a node the jax linker has no lowering for through its Python kernel, by\n"
        "jax.pure_callback (on the host, not differentiable by JAX), with a warning,\n"
        "instead of refusing the graph.",
        BoolParam(False),
    )
    config.add(
        "jax__compilation_cache",
        "Keep the executables XLA compiles for the jax linker in JAX's persistent\n"
        "compilation cache under ``<compiledir>/jax``, so that another process compiling\n"
        "the same graph loads them instead (small graphs included). Read when the first\n"
        "jax-linker function of a process is linked; a cache directory configured for JAX\n"
        "already (JAX_COMPILATION_CACHE_DIR, jax.config) is left as it is.",
        BoolParam(True),
    )


@hookimpl
def opweave_addoption(config: Any) -> None:
    """``jax__device``, ``jax__python_fallback``, ``jax__compilation_cache``."""
    add_jax_options(config)


def _available() -> str:
    import jax

    return ", ".join(f"{d.platform}:{i} ({d})" for i, d in enumerate(jax.devices()))


def _platform_devices(platform: str) -> list[Any]:
    import jax

    for name in _ALIASES.get(platform, (platform,)):
        try:
            return list(jax.devices(name))
        except RuntimeError:
            continue
    return []


def jax_device(spec: str | None = None, core_device: str | None = None) -> Any:
    """The JAX device ``spec`` (default: ``config.jax__device``) names, or ``None`` for
    JAX's default device.

    Parameters
    ----------
    spec
        A ``jax__device`` value.
    core_device
        The core's ``device`` flag (default: ``config.device``): with ``spec`` empty,
        ``cuda``/``cuda<N>`` picks JAX's GPU (number ``N``) when it has one.

    Raises
    ------
    ValueError
        For a value that names no device JAX has here (the message names the flag and
        lists JAX's devices).
    """
    from opweave.configdefaults import config

    spec = str(config.jax__device if spec is None else spec).strip().lower()
    if not spec:
        core = str(config.device if core_device is None else core_device)
        found = re.fullmatch(r"cuda([0-9]*)", core)
        if found is None:
            return None
        gpus = _platform_devices("gpu")
        index = int(found.group(1) or 0)
        return gpus[index] if index < len(gpus) else None
    match = _SPEC.fullmatch(spec)
    devices = _platform_devices(match.group(1)) if match else []
    index = int(match.group(2) or 0) if match else 0
    if index >= len(devices):
        raise ValueError(
            f"config.jax__device={spec!r}: JAX has no such device here; its devices are "
            f"{_available()} (use '', 'cpu', 'gpu', 'cuda', 'rocm', 'tpu', or one of them "
            "with an index such as 'cpu:0')"
        )
    return devices[index]
