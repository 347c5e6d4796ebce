"""What PyMC's ``CustomDist`` needs from a random variable's signature, as PyTensor gives it.

``CustomDist.dist(mu, signature="(n)->(m)", random=...)`` builds a ``RandomVariable``
whose draws have a core dimension ``m`` that no parameter has. As in PyTensor, such an
Op cannot be applied unless it defines ``_supp_shape_from_params``: building the node
raises ``NotImplementedError`` saying that the signature is not sufficient to infer the
support shape (PyMC's ``test_multivariate_insufficient_signature``). opweave built the
node with an unknown core length and failed only later, where the draws' shape was
needed. Signatures that do determine the core shape keep working, and their draws are
NumPy's for the same generator on every linker (``py``, ``vm``, ``c``, ``cvm``; a random
variable has no C code, so ``c`` runs it where the backend allows and is skipped if not).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.tensor.random.op import RandomVariable
from opweave.tensor.random.utils import normalize_size_param

MU = np.array([0.5, -1.0, 2.0])
#: The linkers that run a random variable's ``rng_fn`` (jax draws with ``jax.random``).
LINKERS = [name for name in usable_linkers() if name in ("py", "vm", "c", "cvm")]


class _ShiftedNormal(RandomVariable):
    """``mu + N(0, 1)`` over a vector ``mu``: its core dimension is ``mu``'s."""

    name = "shifted_normal"
    signature = "(n)->(n)"
    dtype = "floatX"

    def rng_fn(self, rng: np.random.Generator, mu: np.ndarray, size: Any) -> np.ndarray:
        batch = mu.shape[:-1] if size is None else tuple(size)
        return mu + rng.normal(size=(*batch, mu.shape[-1]))


class _Undetermined(RandomVariable):
    """A signature whose output core dimension ``m`` no parameter has."""

    name = "undetermined"
    signature = "(n)->(m)"
    dtype = "floatX"


class _Pairs(RandomVariable):
    """``(n)->(m)`` with its own shape rule: ``m`` is twice ``n``."""

    name = "pairs"
    signature = "(n)->(m)"
    dtype = "floatX"

    def _supp_shape_from_params(self, dist_params: Any, param_shapes: Any = None) -> list[Any]:
        (mu,) = dist_params
        length = mu.shape[-1] if param_shapes is None else param_shapes[0][-1]
        return [2 * length]

    def rng_fn(self, rng: np.random.Generator, mu: np.ndarray, size: Any) -> np.ndarray:
        batch = mu.shape[:-1] if size is None else tuple(size)
        return np.concatenate([mu, mu], axis=-1) + rng.normal(size=(*batch, 2 * mu.shape[-1]))


def test_undetermined_core_dimension_raises_when_applied() -> None:
    with pytest.raises(
        NotImplementedError, match="signature is not sufficient to infer the support shape"
    ):
        _Undetermined()(MU)


def test_undetermined_core_dimension_raises_with_a_size() -> None:
    with pytest.raises(NotImplementedError, match="core dimension 'm' of the draws"):
        _Undetermined()(MU, size=(4,))


def test_undetermined_core_dimension_message_names_the_shape_rule() -> None:
    with pytest.raises(NotImplementedError, match="must define _supp_shape_from_params"):
        _Undetermined()._infer_shape(normalize_size_param(None), [ot.dvector()])


def test_own_shape_rule_is_used_for_the_static_shape() -> None:
    x = _Pairs()(MU)
    assert x.type.shape == (6,)
    assert _Pairs()(ot.dvector("mu")).type.shape == (None,)


def test_determined_core_dimension_keeps_its_static_shape() -> None:
    assert _ShiftedNormal()(MU).type.shape == (3,)
    assert _ShiftedNormal()(MU, size=(2,)).type.shape == (2, 3)


def _draws(rv: Any, linker: str) -> np.ndarray:
    rng = opweave.shared(np.random.default_rng(7))
    x = rv(MU, size=(2,), rng=rng)
    fn = opweave.function([], x, mode=Mode(linker=linker))
    return np.asarray(fn())


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    ("rv", "expected"),
    [
        (_ShiftedNormal(), lambda g: MU + g.normal(size=(2, 3))),
        (_Pairs(), lambda g: np.concatenate([MU, MU]) + g.normal(size=(2, 6))),
    ],
    ids=["shifted_normal", "pairs"],
)
def test_draws_match_numpy(linker: str, rv: Any, expected: Any) -> None:
    try:
        got = _draws(rv, linker)
    except NotImplementedError:
        if linker == "c":  # the whole-graph C linker has no C code for random variables
            pytest.skip("the c linker compiles no random variable")
        raise
    np.testing.assert_array_equal(got, expected(np.random.default_rng(7)))
