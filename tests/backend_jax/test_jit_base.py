"""The ``jax`` linker is written on the core's ``JITLinker``: its ``fgraph_convert`` lowers
the graph through the resolver and its ``jit_compile`` is ``jax.jit``."""

from __future__ import annotations

import numpy as np

import opweave.tensor as pt
from opweave.graph.fg import FunctionGraph
from opweave.link.basic import JITLinker
from opweave_jax.linker import JAXLinker, enable_x64


def test_the_jax_linker_is_written_on_the_base() -> None:
    enable_x64()
    assert issubclass(JAXLinker, JITLinker)
    x = pt.dvector("x")
    fgraph = FunctionGraph([x], [pt.exp(x) + 1.0])
    linker = JAXLinker()
    program = linker.fgraph_convert(fgraph, [[None]], {}, order=fgraph.toposort())
    outputs, _checks = linker.jit_compile(program)(np.array([0.0, 1.0]))
    np.testing.assert_allclose(np.asarray(outputs[0]), np.exp([0.0, 1.0]) + 1.0, rtol=1e-15)
