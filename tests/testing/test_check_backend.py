"""``check_backend`` on every installed CPU linker, and on a linker that gets one Op wrong."""

from __future__ import annotations

import pytest

from opweave.link.loop import LoopLinker
from opweave.tensor.reductions import Max
from opweave.testing import STANDARD_GRAPHS, ContractViolation, check_backend, usable_linkers


class _OffByOneMax(LoopLinker):
    """A Python linker whose ``Max`` results come out one too large."""

    name = "off_by_one_max"
    impls = ("py",)

    def make_thunks(self, order, storage_map, compute_map):
        thunks = super().make_thunks(order, storage_map, compute_map)
        return [
            self._perturbed(t, storage_map[n.outputs[0]]) if isinstance(n.op, Max) else t
            for n, t in zip(order, thunks, strict=True)
        ]

    @staticmethod
    def _perturbed(thunk, cell):
        def run():
            thunk()
            cell[0] = cell[0] + 1

        run.lazy = False
        return run


def test_the_python_linkers_match_py() -> None:
    report = check_backend("vm")
    assert report.checked == [f"graph_{name}" for name in STANDARD_GRAPHS]


@pytest.mark.parametrize("linker", ["c", "cvm"])
def test_the_c_linkers_match_py(linker: str) -> None:
    if linker not in usable_linkers():
        pytest.skip(f"{linker} is not usable here")
    report = check_backend(linker)
    assert {"graph_elemwise_float32", "graph_reductions", "graph_gradient"} <= set(report.checked)
    if linker == "c":  # c compiles whole graphs: it declines those with Python-only Ops
        assert set(report.skipped) == {"graph_random", "graph_ifelse"}
    else:
        assert not report.skipped


def test_a_linker_with_one_wrong_op_is_reported() -> None:
    with pytest.raises(ContractViolation) as info:
        check_backend(_OffByOneMax())
    message = str(info.value)
    assert info.value.rule == "backend_values"
    assert "1 of 13 conformance graphs differ from linker 'py'" in message
    assert "reductions: call 0, output 2" in message
    assert "a backend computes what the reference linker computes" in message


def test_only_selects_graphs() -> None:
    assert check_backend("py", only=["dot"]).checked == ["graph_dot"]
    with pytest.raises(ValueError, match=r"unknown conformance graphs \['nope'\]"):
        check_backend("py", only=["nope"])


def test_the_jax_linker_matches_py_its_own_draws_compared_as_draws() -> None:
    if "jax" not in usable_linkers():
        pytest.skip("opweave-jax is not installed")
    report = check_backend("jax")
    assert report.checked == [f"graph_{name}" for name in STANDARD_GRAPHS]
    assert not report.skipped


class _RepeatingDraws(LoopLinker):
    """A Python linker that claims another generator and draws the same numbers each call
    (it drops the random generators' updates)."""

    name = "repeating_draws"
    impls = ("py",)
    random_generator = "other"

    def make_thunks(self, order, storage_map, compute_map):
        thunks = super().make_thunks(order, storage_map, compute_map)
        firsts = {}

        def frozen(thunk, cell, key):
            def run():
                thunk()
                firsts.setdefault(key, cell[0])
                cell[0] = firsts[key]

            run.lazy = False
            return run

        return [
            frozen(t, storage_map[n.outputs[1]], k) if "RV" in type(n.op).__name__ else t
            for k, (n, t) in enumerate(zip(order, thunks, strict=True))
        ]


def test_draws_that_never_change_are_reported_for_another_generator() -> None:
    with pytest.raises(ContractViolation) as info:
        check_backend(_RepeatingDraws(), only=["random"])
    assert "the same draws at every call, where the reference's change" in str(info.value)
