"""Fixtures of the dask linker's tests: the mode, and a comparison with the ``vm`` linker."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import opweave  # noqa: E402


@pytest.fixture
def dask_mode() -> opweave.Mode:
    """``Mode(linker="dask")`` with the standard rewrites (fusion included)."""
    return opweave.Mode(linker="dask")


@pytest.fixture
def same_as_vm(dask_mode: opweave.Mode) -> Callable[..., list[Any]]:
    """``check(inputs, outputs, args)``: compile with the dask and ``vm`` linkers, call the
    first with ``args`` (Dask arrays are computed for the second), assert every output is a
    lazy Dask array equal to ``vm``'s; return the dask function's outputs."""

    def check(inputs: Sequence[Any], outputs: Sequence[Any], args: Sequence[Any]) -> list[Any]:
        f = opweave.function(inputs, list(outputs), mode=dask_mode)
        g = opweave.function(inputs, list(outputs), mode=opweave.Mode(linker="vm"))
        got = f(*args)
        want = g(*[a.compute() if isinstance(a, da.Array) else a for a in args])
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert isinstance(a, da.Array), f"output {i} is a {type(a).__name__}"
            computed = a.compute()
            assert computed.dtype == b.dtype, f"output {i}: {computed.dtype} != {b.dtype}"
            np.testing.assert_allclose(computed, b, rtol=1e-12, err_msg=f"output {i}")
        return got

    return check
