"""``cvm`` compiles each distinct kind of node once, and splits many functions over modules
built in parallel."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave_c.codegen import Block
from opweave_c.linkers.cvm import describe_kind, node_block
from opweave_c.module import (
    MAX_LINES_PER_MODULE,
    MIN_LINES_PER_MODULE,
    block_lines,
    block_weights,
    build_modules,
    split_blocks,
)


def block_of(out):
    return node_block(out.owner, [], True)


def test_nodes_computing_the_same_thing_share_a_function() -> None:
    x, y = ot.dvector("first_input"), ot.dvector("second_input")
    a, b = block_of(ot.exp(x)), block_of(ot.exp(y))
    assert a.fn_name == b.fn_name and a.code == b.code
    assert a.inputs != b.inputs  # each node is still bound to its own variables
    assert block_of(ot.exp(ot.fvector("z"))).fn_name != a.fn_name  # another Type
    assert block_of(ot.log(x)).fn_name != a.fn_name  # another Op
    assert block_of(ot.exp(ot.dmatrix("m"))).fn_name != a.fn_name  # another rank
    kind = describe_kind(ot.exp(x).owner)
    assert str(ot.exp(x).owner.op) in kind and "float64" in kind and "first_input" not in kind


def test_an_output_that_may_not_be_recycled_is_another_function() -> None:
    x = ot.dvector("x")
    out = ot.exp(x)
    recycled = node_block(out.owner, [], True)
    fresh = node_block(out.owner, [out], True)
    assert recycled.fn_name != fresh.fn_name


def repeated_blocks(n: int):
    x = ot.dvector("x")
    e = x
    for i in range(n):
        e = ot.tanh(e * (1.0 + i / 1000.0) + 0.1) + ot.mean(e) * 0.01
    return x, e


def reference(n: int, value: np.ndarray) -> np.ndarray:
    e = value
    for i in range(n):
        e = np.tanh(e * (1.0 + i / 1000.0) + 0.1) + e.mean() * 0.01
    return e


def test_a_graph_of_repeated_blocks_compiles_each_kind_once() -> None:
    x, e = repeated_blocks(12)
    f = opweave.function([x], e, mode=Mode(linker="cvm"))
    value = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(f(value), reference(12, value), rtol=1e-12)
    linker = f.maker.linker
    names = [linker._c_nodes[k].block.fn_name for k in sorted(linker._c_nodes)]
    assert len(names) == len(f.maker.fgraph.apply_nodes)
    # the blocks differ only by a constant, which the fused loops take as an input: the
    # fused loop, the sum, the length, the broadcast and the mean's scaling, each once
    # (the first block's loop reads the input, not an intermediate: one more)
    assert len(set(names)) <= 7


def test_many_functions_are_split_over_modules_deterministically() -> None:
    distinct = exponent_blocks(35)
    assert sum(map(block_lines, distinct)) >= 2 * MIN_LINES_PER_MODULE
    modules = build_modules(distinct, "split test", jobs=2)
    assert set(modules) == {b.fn_name for b in distinct}
    assert len({id(m) for m in modules.values()}) == 2
    again = build_modules(list(reversed(distinct)), "split test", jobs=2)
    assert {name: m.__name__ for name, m in again.items()} == {
        name: m.__name__ for name, m in modules.items()
    }
    single = build_modules(distinct, "split test", jobs=1)
    bounded = -(-sum(map(block_lines, distinct)) // MAX_LINES_PER_MODULE)
    assert len({id(m) for m in single.values()}) == max(1, bounded)


def exponent_blocks(n: int) -> list[Block]:
    """The distinct blocks of ``n`` nodes ``exp(x_i ** (i + 3))`` (one kind each)."""
    inputs = [ot.dvector(f"x{i}") for i in range(n)]
    outs = [ot.exp(v ** (i + 3.0)) for i, v in enumerate(inputs)]  # exponents stay in the C
    rewritten = opweave.function(inputs, outs, mode=Mode(linker="cvm")).maker.fgraph
    blocks = [node_block(node, [], True) for node in rewritten.toposort()]
    distinct = list({b.fn_name: b for b in blocks}.values())
    assert len(distinct) == n
    return distinct


def test_modules_are_balanced_by_lines_and_small_sets_stay_whole() -> None:
    blocks = exponent_blocks(9)
    groups = split_blocks(blocks, jobs=2)
    assert sorted(b.fn_name for g in groups for b in g) == sorted(b.fn_name for b in blocks)
    loads = [sum(map(block_lines, group)) for group in groups]
    assert len(groups) == 2 and max(loads) - min(loads) <= max(map(block_lines, blocks))
    assert split_blocks(list(reversed(blocks)), jobs=2) == groups
    # too little C for two compiler runs: one module, whatever the number of jobs
    few = blocks[:3]
    assert sum(map(block_lines, few)) < 2 * MIN_LINES_PER_MODULE
    assert len(split_blocks(few, jobs=8)) == 1
    assert len(split_blocks(blocks[:1], jobs=8)) == 1


def test_a_large_graph_builds_as_more_modules_of_bounded_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """However few the jobs, no module gets much more than ``MAX_LINES_PER_MODULE`` lines
    (GCC's time grows faster than a module's size): a larger graph gets more modules."""
    import opweave_c.module as module

    blocks = exponent_blocks(9)
    total = sum(map(block_lines, blocks))
    largest = max(map(block_lines, blocks))
    cap = total // 4
    monkeypatch.setattr(module, "MAX_LINES_PER_MODULE", cap)
    groups = split_blocks(blocks, jobs=2)
    assert len(groups) >= 4
    assert max(sum(map(block_lines, group)) for group in groups) <= cap + largest
    assert sorted(b.fn_name for g in groups for b in g) == sorted(b.fn_name for b in blocks)
    assert split_blocks(list(reversed(blocks)), jobs=2) == groups
    # one function larger than the bound is a module of its own, never split
    monkeypatch.setattr(module, "MAX_LINES_PER_MODULE", 1)
    assert len(split_blocks(blocks, jobs=2)) == len(blocks)


def test_support_code_no_other_block_brings_weighs_on_its_block() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    outs = [ot.exp(x) * y, ot.tanh(y) + 1.5, ot.sum(x)]
    blocks = [block_of(out) for out in outs]
    weights = block_weights(blocks)
    elemwise, other_elemwise, reduction = (weights[b.fn_name] for b in blocks)
    # the Elemwise blocks share all their support code (helpers, vector math): lines only
    assert elemwise == block_lines(blocks[0])
    assert other_elemwise == block_lines(blocks[1])
    # the sum's reduction kernels are its own: they count, though its function is short
    assert block_lines(blocks[2]) < block_lines(blocks[0])
    assert reduction > block_lines(blocks[2]) + 50
    assert reduction > elemwise
    # alone, a block's support code is all its own
    alone = block_weights(blocks[:1])[blocks[0].fn_name]
    assert alone > elemwise
    # the modules are balanced by weight: with the lines alone, the three Elemwise
    # blocks would weigh on one module and the sum (fewer lines) go with another
    more = [*blocks, block_of(ot.log1p(x) * y - 2.5), block_of(ot.sqrt(y) / 3.0)]
    weights = block_weights(more)
    assert sum(map(block_lines, more)) >= 2 * MIN_LINES_PER_MODULE
    groups = split_blocks(more, jobs=2)
    loads = sorted(sum(weights[b.fn_name] for b in group) for group in groups)
    assert len(groups) == 2 and loads[1] - loads[0] <= min(weights.values())
    assert split_blocks(list(reversed(more)), jobs=2) == groups


@pytest.mark.parametrize("jobs", [1, 2])
def test_functions_split_over_modules_compute_the_right_values(jobs: int) -> None:
    inputs = [ot.dvector(f"x{i}") for i in range(12)]
    outs = [ot.exp(v ** (i + 3.0)) for i, v in enumerate(inputs)]
    with opweave.config.change_flags(c__build_jobs=jobs):
        f = opweave.function(inputs, outs, mode=Mode(linker="cvm"))
    values = [np.full(3, 0.01 * i) for i in range(len(inputs))]
    for i, (got, value) in enumerate(zip(f(*values), values, strict=True)):
        np.testing.assert_allclose(got, np.exp(value ** (i + 3.0)), rtol=1e-12)


def test_deferred_steps_wait_for_the_compilers_to_start(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While modules build in parallel, the compile's deferred steps run once the first
    compilers are running, not while their sources are still being written (they would
    only hold those up); a module that fails still fails the build."""
    import opweave_c.compiler as compiler_module
    from opweave.link.deferred import defer, waiting_room

    events: list[str] = []
    real = compiler_module.CCompiler.build

    def build(self, source, target, what, **kwargs):
        events.append("compiler started")
        real(self, source, target, what, **kwargs)

    monkeypatch.setattr(compiler_module.CCompiler, "build", build)
    ops = [ot.sinh, ot.cosh, ot.arcsinh, ot.expm1, ot.log1p, ot.tan, ot.arctan, ot.erf]
    xs = [ot.dvector("x"), ot.fvector("y"), ot.dmatrix("m")]
    distinct = [block_of(op(v)) for op in ops for v in xs[:2]]
    assert len({block.fn_name for block in distinct}) == len(distinct)
    assert len(split_blocks(distinct, jobs=2)) == 2
    with opweave.config.change_flags(compiledir=str(tmp_path)), waiting_room():
        defer(lambda: events.append("deferred step"))
        modules = build_modules(distinct, "deferred test", jobs=2)
        assert events == ["compiler started", "compiler started", "deferred step"]
    assert {block.fn_name for block in distinct} == set(modules)

    def broken(self, source, target, what, **kwargs):
        raise compiler_module.CompilationError("no compiler today", source, what)

    monkeypatch.setattr(compiler_module.CCompiler, "build", broken)
    other = [block_of(op(xs[2])) for op in ops]
    with (
        opweave.config.change_flags(compiledir=str(tmp_path)),
        waiting_room(),
        pytest.raises(compiler_module.CompilationError, match="no compiler today"),
    ):
        build_modules(other, "failing test", jobs=2)
