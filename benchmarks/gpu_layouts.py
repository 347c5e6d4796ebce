"""The layout cases of ``gpu_run.py``: how opweave-cuda's kernel choice fares on layouts
other than one flat array.

Each case is one graph on a float32 matrix of about ``n`` elements held on the device:

* ``x + b[None, :]`` (a bias row) and ``x + c[:, None]`` (a bias column), the broadcast
  fast paths;
* ``x.T + 1`` (a transposed input, the output C-contiguous) and ``x[:, ::2] + 1``, the
  strided kernels;
* ``sum(x, axis=0)`` of a C-contiguous matrix (coalesced column reads),
  ``sum(x, axis=1)`` of the same matrix, and ``sum(x, axis=1)`` of a ``(n / 8, 8)`` matrix
  (short reductions sharing a block).

The reference of every row is the copy-bound time: the bytes the case must read and write
at the bandwidth of a device-to-device copy. CuPy and PyTorch compute the same expression;
``gpu_run.layout_rows`` times the three.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from report import Outcome


@dataclass(frozen=True)
class LayoutCase:
    """One layout case: its name, its data and the expression in each library."""

    name: str
    #: The matrices the case reads, from the element count.
    data: Callable[[int], list[np.ndarray]]
    #: ``expr(module, *arrays)`` with ``module`` opweave.tensor, cupy or torch.
    expr: Callable[..., Any]
    #: The NumPy result, to check opweave's.
    numpy: Callable[..., np.ndarray]


def square(n: int, seed: int = 3) -> np.ndarray:
    """A C-contiguous float32 matrix of about ``n`` elements, with sides a multiple of 256."""
    side = max(256, math.isqrt(n) // 256 * 256)
    return np.random.default_rng(seed).standard_normal((side, side), dtype=np.float32)


def with_row(n: int) -> list[np.ndarray]:
    x = square(n)
    return [x, np.random.default_rng(4).standard_normal(x.shape[1], dtype=np.float32)]


def with_column(n: int) -> list[np.ndarray]:
    x = square(n)
    return [x, np.random.default_rng(5).standard_normal(x.shape[0], dtype=np.float32)]


def narrow(n: int) -> list[np.ndarray]:
    rows = max(1, n // 8)
    return [np.random.default_rng(6).standard_normal((rows, 8), dtype=np.float32)]


def _sum(lib: Any, x: Any, axis: int) -> Any:
    """``sum(x, axis)`` in opweave.tensor, CuPy or PyTorch."""
    if getattr(lib, "__name__", "") == "torch":
        return x.sum(dim=axis)
    return lib.sum(x, axis=axis)


CASES = [
    LayoutCase("x + b[None, :]", with_row, lambda lib, x, b: x + b[None, :], lambda x, b: x + b),
    LayoutCase(
        "x + c[:, None]", with_column, lambda lib, x, c: x + c[:, None], lambda x, c: x + c[:, None]
    ),
    LayoutCase("x.T + 1", lambda n: [square(n)], lambda lib, x: x.T + 1, lambda x: x.T + 1),
    LayoutCase(
        "x[:, ::2] + 1",
        lambda n: [square(n)],
        lambda lib, x: x[:, ::2] + 1,
        lambda x: x[:, ::2] + 1,
    ),
    LayoutCase(
        "sum(x, axis=0)",
        lambda n: [square(n)],
        lambda lib, x: _sum(lib, x, 0),
        lambda x: x.sum(axis=0, dtype=np.float64),
    ),
    LayoutCase(
        "sum(x, axis=1)",
        lambda n: [square(n)],
        lambda lib, x: _sum(lib, x, 1),
        lambda x: x.sum(axis=1, dtype=np.float64),
    ),
    LayoutCase(
        "sum(x, axis=1), 8 columns",
        narrow,
        lambda lib, x: _sum(lib, x, 1),
        lambda x: x.sum(axis=1, dtype=np.float64),
    ),
]


def moved_bytes(case: LayoutCase, data: list[np.ndarray]) -> int:
    """What the case must read and write at least: every input once, the result once."""
    out = case.numpy(*data)
    return sum(a.nbytes for a in data) + out.size * 4


def cupy_case(case: LayoutCase, data: list[np.ndarray], bench: Any) -> Outcome:
    """The same expression in CuPy."""
    cp = bench.cupy
    xs = [cp.asarray(a) for a in data]
    return bench.time(lambda: case.expr(cp, *xs), bench.cupy_sync)


def torch_case(case: LayoutCase, data: list[np.ndarray], bench: Any) -> Outcome:
    """The same expression in PyTorch (eager)."""
    torch = bench.torch
    xs = [torch.from_numpy(a).cuda() for a in data]
    return bench.time(lambda: case.expr(torch, *xs), bench.torch_sync)
