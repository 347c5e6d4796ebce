"""The ``jax`` linker itself: the mode and linker names, the resolver route, refusals,
argument checks, shared variables, checks, gradients and a small training step."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.mode import get_mode
from opweave.graph.utils import NoImplementationError
from opweave.link.resolver import implementation_for
from opweave.plugins.manager import get_plugin_manager
from opweave.raise_op import Assert
from opweave.tensor.extra_ops import Unique
from opweave_jax.linker import JAXLinker

from .conftest import assert_same, compile_both


def test_jax_mode_and_linker_name_compile_with_the_jax_linker() -> None:
    mode = get_mode("JAX")
    assert mode is get_mode("jax") and mode.linker == "jax"
    x = pt.dvector("x")
    for m in (mode, "JAX", opweave.Mode(linker="jax")):
        f = opweave.function([x], x * 2, mode=m)
        assert isinstance(f.maker.linker, JAXLinker)
        np.testing.assert_array_equal(f(np.arange(3.0)), [0.0, 2.0, 4.0])


def test_jax_mode_leaves_out_fusion_and_in_place_rewrites() -> None:
    excluded = set(get_mode("JAX").optimizer.exclude)
    assert {"inplace", "fusion", "cxx_only", "BlasOpt"} <= excluded


def test_backend_info_reports_jax() -> None:
    import jax

    infos = [
        i for i in get_plugin_manager().hook.opweave_backend_info() if i["name"] == "opweave-jax"
    ]
    assert len(infos) == 1
    info = infos[0]
    assert info["available"] and info["linkers"] == ["jax"]
    assert info["versions"]["jax"] == jax.__version__
    listed = info.get("hardware", info.get("devices"))
    assert str(jax.devices()[0]) in (listed() if callable(listed) else listed)


def test_lowerings_come_from_the_resolver() -> None:
    x = pt.dvector("x")
    node = pt.exp(x).owner
    found = implementation_for(node, "jax")
    assert (found.what, found.origin, found.source) == ("kernel", "table", "opweave-jax")
    assert callable(found.implementation)


def test_an_op_without_lowering_is_refused_naming_it_and_the_backend() -> None:
    x = pt.dvector("x")
    op = Unique()
    with pytest.raises(NoImplementationError, match=rf"implements {op}.*for backend 'jax'"):
        opweave.function([x], op(x), mode="JAX")


def test_a_bad_argument_is_a_type_error_naming_the_input() -> None:
    x = pt.dvector("x")
    f = opweave.function([x], x + 1, mode="JAX")
    with pytest.raises(TypeError, match=r"'x'.*TensorType\(float64"):
        f(np.ones((2, 2)))
    with pytest.raises(TypeError, match="'x'"):
        f(["a"])


def test_outputs_are_writable_numpy_arrays_of_the_graph_dtypes() -> None:
    x = pt.fmatrix("x")
    f = opweave.function([x], [x.sum(axis=0), x.argmax(), pt.cast(x, "int64")], mode="JAX")
    outs = f(np.ones((2, 3), dtype="float32"))
    assert [o.dtype for o in outs] == [np.float32, np.int64, np.int64]
    for out in outs:
        assert isinstance(out, np.ndarray) and out.flags.writeable


def test_shared_variables_and_updates_by_value() -> None:
    w = opweave.shared(np.zeros(3), name="w")
    x = pt.dvector("x")
    f = opweave.function([x], w.sum(), updates=[(w, w + x)], mode="JAX")
    assert f(np.ones(3)) == 0.0
    assert f(np.ones(3)) == 3.0
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0, 2.0])
    assert isinstance(w.get_value(), np.ndarray)


def test_check_and_raise_static_and_deferred() -> None:
    x = pt.dvector("x")
    checked = Assert("x must be positive")(x, pt.all(x > 0))
    f = opweave.function([x], checked * 2, mode="JAX")
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    with pytest.raises(AssertionError, match="x must be positive"):
        f(-np.ones(2))
    shape_checked = Assert("need 3 values")(x, pt.eq(x.shape[0], 3))
    g = opweave.function([x], shape_checked + 1, mode=opweave.Mode(linker="jax", optimizer=None))
    np.testing.assert_array_equal(g(np.zeros(3)), [1.0, 1.0, 1.0])
    with pytest.raises(AssertionError, match="need 3 values"):
        g(np.zeros(2))


def _normal_logp(
    mu: pt.TensorVariable, log_sigma: pt.TensorVariable, y: pt.TensorVariable
) -> pt.TensorVariable:
    sigma = pt.exp(log_sigma)
    return pt.sum(-0.5 * ((y - mu) / sigma) ** 2 - log_sigma - 0.5 * np.log(2 * np.pi))


def test_gradient_of_a_logp_equals_py() -> None:
    mu, log_sigma, y = pt.dscalar("mu"), pt.dscalar("log_sigma"), pt.dvector("y")
    logp = _normal_logp(mu, log_sigma, y)
    grads = opweave.grad(logp, [mu, log_sigma])
    f, g = compile_both([mu, log_sigma, y], [logp, *grads])
    args = (np.float64(0.3), np.float64(-0.2), np.linspace(-2, 2, 11))
    for got, want in zip(f(*args), g(*args), strict=True):
        assert_same(got, want, 1e-14, "logp and its gradient")


def test_two_layer_mlp_training_step_equals_py() -> None:
    rng = np.random.default_rng(42)
    X, Y = pt.dmatrix("X"), pt.dvector("Y")
    params = {
        "w1": rng.normal(size=(4, 8)) * 0.5,
        "b1": np.zeros(8),
        "w2": rng.normal(size=8) * 0.5,
        "b2": np.zeros(()),
    }

    def step(mode: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
        shared = {k: opweave.shared(v.copy(), name=k) for k, v in params.items()}
        hidden = pt.tanh(X @ shared["w1"] + shared["b1"])
        pred = pt.sigmoid(hidden @ shared["w2"] + shared["b2"])
        loss = -pt.mean(Y * pt.log(pred) + (1 - Y) * pt.log1p(-pred))
        grads = opweave.grad(loss, list(shared.values()))
        updates = [(p, p - 0.1 * g) for p, g in zip(shared.values(), grads, strict=True)]
        f = opweave.function([X, Y], loss, updates=updates, mode=opweave.Mode(linker=mode))
        xs, ys = rng_data()
        losses = [f(xs, ys) for _ in range(3)]
        return losses, [p.get_value() for p in shared.values()]

    def rng_data() -> tuple[np.ndarray, np.ndarray]:
        data = np.random.default_rng(7)
        xs = data.normal(size=(16, 4))
        return xs, (xs[:, 0] > 0).astype("float64")

    jax_losses, jax_params = step("jax")
    py_losses, py_params = step("py")
    assert jax_losses[2] < jax_losses[0]
    for got, want in zip(jax_losses + jax_params, py_losses + py_params, strict=True):
        assert_same(got, want, 1e-12, "mlp")


def test_scalar_graphs_and_pass_through_outputs_match_py() -> None:
    import opweave.scalar as ps

    a, b = ps.float64("a"), ps.float64("b")
    f, g = compile_both([a, b], [ps.add(a, ps.exp(b)), a])
    for got, want in zip(f(1.5, -0.0), g(1.5, -0.0), strict=True):
        assert type(got) is type(want)
        assert_same(got, want, 0.0, "scalar graph")
    x = pt.dvector("x")
    h = opweave.function([x], [x, pt.constant(np.arange(3.0))], mode="JAX")
    value = np.ones(2)
    out, const = h(value)
    np.testing.assert_array_equal(out, value)
    assert out is not value
    np.testing.assert_array_equal(const, [0.0, 1.0, 2.0])
    assert h.maker.node_impls and set(h.maker.node_impls.values()) == {"jax"}


def test_the_jax_device_flag_places_the_function_and_its_shared_values() -> None:
    import jax

    assert opweave.config.jax__device == ""
    cpu = jax.devices("cpu")[0]
    w = opweave.shared(np.arange(3.0), name="w")
    x = pt.dvector("x")
    with opweave.config.change_flags(jax__device="cpu"):
        f = opweave.function([x], x * w, mode="JAX")
    assert f.maker.linker.device == cpu
    np.testing.assert_array_equal(f(np.full(3, 2.0)), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(f(np.full(3, 3.0)), [0.0, 3.0, 6.0])
    (mirror,) = [m for m in f.fn.mirrors if m is not None]
    assert mirror.value.devices() == {cpu}
    with opweave.config.change_flags(jax__device="cpu:0"):
        g = opweave.function([x], x + 1, mode="JAX")
    assert g.maker.linker.device == cpu
    h = opweave.function([x], x + 1, mode="JAX")
    default = None if opweave.config.device == "cpu" else h.maker.linker.device
    assert h.maker.linker.device == default


@pytest.mark.parametrize("spec", ["cpu:99", "abacus", "cpu:x"])
def test_an_unknown_jax_device_is_a_value_error_naming_the_flag_and_the_devices(
    spec: str,
) -> None:
    import jax

    x = pt.dvector("x")
    first = f"{jax.devices()[0].platform}:0"
    with (
        opweave.config.change_flags(jax__device=spec),
        pytest.raises(ValueError, match=rf"jax__device='{spec}'.*{first}"),
    ):
        opweave.function([x], x + 1, mode="JAX")


def test_the_core_device_flag_picks_the_jax_gpu_when_there_is_one() -> None:
    import jax

    from opweave_jax.options import jax_device

    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    assert jax_device("", "cuda") == (gpus[0] if gpus else None)
    assert jax_device("", "cuda1") == (gpus[1] if len(gpus) > 1 else None)
    assert jax_device("", "cpu") is None
    assert jax_device("cpu", "cuda") == jax.devices("cpu")[0]
    if not gpus:
        with pytest.raises(ValueError, match="jax__device='gpu'"):
            jax_device("gpu", "cpu")


def test_a_type_the_jax_linker_does_not_pass_is_refused() -> None:
    from opweave.graph.type import generic

    g = generic("g")
    with pytest.raises(
        NoImplementationError,
        match=r"passes tensors \(named-dimension ones too\), scalars and random generators",
    ):
        opweave.function([g], g, mode="JAX")
