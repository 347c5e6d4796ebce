"""Fixtures of the jax linker's tests: the modes, and a comparison with the ``py`` linker."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")

import opweave

#: The rewrites each comparison runs under: none (each Op lowered as written) and
#: ``fast_run`` (what the graph becomes: fused Composites, MapReduce, shape rewrites).
OPTIMIZERS = (None, "fast_run")


def assert_same(got: Any, want: Any, rtol: float = 0.0, what: str = "") -> None:
    """``got`` equals ``want``: same dtype and shape; bit for bit (NaN matching NaN, and the
    sign of zeros) when ``rtol`` is 0, else within ``rtol`` (infinities and NaN in the same
    places)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if rtol == 0.0:
        np.testing.assert_array_equal(got, want, err_msg=what)
        if got.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=what)
        return
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True, err_msg=what)


def compile_both(
    inputs: Sequence[Any], outputs: Sequence[Any], optimizer: Any = "fast_run"
) -> tuple[Any, Any]:
    """The graph compiled with the ``jax`` linker and with the ``py`` linker."""
    jax_fn = opweave.function(
        list(inputs), list(outputs), mode=opweave.Mode(linker="jax", optimizer=optimizer)
    )
    py_fn = opweave.function(
        list(inputs), list(outputs), mode=opweave.Mode(linker="py", optimizer=optimizer)
    )
    return jax_fn, py_fn


@pytest.fixture(params=OPTIMIZERS, ids=["no-rewrites", "fast_run"])
def same_as_py(request: pytest.FixtureRequest) -> Callable[..., list[Any]]:
    """``check(inputs, outputs, args, rtol=0)``: compile with the ``jax`` and ``py``
    linkers, call both with ``args``, assert every output is a NumPy array equal to
    ``py``'s (:func:`assert_same`); return the jax function's outputs."""
    optimizer = request.param

    def check(
        inputs: Sequence[Any], outputs: Sequence[Any], args: Sequence[Any], rtol: float = 0.0
    ) -> list[Any]:
        jax_fn, py_fn = compile_both(inputs, outputs, optimizer)
        got = jax_fn(*args)
        want = py_fn(*args)
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert isinstance(a, np.ndarray), f"output {i} is a {type(a).__name__}"
            assert_same(a, b, rtol, f"output {i} ({outputs[i]})")
        return list(got)

    return check
