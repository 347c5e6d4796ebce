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


def mlp_data(dtype: str = "float64") -> MLPData:
    """The MLP case's data (always the same), every array of ``dtype`` (the float32
    case rounds the float64 one)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(MLP_BATCH, MLP_IN))
    onehot = np.eye(MLP_OUT)[rng.integers(0, MLP_OUT, size=MLP_BATCH)]
    w1 = rng.normal(scale=0.05, size=(MLP_IN, MLP_HIDDEN))
    w2 = rng.normal(scale=0.05, size=(MLP_HIDDEN, MLP_OUT))
    arrays = (x, onehot, w1, np.zeros(MLP_HIDDEN), w2, np.zeros(MLP_OUT))
    return MLPData(*(a.astype(dtype) for a in arrays))


def mlp_loss(
    log_softmax: Callable[..., Any], lib: Any, x: Any, t: Any, w1: Any, b1: Any, w2: Any, b2: Any
) -> Any:
    """The MLP's mean cross-entropy: ``tanh(x @ w1 + b1) @ w2 + b2``, ``log_softmax`` over
    the last axis, against the one-hot labels ``t``; ``lib`` is the array library
    (``opweave.tensor``, ``pytensor.tensor``, ``jax.numpy``: its ``tanh``, ``dot``, ``sum``
    and ``mean``)."""
    h = lib.tanh(lib.dot(x, w1) + b1)
    return -lib.mean(lib.sum(t * log_softmax(lib.dot(h, w2) + b2, axis=-1), axis=1))


def compare_mlp_loss(got: Any, expected: float, dtype: str) -> str | None:
    """``None`` when the loss ``got`` of a first SGD step is of ``dtype`` and close to the
    hand-written step's ``expected`` one (``rtol`` 1e-4 in float32, 1e-9 in float64),
    else a short ``wrong result: ...``."""
    value = np.asarray(got)
    if value.dtype != np.dtype(dtype):
        return f"wrong result: the loss is {value.dtype}, expected {dtype}"
    rtol = 1e-4 if value.dtype.itemsize < 8 else 1e-9
    if not np.isclose(float(value), expected, rtol=rtol, atol=0.0):
        return f"wrong result: loss {float(value):.8g}, expected {expected:.8g}"
    return None


def numpy_mlp_step(data: MLPData) -> Callable[[np.ndarray, np.ndarray], float]:
    """A hand-written NumPy SGD step ``step(x, onehot) -> loss`` updating its own weights.

    Forward: ``tanh(x @ w1 + b1) @ w2 + b2``, log-softmax, mean cross-entropy; backward
    by hand; plain SGD with ``LEARNING_RATE``. Computes in the dtype of ``data``.
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


#: The RNN case: sequence length, batch, input size and hidden size.
RNN_STEPS, RNN_BATCH, RNN_IN, RNN_HIDDEN = 100, 32, 128, 128


@dataclass
class RNNData:
    """The RNN case's inputs: ``x`` (steps, batch, in), the weights, the bias and ``h0``."""

    x: np.ndarray
    w_x: np.ndarray
    w_h: np.ndarray
    b: np.ndarray
    h0: np.ndarray

    def args(self) -> tuple[np.ndarray, ...]:
        """``(x, w_x, w_h, b, h0)``: the arguments of every implementation of the case."""
        return self.x, self.w_x, self.w_h, self.b, self.h0


def rnn_data() -> RNNData:
    """The RNN case's data (always the same); weights small enough that ``tanh`` does not
    saturate, so the gradients are far from zero."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(RNN_STEPS, RNN_BATCH, RNN_IN))
    w_x = rng.normal(scale=0.5 / np.sqrt(RNN_IN), size=(RNN_IN, RNN_HIDDEN))
    w_h = rng.normal(scale=0.5 / np.sqrt(RNN_HIDDEN), size=(RNN_HIDDEN, RNN_HIDDEN))
    b = rng.normal(scale=0.1, size=RNN_HIDDEN)
    h0 = rng.normal(scale=0.1, size=(RNN_BATCH, RNN_HIDDEN))
    return RNNData(x, w_x, w_h, b, h0)


def rnn_cell(
    tanh: Callable[[Any], Any],
    dot: Callable[[Any, Any], Any],
    x_t: Any,
    h: Any,
    w_x: Any,
    w_h: Any,
    b: Any,
) -> Any:
    """One step of the tanh RNN: ``tanh(x_t @ w_x + h @ w_h + b)``."""
    return tanh(dot(x_t, w_x) + dot(h, w_h) + b)


def rnn_loss(total: Callable[[Any], Any], hs: Any) -> Any:
    """The case's loss from the stacked states ``hs`` (steps, batch, hidden), ``h0``
    excluded: the mean over the steps of ``sum(h_t ** 2)``, i.e. ``sum(hs ** 2) / steps``."""
    return total(hs**2) / RNN_STEPS


def numpy_rnn(
    x: np.ndarray, w_x: np.ndarray, w_h: np.ndarray, b: np.ndarray, h0: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """The loss and its gradients ``(loss, g_w_x, g_w_h, g_b)``, by hand: a forward loop
    keeping every state, then backpropagation through time, one step at a time.

    With ``a_t = x_t @ w_x + h_{t-1} @ w_h + b`` and ``h_t = tanh(a_t)``, going backwards
    from ``dh = 0``: ``da = (dh + 2 h_t / steps) * (1 - h_t ** 2)``; ``g_w_x += x_t.T @ da``,
    ``g_w_h += h_{t-1}.T @ da``, ``g_b += sum(da, axis=0)``; ``dh = da @ w_h.T``.
    """
    steps = x.shape[0]
    hs = [h0]
    for t in range(steps):
        hs.append(np.tanh(x[t] @ w_x + hs[-1] @ w_h + b))
    loss = sum(float(np.vdot(h, h)) for h in hs[1:]) / steps
    g_w_x, g_w_h, g_b = np.zeros_like(w_x), np.zeros_like(w_h), np.zeros_like(b)
    dh = np.zeros_like(h0)
    scale = 2.0 / steps
    for t in range(steps - 1, -1, -1):
        h = hs[t + 1]
        da = (dh + scale * h) * (1.0 - h * h)
        g_w_x += x[t].T @ da
        g_w_h += hs[t].T @ da
        g_b += da.sum(axis=0)
        dh = da @ w_h.T
    return loss, g_w_x, g_w_h, g_b


def rnn_loss_only(
    x: np.ndarray, w_x: np.ndarray, w_h: np.ndarray, b: np.ndarray, h0: np.ndarray
) -> float:
    """The case's loss alone, by a NumPy forward loop (for finite differences)."""
    h, total = h0, 0.0
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ w_x + h @ w_h + b)
        total += float(np.vdot(h, h))
    return total / x.shape[0]


def check_rnn_by_finite_differences(data: RNNData, directions: int = 3, eps: float = 1e-5) -> None:
    """Check :func:`numpy_rnn`'s hand-written backward against central differences of the
    loss along random directions of ``(w_x, w_h, b)``.

    Raises
    ------
    AssertionError
        When a directional derivative disagrees (relative error above ``1e-6``).
    """
    _, *grads = numpy_rnn(*data.args())
    params = (data.w_x, data.w_h, data.b)
    rng = np.random.default_rng(6)
    for k in range(directions):
        dirs = [rng.normal(size=p.shape) for p in params]

        def at(sign: float, dirs: list[np.ndarray] = dirs) -> float:
            moved = [p + sign * eps * d for p, d in zip(params, dirs, strict=True)]
            return rnn_loss_only(data.x, *moved, data.h0)

        numeric = (at(1.0) - at(-1.0)) / (2 * eps)
        analytic = sum(float(np.vdot(g, d)) for g, d in zip(grads, dirs, strict=True))
        if abs(numeric - analytic) > 1e-6 * max(abs(numeric), 1.0):
            raise AssertionError(
                f"RNN reference: the hand-written gradient gives {analytic!r} along random "
                f"direction {k}, finite differences of the loss give {numeric!r}"
            )


def compare_rnn(got: Any, expected: tuple[Any, ...]) -> str | None:
    """``None`` when ``got`` (loss, g_w_x, g_w_h, g_b) matches ``expected`` (allclose,
    ``rtol=1e-7``), else a short ``wrong result: ...`` naming the first output that does not."""
    names = ("loss", "g_w_x", "g_w_h", "g_b")
    if len(got) != len(expected):
        return f"wrong result: {len(got)} outputs, expected {len(expected)}"
    for name, value, want in zip(names, got, expected, strict=True):
        value, want = np.asarray(value), np.asarray(want)
        if value.shape != want.shape:
            return f"wrong result: {name} has shape {value.shape}, expected {want.shape}"
        if not np.allclose(value, want, rtol=1e-7, atol=1e-10):
            error = np.max(np.abs(value - want))
            return f"wrong result: {name} off by up to {error:.3g}"
    return None
