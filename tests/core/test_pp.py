"""``opweave.printing.pp``: graphs as one line of math, as PyTensor's ``pp`` prints them."""

from __future__ import annotations

import numpy as np

import opweave
import opweave.tensor as ot
from opweave.printing import pp, pprint


def test_arithmetic_is_infix_and_functions_are_called() -> None:
    x, y = ot.dvector("x"), ot.dmatrix("y")
    assert pp is pprint
    assert pp(ot.exp(x) * 2 + x[0]) == "((exp(x) * 2) + x[0])"
    assert pp(-(x**2) / x) == "(-(x ** 2) / x)"
    assert pp(ot.tanh(x[1:3])) == "tanh(x[1:3])"
    assert pp(ot.maximum(x, 0)) == "maximum(x, 0)"
    assert pp(y.T) == "y.T"
    assert pp(ot.sum(y, axis=0)) == "Sum{axis=0}(y)"  # not elementwise: called by its name


def test_the_logistic_regression_prediction_of_the_tutorial() -> None:
    x = ot.matrix("x")
    w = opweave.shared(np.ones(4), name="w")
    b = opweave.shared(np.asarray(0.0), name="b")
    p_1 = 1 / (1 + ot.exp(-ot.dot(x, w) - b))
    assert pp(p_1 > 0.5) == "gt((1 / (1 + exp((-(x \\dot w) - b)))), 0.5)"


def test_other_ops_use_the_call_form_and_outputs_are_numbered() -> None:
    x = ot.dvector("x")
    assert pp(ot.sort(x)) == "SortOp{kind='quicksort'}(x, -1)"
    mean, var = ot.var(x), ot.mean(x)
    assert pp(mean).startswith("(") and pp(var).startswith("(")
    eig = ot.linalg.eigh(ot.dmatrix("m"))
    assert pp(eig[0]).endswith("(m)[0]") and pp(eig[1]).endswith("(m)[1]")
