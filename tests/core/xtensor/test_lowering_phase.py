"""The ``lower_xtensor`` phase: where it sits, what selects it, and that it runs in every
mode (PyMC selects it with ``optdb.query("+lower_xtensor")``)."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
from opweave.compile import optdb
from opweave.graph.fg import FunctionGraph
from opweave.xtensor.basic import Rename, rename
from opweave.xtensor.rewriting.plugin import LOWERING_MODULES
from opweave.xtensor.type import xtensor


def test_the_phase_runs_early_in_every_mode() -> None:
    assert optdb.position("lower_xtensor") == 0.09
    assert {"fast_run", "fast_compile", "minimum_compile"} <= optdb.tags("lower_xtensor")
    assert optdb.position("lower_xtensor") < optdb.position("canonicalize")


def test_every_lowering_module_lists_its_rewriters() -> None:
    for module in LOWERING_MODULES:
        assert isinstance(module.LOWERINGS, tuple), module.__name__
    names = list(optdb["lower_xtensor"])
    assert "useless_rename" in names and "useless_tensor_from_xtensor" in names


def test_optdb_query_of_the_phase_tag_runs_its_rewrites() -> None:
    x = xtensor("x", dims=("a", "b"))
    fgraph = FunctionGraph([x], [rename(rename(x, a="c"), c="e")], clone=False)
    optdb.query("+lower_xtensor").rewrite(fgraph)
    [node] = fgraph.toposort()
    assert isinstance(node.op, Rename) and node.op.new_dims == ("e", "b")


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_compiled_functions_lower_in_each_mode(mode: str) -> None:
    x = xtensor("x", dims=("a", "b"))
    f = opweave.function([x], rename(rename(x, a="c"), c="e"), mode=mode)
    assert sum(isinstance(n.op, Rename) for n in f.maker.fgraph.toposort()) <= 1
    np.testing.assert_array_equal(f(np.eye(3)), np.eye(3))
