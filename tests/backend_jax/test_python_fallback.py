"""``config.jax__python_fallback``: a node without a jax lowering runs its Python kernel
through ``jax.pure_callback``, with a warning; without the flag it is refused."""

from __future__ import annotations

import numpy as np
import pytest
from host_ops import host_hypot

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode
from opweave.graph.utils import NoImplementationError
from opweave.tensor.extra_ops import unique

JAX = Mode(linker="jax")
VALUES = np.array([0.5, 1.0, 7.0, -3.0, 0.0, np.inf, np.nan])


def test_without_the_flag_a_node_without_lowering_is_refused_naming_it() -> None:
    x = pt.dvector("x")
    with pytest.raises(NoImplementationError, match=r"host_hypot.*'jax'"):
        opweave.function([x], host_hypot(2.0, x), mode=JAX)


@pytest.mark.parametrize("optimizer", [None, "fast_run"])
def test_with_the_flag_it_runs_the_python_kernel_with_a_warning(optimizer: str | None) -> None:
    x = pt.dvector("x")
    outputs = [pt.sqr(host_hypot(2.0, x)) * 2.0, host_hypot(x, 1.5).sum()]
    with opweave.config.change_flags(jax__python_fallback=True):
        with pytest.warns(
            RuntimeWarning, match=r"runs its Python kernel through jax.pure_callback"
        ):
            f = opweave.function([x], outputs, mode=Mode(linker="jax", optimizer=optimizer))
    g = opweave.function([x], outputs, mode=Mode(linker="py", optimizer=optimizer))
    for got, want in zip(f(VALUES), g(VALUES), strict=True):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


def test_inside_a_scan_body_too() -> None:
    x = pt.dvector("x")
    out, _ = opweave.scan(
        lambda v, acc: acc + host_hypot(1.0, v), sequences=[x], outputs_info=[pt.zeros(())]
    )
    with opweave.config.change_flags(jax__python_fallback=True):
        with pytest.warns(RuntimeWarning, match="pure_callback"):
            f = opweave.function([x], out, mode=JAX)
    g = opweave.function([x], out, mode=Mode(linker="py"))
    np.testing.assert_allclose(f(VALUES[:4]), g(VALUES[:4]), rtol=1e-15)


def test_output_shapes_that_depend_on_values_are_still_refused_saying_why() -> None:
    x = pt.dvector("x")
    with opweave.config.change_flags(jax__python_fallback=True):
        with pytest.raises(NoImplementationError, match="depend on its input values"):
            opweave.function([x], unique(x), mode=JAX)
