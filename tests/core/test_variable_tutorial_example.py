"""The ``Variable`` code example of Theano's graph-structures tutorial, with only the imports
changed."""

from __future__ import annotations

import pytest

import opweave
from opweave import tensor
from opweave.graph import Constant, MissingInputError, Variable


def test_variable_tutorial_code_example() -> None:
    a = tensor.constant(1.5)  # declare a symbolic constant
    b = tensor.fscalar()  # declare a symbolic floating-point scalar
    c = a + b  # create a simple expression
    f = opweave.function([b], [c])  # this works because a has a value associated with it
    assert 4.0 == f(2.5)[0]  # bind 2.5 to an internal copy of b and evaluate c

    with pytest.raises((MissingInputError, TypeError)):
        opweave.function([a], [c])  # compilation error: b is undefined, a is constant
    with pytest.raises(TypeError, match="is a Constant"):
        opweave.function([a, b], [c])  # a is constant, it can't be an input

    d = tensor.value(1.5)  # create a value similar to the constant 'a'
    e = d + b
    g = opweave.function([d, b], [e])  # this works; d's default value of 1.5 is ignored
    assert g(10.0, 2.5)[0] == 12.5
    assert isinstance(a, Constant) and isinstance(d, Variable) and not isinstance(d, Constant)
    assert d.tag.value == 1.5


def test_missing_input_names_the_variable() -> None:
    b = tensor.fscalar("b")
    x = tensor.dscalar("x")
    with pytest.raises(MissingInputError, match=r"need b \(type TensorType\(float32"):
        opweave.function([x], x + b)
