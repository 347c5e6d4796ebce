"""The Dask backend's configuration flags, registered through ``opweave_addoption``.

They read like the core's flags (``opweave.config.dask__compute``,
``OPWEAVE_FLAGS=dask__chunk_size=1000000``, ``[tool.opweave.dask] chunk_size = ...``).
"""

from __future__ import annotations

from typing import Any

from opweave.configuration import BoolParam, Config, StrParam

__all__ = ["CHUNK_SIZE_PATTERN", "add_dask_options", "chunks_from_flag"]


def chunks_from_flag(text: str) -> Any:
    """The ``chunks`` argument of :func:`dask.array.from_array` that ``dask__chunk_size``
    names: ``"auto"``, an element count (``"1000000"``) or a byte size (``"128MiB"``).

    Raises
    ------
    ValueError
        For an empty value or a count that is not positive.
    """
    text = text.strip()
    if not text:
        raise ValueError("dask__chunk_size is empty; use 'auto', an element count or '128MiB'")
    if text.isdigit():
        count = int(text)
        if count <= 0:
            raise ValueError(f"dask__chunk_size must be positive, got {text!r}")
        return count
    return text


#: What ``dask__chunk_size`` accepts.
CHUNK_SIZE_PATTERN = r"auto|[1-9][0-9]*|[0-9]+(\.[0-9]+)? ?[kKMGT]i?B"


def add_dask_options(config: Config) -> None:
    """Register the Dask backend's flags on ``config``.

    Parameters
    ----------
    config
        The configuration (``opweave.config``, or one made by ``build_config``).
    """
    config.add(
        "dask__chunk_size",
        "How the dask linker chunks the NumPy arrays it is given (Dask arrays keep their\n"
        "chunks): 'auto' (Dask's automatic chunking, bounded by its array.chunk-size\n"
        "setting), a number of elements per chunk along each axis ('1000000'), or a byte\n"
        "size per chunk ('64MiB').",
        StrParam(
            "auto",
            pattern=CHUNK_SIZE_PATTERN,
            expected="'auto', a positive element count or a byte size such as '64MiB'",
        ),
    )
    config.add(
        "dask__kernel_linker",
        "The linker the per-chunk kernels of elementwise nodes are compiled with: 'auto' (the\n"
        "best usable of 'c', 'cvm' and 'vm'), or one of them.",
        StrParam("auto", pattern="auto|c|cvm|vm", expected="'auto', 'c', 'cvm' or 'vm'"),
    )
    config.add(
        "dask__compute",
        "Whether functions compiled with the dask linker compute their outputs (and the new\n"
        "values of shared variables) before returning, all in one dask.compute call, and\n"
        "return NumPy arrays; by default they return lazy dask.array.Array values.",
        BoolParam(False),
    )
