"""Creation traces: where each variable was created, quoted when its node fails."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.graph.trace import creation_note


def _line() -> int:
    """The line number of the caller."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def test_variables_record_the_line_that_created_them() -> None:
    x = ot.dvector("x")
    x_line = _line() - 1  # the line above
    y = ot.exp(x) * 2
    y_line = _line() - 1  # the line above
    for var, line in ((x, x_line), (y, y_line)):
        (frames,) = var.tag.trace
        filename, lineno, name, text = frames[-1]
        assert text.startswith(("x = ot.dvector", "y = ot.exp(x)"))
        assert filename == __file__ and lineno == line
        assert name == "test_variables_record_the_line_that_created_them"
    # opweave's own frames (tensor.math, graph.op ...) are left out
    assert all("/opweave/" not in f for f, *_ in y.tag.trace[0])


def test_a_line_run_many_times_records_one_frame_that_pickles_once() -> None:
    import pickle

    x = ot.dvector("x")
    outs = []
    for k in range(50):
        outs.append(ot.exp(x) + float(k))
    frames = [var.tag.trace[0][-1] for var in outs]
    assert all(f is frames[0] for f in frames)  # one tuple for the line, shared
    assert frames[0][3] == "outs.append(ot.exp(x) + float(k))"
    # each trace after the first refers to the line: it does not write its text again
    assert pickle.dumps(outs).count(frames[0][3].encode()) == 1


@pytest.mark.parametrize(("limit", "most"), [(0, 0), (1, 1), (2, 2)])
def test_the_limit_bounds_the_frames(limit: int, most: int) -> None:
    with opweave.config.change_flags(traceback__limit=limit):
        y = ot.exp(ot.dvector("x"))
    frames = getattr(y.tag, "trace", [[]])[0]
    assert len(frames) == most


@pytest.mark.parametrize("linker", ["py", "vm", "cvm", "c"])
def test_a_failing_node_quotes_where_it_was_created(linker: str) -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    z = ot.dot(x, y)
    line = _line() - 1  # the line above
    f = opweave.function([x, y], ot.exp(z) + 1, mode=opweave.Mode(linker=linker))
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Backtrace when the node was created" in notes
    assert f'File "{__file__}", line {line}' in notes
    assert "z = ot.dot(x, y)" in notes


def test_a_rewritten_node_keeps_the_trace_of_what_it_replaces() -> None:
    x = ot.dvector("x")
    out = ot.exp(x) * 2 + 1
    line = _line() - 1  # the line above
    f = opweave.function([x], out, mode=opweave.Mode(linker="vm"))
    (node,) = f.maker.fgraph.apply_nodes  # one fused node
    note = creation_note(node)
    assert note is not None and f"line {line}" in note


def test_no_trace_no_note() -> None:
    with opweave.config.change_flags(traceback__limit=0):
        y = ot.exp(ot.dvector("x"))
    assert creation_note(y.owner) is None


def test_nothing_is_recorded_under_traces_off() -> None:
    from opweave.graph.trace import traces_off

    with traces_off():
        y = ot.exp(ot.dvector("x"))
    assert getattr(y.tag, "trace", None) is None
    assert ot.exp(ot.dvector("x")).tag.trace  # recording resumes after the block


def test_a_missing_input_error_says_where_the_variable_was_created() -> None:
    from opweave.graph.utils import MissingInputError

    x = ot.dvector("x")
    y = ot.dvector("forgotten")
    line = _line() - 1  # the line above
    with pytest.raises(MissingInputError, match="forgotten") as info:
        opweave.function([x], x + y)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Backtrace when the variable was created" in notes
    assert f'File "{__file__}", line {line}' in notes and 'ot.dvector("forgotten")' in notes
