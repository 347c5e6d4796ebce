"""DebugMode compares each node's C implementation with its Python one."""

from __future__ import annotations

import pytest

import opweave
from opweave import graph as gof
from opweave.compile.debugmode import BadThunkOutput, DebugMode
from opweave_double import add, double, mul


class WrongInC(gof.Op):
    """``2 * x`` in Python, ``3 * x`` in C: a broken C implementation."""

    __props__ = ()

    def make_node(self, x):
        return gof.Apply(self, [x], [double()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = 2 * inputs[0]

    def c_code(self, node, name, inputs, outputs, sub):
        return f"{outputs[0]} = 3 * {inputs[0]};"

    def c_code_cache_version(self):
        return (1,)


def test_debugmode_runs_the_c_implementations_and_agrees() -> None:
    x, y, z = double("x"), double("y"), double("z")
    f = opweave.function([x, y, z], mul(add(x, y), z), mode=DebugMode())
    assert f(1.0, 2.0, 3.0) == 9.0


def test_debugmode_catches_a_c_implementation_that_disagrees() -> None:
    x = double("x")
    f = opweave.function([x], WrongInC()(x), mode=DebugMode())
    with pytest.raises(BadThunkOutput) as info:
        f(1.0)
    msg = str(info.value)
    assert "differs between implementation 'py' and implementation 'c'" in msg
    assert "py (reference) value: float value=2.0" in msg and "c value: float value=3.0" in msg
