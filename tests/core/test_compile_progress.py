"""A compile that takes a while says what it is doing on stderr (``opweave.link.progress``)."""

from __future__ import annotations

import io
import threading

import numpy as np

import opweave
import opweave.tensor as ot
from opweave.link.progress import CompileProgress, compile_progress, current


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_shown_before_the_delay() -> None:
    stream = io.StringIO()
    with compile_progress("compiling f", enabled=True, delay=60, stream=stream) as progress:
        progress.stage("rewriting 3 nodes")
        with progress.steps("compiling C modules", 2) as steps:
            steps.advance()
            steps.advance()
    assert stream.getvalue() == "" and progress.lines == []


def test_after_the_delay_every_stage_and_step_is_a_line() -> None:
    stream = io.StringIO()
    with compile_progress("compiling f", enabled=True, delay=0, stream=stream) as progress:
        progress.stage("rewriting 3 nodes")
        with progress.steps("compiling C modules", 2) as steps:
            steps.advance()
            steps.advance()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "opweave: compiling f (taking a while)"
    assert lines[1:5] == [
        "opweave: rewriting 3 nodes",
        "opweave: compiling C modules: 0 of 2",
        "opweave: compiling C modules: 1 of 2",
        "opweave: compiling C modules: 2 of 2",
    ]
    assert lines[5].startswith("opweave: compiling f: done in ") and lines[5].endswith(" s")
    assert len(lines) == 6


def test_a_stage_under_way_when_the_delay_ends_is_shown_then() -> None:
    stream = io.StringIO()
    progress = CompileProgress("compiling g", delay=3600, stream=stream)
    progress.start()
    progress.stage("generating C for 9 nodes")
    assert stream.getvalue() == ""
    progress._show()  # what the timer does when the delay ends
    progress.stage("compiling")
    progress.close()
    assert stream.getvalue().splitlines()[:3] == [
        "opweave: compiling g (taking a while)",
        "opweave: generating C for 9 nodes",
        "opweave: compiling",
    ]


def test_on_a_terminal_steps_are_a_bar() -> None:
    stream = Terminal()
    with compile_progress("compiling f", enabled=True, delay=0, stream=stream) as progress:
        with progress.steps("compiling C modules", 3) as steps:
            for _ in range(3):
                steps.advance()
    text = stream.getvalue()
    assert "opweave: compiling C modules:" in text and "| 0/3 [" in text
    assert "0 of 3" not in text  # a bar, not lines


def test_disabled_progress_writes_nothing() -> None:
    stream = io.StringIO()
    with compile_progress("compiling f", enabled=False, delay=0, stream=stream) as progress:
        progress.stage("rewriting")
        with progress.steps("x", 1) as steps:
            steps.advance()
    assert stream.getvalue() == ""


def test_outside_a_compile_reporting_is_silent_and_harmless() -> None:
    progress = current()
    progress.stage("nothing")
    with progress.steps("nothing", 2) as steps:
        steps.advance()
    assert progress.lines == []


def test_an_inner_compile_reports_through_the_outer_one() -> None:
    stream = io.StringIO()
    with compile_progress("outer", enabled=True, delay=0, stream=stream) as outer:
        with compile_progress("inner", enabled=True, delay=0) as inner:
            assert inner is outer and current() is outer
            inner.stage("inner stage")
    assert "opweave: inner stage" in stream.getvalue()
    assert "inner (taking a while)" not in stream.getvalue()


def test_steps_advance_from_several_threads() -> None:
    stream = io.StringIO()
    with compile_progress("f", enabled=True, delay=0, stream=stream) as progress:
        with progress.steps("modules", 40) as steps:
            threads = [threading.Thread(target=steps.advance) for _ in range(40)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    assert steps.done == 40
    assert "opweave: modules: 40 of 40" in stream.getvalue()


def test_a_broken_stream_does_not_break_the_compile() -> None:
    stream = io.StringIO()
    stream.close()
    with compile_progress("f", enabled=True, delay=0, stream=stream) as progress:
        progress.stage("rewriting")
    assert progress.lines[-1].startswith("opweave: f: done in")


def compile_and_run(capsys, **flags) -> str:
    x = ot.dvector("x")
    with opweave.config.change_flags(**flags):
        f = opweave.function([x], ot.exp(x) * 2.0 + x, name="probe")
    np.testing.assert_allclose(f(np.ones(2)), np.exp(1.0) * 2.0 + 1.0)
    return capsys.readouterr().err


def test_function_reports_its_stages(capsys) -> None:
    err = compile_and_run(capsys, compile__progress_delay=0)
    lines = err.splitlines()
    assert lines[0] == "opweave: compiling probe (taking a while)"
    assert any(line.startswith("opweave: rewriting ") for line in lines)
    assert any(line.startswith("opweave: linking ") for line in lines)
    assert lines[-1].startswith("opweave: compiling probe: done in ")


def test_the_flag_turns_progress_off(capsys) -> None:
    assert compile_and_run(capsys, compile__progress=False, compile__progress_delay=0) == ""


def test_a_quick_compile_is_silent(capsys) -> None:
    assert compile_and_run(capsys, compile__progress_delay=60) == ""
