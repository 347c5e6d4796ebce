"""The benchmark workloads, written once: their input data and their math.

The expressions take the elementwise functions they need as arguments, so the same code
builds the NumPy reference, the opweave graph and the PyTensor graph. NumPy only: the
PyTensor helper imports this module from the PyTensor venv.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

CHAIN_LENGTH = 200
CHAIN_N = 10**4
MLP_BATCH, MLP_IN, MLP_HIDDEN, MLP_OUT = 256, 784, 256, 10
LEARNING_RATE = 0.01


def python_overhead(x: float, y: float, z: float) -> float:
    """The tutorial's ``(x + y) * z`` as a plain Python function: the call-overhead reference."""
    return (x + y) * z


def fused(exp: Callable[[Any], Any], x: Any, y: Any, z: Any) -> Any:
    """``exp(x) * y + z``."""
    return exp(x) * y + z


def fused_inputs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three float64 vectors of length ``n``."""
    rng = np.random.default_rng(0)
    return rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)


def sum_squares_input(n: int) -> np.ndarray:
    """One float64 vector of length ``n``."""
    return np.random.default_rng(1).normal(size=n)


def chain(tanh: Callable[[Any], Any], x: Any) -> Any:
    """``CHAIN_LENGTH`` elementwise Ops: ``tanh``, ``* 1.5``, ``+ 0.1``, ``- 0.05``, repeated."""
    steps = (tanh, lambda v: v * 1.5, lambda v: v + 0.1, lambda v: v - 0.05)
    for k in range(CHAIN_LENGTH):
        x = steps[k % len(steps)](x)
    return x


def chain_input(n: int = CHAIN_N) -> np.ndarray:
    """The chain's float64 input vector."""
    return np.random.default_rng(2).normal(size=n)


@dataclass
class MLPData:
    """A batch, its one-hot labels and initial parameters of a 784-256-10 network."""

    x: np.ndarray
    onehot: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    def params(self) -> list[np.ndarray]:
        """Fresh copies of ``[w1, b1, w2, b2]``."""
        return [p.copy() for p in (self.w1, self.b1, self.w2, self.b2)]


def mlp_data() -> MLPData:
    """The MLP case's data (always the same)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(MLP_BATCH, MLP_IN))
    onehot = np.eye(MLP_OUT)[rng.integers(0, MLP_OUT, size=MLP_BATCH)]
    w1 = rng.normal(scale=0.05, size=(MLP_IN, MLP_HIDDEN))
    w2 = rng.normal(scale=0.05, size=(MLP_HIDDEN, MLP_OUT))
    return MLPData(x, onehot, w1, np.zeros(MLP_HIDDEN), w2, np.zeros(MLP_OUT))


def numpy_mlp_step(data: MLPData) -> Callable[[np.ndarray, np.ndarray], float]:
    """A hand-written NumPy SGD step ``step(x, onehot) -> loss`` updating its own weights.

    Forward: ``tanh(x @ w1 + b1) @ w2 + b2``, log-softmax, mean cross-entropy; backward
    by hand; plain SGD with ``LEARNING_RATE``.
    """
    w1, b1, w2, b2 = data.params()

    def step(x: np.ndarray, onehot: np.ndarray) -> float:
        nonlocal w1, b1, w2, b2
        h = np.tanh(x @ w1 + b1)
        z = h @ w2 + b2
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss = -np.mean(np.sum(onehot * logp, axis=1))
        dz = (np.exp(logp) - onehot) / x.shape[0]
        gw2, gb2 = h.T @ dz, dz.sum(axis=0)
        da1 = (dz @ w2.T) * (1 - h**2)
        gw1, gb1 = x.T @ da1, da1.sum(axis=0)
        lr = LEARNING_RATE
        w1, b1, w2, b2 = w1 - lr * gw1, b1 - lr * gb1, w2 - lr * gw2, b2 - lr * gb2
        return float(loss)

    return step


#: Length of the input vector of the compile-scaling workload.
BLOCKS_VECTOR_N = 10


def block_constant(i: int) -> float:
    """The constant of block ``i`` of the compile-scaling workload: ``1.0 + i / 1000.0``."""
    return 1.0 + i / 1000.0


def blocks(tanh: Callable[[Any], Any], mean: Callable[[Any], Any], x: Any, n: int) -> Any:
    """``n`` blocks ``e = tanh(e * c_i + 0.1) + mean(e) * 0.01`` starting from ``e = x``.

    Every block has its own constant ``c_i`` (:func:`block_constant`), so no two blocks
    are alike and a compiler cannot merge them: the graph grows with ``n``.
    """
    e = x
    for i in range(n):
        e = tanh(e * block_constant(i) + 0.1) + mean(e) * 0.01
    return e


def blocks_input() -> np.ndarray:
    """The compile-scaling workload's float64 input vector (``BLOCKS_VECTOR_N`` elements)."""
    return np.random.default_rng(4).normal(size=BLOCKS_VECTOR_N)
