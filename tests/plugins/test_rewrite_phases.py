"""Registering a plugin's rewrite into a phase: one call, and it runs in that phase."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.graph.rewriting import build_rewrite_database, node_rewriter
from opweave.plugins import PluginWarning, get_plugin_manager, hookimpl
from opweave.tensor.elemwise import Elemwise

#: What the graph held each time the rewrite below fired.
SEEN: list[list[str]] = []


@node_rewriter([Elemwise])
def pow_to_mul(fgraph: Any, node: Any) -> list[Any] | None:
    """``b ** e -> b * b`` (the test only raises to the power 2), noting the graph."""
    if not isinstance(node.op.scalar_op, ps.Pow):
        return None
    SEEN.append([str(n.op) for n in fgraph.toposort()])
    return [node.inputs[0] * node.inputs[0]]


class CanonicalizePlugin:
    """Registers :func:`pow_to_mul` into ``canonicalize``, as the docs show."""

    @hookimpl
    def opweave_rewrites(self, db: Any) -> None:
        db["canonicalize"].register("pow_to_mul", pow_to_mul, "fast_run", "mine")


def compiled_ops(**mode: Any) -> tuple[list[str], Any]:
    """The ops of ``exp(x) ** 2 + x`` after FAST_RUN (fusion off, to see the nodes)."""
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x) ** 2 + x, mode=Mode(linker="py").excluding("fusion"))
    return [str(n.op) for n in f.maker.fgraph.toposort()], f


def test_a_canonicalize_rewrite_runs_before_specialize_and_inplace() -> None:
    SEEN.clear()
    get_plugin_manager().register(CanonicalizePlugin())
    ops, f = compiled_ops()
    # Specialize would have made ``sqr`` of the power, had it run first.
    assert SEEN == [["Exp", "Pow", "Add"]]
    assert ops == ["Exp", "Mul", "Add"]
    # ... and inplace ran after it: the add writes into the product the rewrite made.
    add = f.maker.fgraph.toposort()[-1]
    assert add.op.destroy_map == {0: [0]} and str(add.inputs[0].owner.op) == "Mul"
    assert np.allclose(f(np.array([0.0, 1.0])), np.exp([0.0, 2.0]) + np.array([0.0, 1.0]))


def test_without_the_plugin_specialize_takes_the_power() -> None:
    ops, _ = compiled_ops()
    assert ops == ["Exp", "Sqr", "Add"]


def test_the_plugin_tag_turns_it_off() -> None:
    get_plugin_manager().register(CanonicalizePlugin())
    x = ot.dvector("x")
    mode = Mode(linker="py").excluding("fusion", "mine")
    f = opweave.function([x], ot.exp(x) ** 2, mode=mode)
    assert [str(n.op) for n in f.maker.fgraph.toposort()] == [
        "Exp",
        "Sqr",
    ]


def test_a_phase_name_as_a_top_level_tag_is_refused_with_the_right_call() -> None:
    db = build_rewrite_database()
    with pytest.raises(ValueError) as info:
        db.register("pow_to_mul", pow_to_mul, "canonicalize", "fast_run")
    message = str(info.value)
    assert "the tag 'canonicalize' names a phase" in message
    assert "db['canonicalize'].register('pow_to_mul', rewriter, 'fast_run')" in message
    assert "pow_to_mul" not in db and "pow_to_mul" not in db["canonicalize"]


def test_the_refusal_reaches_the_plugin_author_at_compile_time() -> None:
    class Wrong:
        @hookimpl
        def opweave_rewrites(self, db: Any) -> None:
            db.register("pow_to_mul", pow_to_mul, "specialize")

    get_plugin_manager().register(Wrong(), name="wrong")
    x = ot.dvector("x")
    with pytest.warns(PluginWarning, match=r"'wrong' failed in hook opweave_rewrites") as info:
        f = opweave.function([x], ot.exp(x) ** 2, mode=Mode(linker="py").excluding("fusion"))
    message = next(str(w.message) for w in info if issubclass(w.category, PluginWarning))
    assert "db['specialize'].register('pow_to_mul', rewriter, 'fast_run')" in message
    assert "Mul" not in [str(n.op) for n in f.maker.fgraph.toposort()]


def test_a_positioned_entry_may_carry_a_phase_tag() -> None:
    db = build_rewrite_database()
    db.register("late_inplace", pow_to_mul, "fast_run", "inplace", position=60)
    assert db.position("late_inplace") == 60
    assert db.phases() == ["lower_xtensor", "canonicalize", "stabilize", "specialize", "inplace"]
    names = db.selected_names(db_query(exclude=["inplace"]))
    assert "late_inplace" not in names and "inplace" not in names and "canonicalize" in names


def db_query(exclude: list[str]) -> Any:
    """A FAST_RUN query excluding ``exclude``."""
    from opweave.graph.rewriting import RewriteDatabaseQuery

    return RewriteDatabaseQuery(include=["fast_run"], exclude=exclude)
