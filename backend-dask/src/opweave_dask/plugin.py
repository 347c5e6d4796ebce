"""The ``opweave.plugins`` entry point of the Dask backend."""

from __future__ import annotations

from importlib import metadata
from typing import Any

from opweave.plugins import hookimpl
from opweave_dask.linker import DaskLinker
from opweave_dask.options import add_dask_options
from opweave_dask.table import DASK_OPS


@hookimpl
def opweave_addoption(config: Any) -> None:
    """Register the Dask backend's flags (``dask__chunk_size``, ``dask__compute``)."""
    add_dask_options(config)


@hookimpl
def opweave_linkers() -> dict[str, type]:
    """``dask``."""
    return {"dask": DaskLinker}


@hookimpl
def opweave_backend_info() -> dict[str, Any]:
    """Available wherever it is installed: it needs Dask and NumPy only."""
    return {
        "name": "opweave-dask",
        "linkers": ["dask"],
        "available": True,
        "reason": None,
        "implementations": DASK_OPS,
        "versions": {"dask": metadata.version("dask")},  # without importing Dask
    }
