"""The inner inputs of an ``OpFromGraph`` are nominal, as in PyTensor: a clone of
``op.fgraph`` keeps them, so ``op.inner_inputs`` can be replaced in the clone.

PyMC computes the support point of a ``CustomDist`` built from a graph (``LogitNormal``)
this way: it clones ``op.fgraph``, rewrites the clone, then replaces ``op.inner_inputs``
by the outer inputs. With fresh inner inputs the clone had copies of them, nothing was
replaced, and compiling the result raised ``MissingInputError``.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sp

import opweave
import opweave.tensor as pt
from opweave.compile.builders import OpFromGraph
from opweave.graph.basic import NominalVariable


def _op() -> OpFromGraph:
    x, y = pt.dscalar("x"), pt.dscalar("y")
    return OpFromGraph([x, y], [pt.sigmoid(x) * y])


def test_inner_inputs_are_nominal_and_kept_by_a_clone() -> None:
    op = _op()
    assert all(isinstance(v, NominalVariable) for v in op.inner_inputs)
    assert [v.id for v in op.inner_inputs if isinstance(v, NominalVariable)] == [0, 1]
    clone = op.fgraph.clone()
    assert clone.inputs == op.inner_inputs
    assert clone.outputs[0] is not op.inner_outputs[0]


def test_inner_inputs_replaced_in_a_clone_by_outer_variables() -> None:
    op = _op()
    a, b = pt.dscalar("a"), pt.dscalar("b")
    clone = op.fgraph.clone()
    clone.replace_all(list(zip(op.inner_inputs, [a, b], strict=True)), import_missing=True)
    fn = opweave.function([a, b], clone.outputs[0])
    np.testing.assert_allclose(fn(1.5, 4.0), sp.expit(1.5) * 4.0, rtol=1e-15)


def test_inner_inputs_replaced_in_a_clone_by_constants() -> None:
    op = _op()
    clone = op.fgraph.clone()
    consts = [pt.constant(np.float64(1.0)), pt.constant(np.float64(2.0))]
    clone.replace_all(list(zip(op.inner_inputs, consts, strict=True)), import_missing=True)
    value = opweave.function([], clone.outputs[0])()
    np.testing.assert_allclose(value, sp.expit(1.0) * 2.0, rtol=1e-15)


def test_replacing_in_a_clone_leaves_the_op_and_other_ops_alone() -> None:
    op, other = _op(), _op()
    clone = op.fgraph.clone()
    consts = [pt.constant(np.float64(3.0)), pt.constant(np.float64(5.0))]
    clone.replace_all(list(zip(op.inner_inputs, consts, strict=True)), import_missing=True)
    a, b = pt.dscalar("a"), pt.dscalar("b")
    fn = opweave.function([a, b], [op(a, b), other(b, a)])
    got_op, got_other = fn(0.25, -2.0)
    np.testing.assert_allclose(got_op, sp.expit(0.25) * -2.0, rtol=1e-15)
    np.testing.assert_allclose(got_other, sp.expit(-2.0) * 0.25, rtol=1e-15)
