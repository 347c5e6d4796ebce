"""A constant moved to the GPU (``GpuFromHost`` of a constant) is uploaded at the first call
only; each call still gets its own device copy of it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave_cuda.device_copy as device_copy
from opweave_cuda import GpuFromHost

pytestmark = pytest.mark.cuda


def _on_gpu(expr: Any) -> Any:
    return opweave.function([], expr.transfer("cuda"), mode=opweave.Mode(linker="cuda"))


def test_a_constant_is_uploaded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.arange(12.0).reshape(3, 4)
    g = opweave.shared(x, target="cuda").transfer("cpu")
    f = _on_gpu(g.T + 1.5)
    moves = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, GpuFromHost)]
    assert moves and all(isinstance(n.inputs[0], opweave.graph.basic.Constant) for n in moves)
    g2 = opweave.shared(x, target="cuda").transfer("cpu")
    f2 = _on_gpu(g2.T + 2.5)
    uploads: list[Any] = []
    real = device_copy.upload

    def counted(value: Any) -> Any:
        uploads.append(value)
        return real(value)

    monkeypatch.setattr(device_copy, "upload", counted)
    for _ in range(3):
        np.testing.assert_array_equal(device_copy.to_host(f2()), x.T + 2.5)
    assert len(uploads) == len(moves)  # the first call's, none after


def test_writing_into_a_call_s_copy_does_not_change_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No GPU node writes into its inputs today, but the copy is what makes that safe: the
    implementation gives every call an array of its own, filled from the one upload."""
    from opweave_cuda.impls import _constant_to_gpu

    c = np.arange(6.0).reshape(2, 3)
    perform = _constant_to_gpu()
    uploads: list[Any] = []
    real = device_copy.upload
    monkeypatch.setattr(device_copy, "upload", lambda v: uploads.append(v) or real(v))
    first: list[Any] = [None]
    perform(None, [c], [first])  # type: ignore[arg-type]
    device_copy.upload_into(first[0], np.zeros_like(c))  # a consumer overwrites it
    second: list[Any] = [None]
    perform(None, [c], [second])  # type: ignore[arg-type]
    np.testing.assert_array_equal(device_copy.to_host(second[0]), c)
    again = [second[0]]
    perform(None, [c], [again])  # type: ignore[arg-type]  # a reusable cell is refilled
    assert again[0] is second[0]
    np.testing.assert_array_equal(device_copy.to_host(again[0]), c)
    assert len(uploads) == 1
