"""Every optional piece of the seed-002 C contract reaches the generated module."""

from __future__ import annotations

import pytest

import opweave
from opweave import graph as gof
from opweave.compile import Mode
from opweave_c.contract import call_with_compiler
from opweave_double import double

SUPPORT = "static double opw_test_base = 0;\nstatic int opw_test_cleanups = 0;\n"


class Everything(gof.Op):
    """``z = x + base + FLAG + (DBL_EPSILON > 0) + cleanups so far``, where ``base`` is set by
    ``c_init_code``, ``FLAG`` by ``c_compile_args``, ``DBL_EPSILON`` comes from a header and
    the cleanup counter from ``c_code_cleanup``."""

    __props__ = ()

    def make_node(self, x):
        return gof.Apply(self, [x, gof.Constant(double, 0.5)], [double()])

    def c_headers(self, c_compiler=None):
        assert c_compiler is not None  # the c_compiler version is tried first
        return ["<float.h>"]

    def c_compile_args(self):  # the plain version is accepted too
        return ["-DOPW_TEST_FLAG=100"]

    def c_support_code(self):
        return [SUPPORT, SUPPORT]  # a list, and duplicates are emitted once

    def c_init_code(self):
        return ["opw_test_base = 1000;"]

    def c_support_code_apply(self, node, name):
        return f"static double {name}_half(double v) {{ return v; }}"

    def c_code(self, node, name, inputs, outputs, sub):
        x, half = inputs
        (z,) = outputs
        return (
            f"{z} = {x} + opw_test_base + OPW_TEST_FLAG + (DBL_EPSILON > 0) "
            f"+ opw_test_cleanups + {name}_half({half});"
        )

    def c_code_cleanup(self, node, name, inputs, outputs, sub):
        return "opw_test_cleanups++;"

    def c_code_cache_version(self):
        return (1,)


@pytest.mark.parametrize("linker", ["c", "cvm"])
def test_headers_args_support_init_cleanup_and_apply_code(linker) -> None:
    x = double("x")
    f = opweave.function([x], Everything()(x), mode=Mode(linker=linker))
    assert f(1.0) == 1.0 + 1000 + 100 + 1 + 0 + 0.5
    assert f(1.0) == 1.0 + 1000 + 100 + 1 + 1 + 0.5  # the cleanup ran after the first call


def test_methods_with_and_without_c_compiler() -> None:
    op = Everything()
    assert call_with_compiler(op, "c_headers", "gcc") == ["<float.h>"]
    assert call_with_compiler(op, "c_compile_args", "gcc") == ["-DOPW_TEST_FLAG=100"]
    assert call_with_compiler(op, "c_libraries", "gcc") == []  # not defined: nothing


def test_constant_with_a_c_literal_is_inlined() -> None:
    import opweave.scalar as ps

    x = ps.float64("x")
    node = ps.add(x, ps.constant(2.5)).owner  # 2.5 is exact in float32: a float32 constant
    from opweave_c.codegen import BlockBuilder

    try:
        code = BlockBuilder("blk", [node], [x], node.outputs).build().code
    except NotImplementedError:
        pytest.skip("scalar add has no C code yet")
    assert "((npy_float32)2.5)" in code


def _module_flags(fgraph_outputs, inputs) -> list[str]:
    """The compile arguments of the module ``c`` would build for the graph."""
    from opweave.graph.fg import FunctionGraph
    from opweave_c.codegen import BlockBuilder
    from opweave_c.module import ModuleSpec

    fg = FunctionGraph(inputs, fgraph_outputs, clone=False)
    order = fg.toposort()
    block = BlockBuilder("opw_graph", order, inputs, list(fg.outputs)).build()
    return ModuleSpec.gather([block]).compile_args


def test_own_code_builds_fast_and_foreign_code_at_o3() -> None:
    """A module of opweave-c's own C is built at -O1 with its loops at -O3 (with GCC); one
    holding C from elsewhere (an Op with its own ``c_code``) is built at -O3 throughout."""
    import opweave.tensor as ot
    from opweave_c.compiler import CCompiler
    from opweave_c.module import FAST_BUILD_ARGS
    from opweave_double import add

    x, y = ot.dvector("x"), ot.dvector("y")
    own = _module_flags([ot.exp(x) * y], [x, y])
    # Shape_i is a core class whose C opweave-c registers: still all opweave's own C
    with_shape = _module_flags([ot.exp(x) * x.shape[0]], [x])
    a, b = double("a"), double("b")
    foreign = _module_flags([add(a, b)], [a, b])
    assert not set(FAST_BUILD_ARGS) & set(foreign)
    if CCompiler.from_config().is_gcc:
        assert set(FAST_BUILD_ARGS) <= set(own)
        assert set(FAST_BUILD_ARGS) <= set(with_shape)
    else:
        assert not set(FAST_BUILD_ARGS) & set(own)
