"""A function compiled for the ``jax`` linker runs no in-place rewrites, whatever its mode
includes: XLA reuses buffers itself, and in-place nodes made each call copy the shared
values the device holds and send them to the device again."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")

import opweave
import opweave.tensor as pt
from opweave.compile.aliasing import destroyed_inputs


def _sgd_step(linker: str) -> tuple[object, object]:
    w = opweave.shared(np.linspace(-1.0, 1.0, 12).reshape(3, 4), name="w")
    x = pt.matrix("x")
    loss = (pt.tanh(x @ w) ** 2).mean()
    (g,) = opweave.grad(loss, [w])
    fn = opweave.function([x], loss, updates=[(w, w - 0.1 * g)], mode=opweave.Mode(linker=linker))
    return fn, w


def test_the_jax_linker_excludes_inplace_rewrites() -> None:
    fn, _ = _sgd_step("jax")
    assert destroyed_inputs(fn.maker.fgraph) == []
    assert not any(getattr(n.op, "destroy_map", None) for n in fn.maker.fgraph.toposort())
    cvm, _ = _sgd_step("cvm")
    assert destroyed_inputs(cvm.maker.fgraph) != []  # the exclusion is the linker's own


def test_shared_values_stay_on_the_device_between_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    import jax

    fn, w = _sgd_step("jax")
    x = np.ones((2, 3))
    fn(x)
    uploads: list[object] = []
    real_put = jax.device_put

    def counting_put(*args: object, **kwargs: object) -> object:
        uploads.append(args[0])
        return real_put(*args, **kwargs)

    monkeypatch.setattr(jax, "device_put", counting_put)
    fn(x)
    fn(x)
    assert uploads == []  # the updated value was kept on the device, not sent again
    (mirror,) = [m for m in fn.fn.mirrors if m is not None]
    assert mirror.host is w.get_value(borrow=True)


def test_values_equal_the_py_linker_over_several_steps() -> None:
    fn_jax, w_jax = _sgd_step("jax")
    fn_py, w_py = _sgd_step("py")
    x = np.arange(6.0).reshape(2, 3) / 6
    for _ in range(3):
        np.testing.assert_allclose(fn_jax(x), fn_py(x), rtol=1e-13)
    np.testing.assert_allclose(w_jax.get_value(), w_py.get_value(), rtol=1e-13)
