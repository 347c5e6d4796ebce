"""opweave-double as a plugin: found through its entry point, its Ops and rewrites at work."""

from __future__ import annotations

import pytest

import opweave
from opweave.compile import Mode
from opweave_double import add, div, double, mul, sub


def test_tutorial_graph_runs_on_every_python_linker() -> None:
    x, y, z = double("x"), double("y"), double("z")
    for linker in ("py", "vm"):
        f = opweave.function([x, y, z], mul(add(x, y), z), mode=Mode(linker=linker))
        assert f(1.0, 2.0, 3.0) == 9.0
    f = opweave.function([x, y], [sub(x, y), div(x, y)])
    assert f(3.0, 2.0) == [1.0, 1.5]


def test_plugin_registered_through_its_entry_point(plugin_manager) -> None:
    rec = next(r for r in plugin_manager.records if r.name == "double")
    assert rec.loaded and rec.value == "opweave_double.plugin"
    assert plugin_manager.has_plugin("double")


def test_fast_run_applies_the_plugin_rewrites() -> None:
    x, y = double("x"), double("y")
    expr = add(mul(add(x, 0.0), 1.0), y)
    fast = opweave.function([x, y], expr, mode="FAST_RUN")
    assert [str(n.op) for n in fast.maker.fgraph.toposort()] == ["add"]
    assert fast(2.0, 3.0) == 5.0
    slow = opweave.function([x, y], expr, mode="FAST_COMPILE")
    assert sorted(str(n.op) for n in slow.maker.fgraph.toposort()) == ["add", "add", "mul"]
    assert slow(2.0, 3.0) == 5.0


def test_rewrites_excluded_by_tag() -> None:
    x = double("x")
    mode = Mode(linker="vm", optimizer="fast_run").excluding("double")
    f = opweave.function([x], mul(x, 1.0), mode=mode)
    assert [str(n.op) for n in f.maker.fgraph.toposort()] == ["mul"]


def test_rewrite_to_an_input_still_returns_a_copy() -> None:
    x = double("x")
    f = opweave.function([x], mul(x, 1.0), mode="FAST_RUN")
    assert [str(n.op) for n in f.maker.fgraph.toposort()] == ["DeepCopyOp"]
    assert f(4.0) == 4.0


def test_without_the_plugin_loaded_no_rewrite_runs(bare_plugin_manager) -> None:
    import opweave_python.plugin

    bare_plugin_manager.register(opweave_python.plugin, name="python")
    x = double("x")
    f = opweave.function([x], mul(x, 1.0), mode="FAST_RUN")
    assert [str(n.op) for n in f.maker.fgraph.toposort()] == ["mul"]


def test_gradient_methods_of_the_tutorial_ops() -> None:
    x, y = double("x"), double("y")
    gz = double("gz")
    gx, _gy = mul.grad([x, y], [gz])
    assert gx.owner.op is mul and gx.owner.inputs == [gz, y]
    f = opweave.function([x, y, gz], list(div.grad([x, y], [gz])))
    dx, dy = f(3.0, 2.0, 1.0)
    assert dx == pytest.approx(0.5) and dy == pytest.approx(-0.75)


def test_config_optimizer_excluding_tags() -> None:
    x = double("x")
    with opweave.config.change_flags(optimizer_excluding="double"):
        f = opweave.function([x], mul(x, 1.0), mode="FAST_RUN")
    assert [str(n.op) for n in f.maker.fgraph.toposort()] == ["mul"]
