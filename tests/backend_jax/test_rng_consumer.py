"""The ``jax`` lowering of ``RNGConsumerOp``: an Op that consumes a generator and is a
graph of Ops runs its graph; one that is only a consumer is refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile import Mode
from opweave.compile.builders import OpFromGraph
from opweave.graph.basic import Apply, Variable
from opweave.graph.utils import NoImplementationError
from opweave.tensor.random import basic as rb
from opweave.tensor.random.op import RNGConsumerOp
from opweave.tensor.random.type import random_generator_type
from opweave.tensor.random.var import randomgen_constructor


class GraphConsumer(RNGConsumerOp, OpFromGraph):
    """Consumes a generator and is a graph of Ops."""

    def update(self, node: Apply) -> dict[Variable, Variable]:
        return {node.inputs[0]: node.outputs[0]}


class BareConsumer(RNGConsumerOp):
    """Consumes a generator and is nothing else."""

    def make_node(self, rng: Any) -> Apply:
        return Apply(self, [rng], [rng.type()])

    def update(self, node: Apply) -> dict[Variable, Variable]:
        return {node.inputs[0]: node.outputs[0]}


def test_a_consumer_that_is_a_graph_runs_its_graph_on_jax() -> None:
    rng_in, mu = random_generator_type(), pt.dscalar("mu")
    next_rng, x = rb.normal(mu, 1.0, size=(3,), rng=rng_in, return_next_rng=True)
    exp_x: Any = pt.exp(x)
    op = GraphConsumer([rng_in, mu], [next_rng, exp_x])
    rng = randomgen_constructor(np.random.default_rng(5))
    outputs = op(rng, pt.constant(np.float64(0.5)))
    value = opweave.function([], outputs[1], mode=Mode(linker="jax"))()
    logs = opweave.function([], pt.log(outputs[1]), mode=Mode(linker="jax"))()
    assert value.shape == (3,)
    np.testing.assert_allclose(np.log(value), logs, rtol=1e-14)
    assert np.isfinite(value).all() and (value > 0).all()


def test_a_bare_consumer_is_refused_by_name() -> None:
    rng = randomgen_constructor(np.random.default_rng(5))
    out = BareConsumer()(rng)
    with pytest.raises(NoImplementationError, match="BareConsumer consumes random generators"):
        opweave.function([], out, mode=Mode(linker="jax"))


def test_the_capability_report_says_partly() -> None:
    from opweave.link.capabilities import PARTIAL, capability_matrix, op_class_name

    matrix = capability_matrix(opweave.get_plugin_manager().hook.opweave_backend_info())
    assert matrix[op_class_name(RNGConsumerOp)]["opweave-jax"] == PARTIAL
