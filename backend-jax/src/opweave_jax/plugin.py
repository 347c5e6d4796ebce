"""The ``opweave.plugins`` entry point of the JAX backend.

Importing it imports no JAX: availability and versions are read from the installed
distributions; ``opweave info`` lists JAX's devices (importing JAX then).
"""

from __future__ import annotations

import functools
from importlib import metadata
from importlib.util import find_spec
from typing import Any

from opweave.plugins import hookimpl
from opweave_jax.linker import JAXLinker
from opweave_jax.options import opweave_addoption  # noqa: F401
from opweave_jax.pytensor_modules import opweave_modules  # noqa: F401
from opweave_jax.table import JAX_OPS, lowering_of

#: PyTensor's JAX rewrites: ``fast_run`` without the C-specific ones, fusion and in-place.
JAX_EXCLUDED = ("cxx_only", "BlasOpt", "fusion", "inplace", "scan_save_mem_prealloc")


@functools.cache
def jax_mode() -> Any:
    """The ``JAX`` mode (one object): linker ``jax``, PyTensor's JAX rewrite query."""
    from opweave.compile.mode_base import Mode, RunnableQuery

    query = RunnableQuery(include=("fast_run", "jax"), exclude=JAX_EXCLUDED)
    return Mode(linker="jax", optimizer=query)


def _versions() -> dict[str, str]:
    found = {}
    for dist in ("jax", "jaxlib"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[dist] = "not installed"
    return found


def devices() -> list[str]:
    """JAX's devices (importing JAX, which takes a second: only ``opweave info`` asks), or
    why JAX could not list them."""
    try:
        import jax

        return [str(d) for d in jax.devices()]
    except Exception as exc:  # a broken JAX install must not break ``opweave info``
        return [f"JAX could not list its devices: {type(exc).__name__}: {exc}"]


@hookimpl
def opweave_linkers() -> dict[str, type]:
    """``jax``."""
    return {"jax": JAXLinker}


@hookimpl
def opweave_backend_info() -> dict[str, Any]:
    """Available where JAX and jaxlib are installed."""
    missing = [name for name in ("jax", "jaxlib") if find_spec(name) is None]
    return {
        "name": "opweave-jax",
        "linkers": ["jax"],
        "available": not missing,
        "reason": f"{' and '.join(missing)} not installed (pip install opweave-jax)"
        if missing
        else None,
        "implementations": JAX_OPS,
        "implementation_of": lowering_of,
        "versions": _versions(),
        "hardware": devices,
        "fallback": False,
    }


@hookimpl
def opweave_modes() -> dict[str, Any]:
    """``JAX``."""
    return {"JAX": jax_mode()}


@hookimpl
def opweave_rewrites(db: Any) -> None:
    """The phase ``jax_boolean_indexing`` (tag ``jax``: only the ``jax`` linker's
    compilations run it; :mod:`opweave_jax.rewrites`)."""
    from opweave_jax.rewrites import register_jax_rewrites

    register_jax_rewrites(db)
