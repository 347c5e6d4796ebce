"""PyTensor's ``Function.dprint``: the ``debugprint`` of the compiled graph."""

from __future__ import annotations

import io

import opweave
import opweave.tensor as pt
from opweave.printing import debugprint


def test_function_dprint_prints_the_compiled_graph() -> None:
    x = pt.vector("x")
    fn = opweave.function([x], pt.exp(x) * 2)
    text = fn.dprint(file="str")
    assert text == debugprint(fn, file="str")
    assert "exp" in text.lower() and "x [id" in text


def test_function_dprint_writes_to_a_file() -> None:
    x = pt.vector("x")
    fn = opweave.function([x], pt.log(x))
    buffer = io.StringIO()
    fn.dprint(file=buffer)
    assert "Log" in buffer.getvalue()
