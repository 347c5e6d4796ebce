"""Tests of the main table's RNN row (``run.rnn_row``, ``workloads.numpy_rnn``...).

Not part of the suite's ``testpaths``; run with
``.venv/bin/python -m pytest benchmarks/test_rnn.py -q -p no:cacheprovider``. They need
no PyTensor; the JAX test runs only where the JAX benchmark venv exists.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax_env
import run
import workloads
from report import NotAvailable, markdown_table
from timing import Settings

#: One call per measurement: these tests check values and cells, not times.
TINY = Settings(repeat=1, min_run_seconds=0.0, big_n=10, compile_repeat=1)


def context(linkers: list[str]) -> run.Context:
    """A context without PyTensor nor JAX."""
    return run.Context(TINY, linkers, ["CVM", "NUMBA"], NotAvailable("--no-pytensor"))


def test_hand_written_backward_agrees_with_finite_differences() -> None:
    data = workloads.rnn_data()
    workloads.check_rnn_by_finite_differences(data)
    loss, g_w_x, g_w_h, g_b = workloads.numpy_rnn(*data.args())
    assert loss == pytest.approx(workloads.rnn_loss_only(*data.args()), rel=1e-12)
    assert g_w_x.shape == (workloads.RNN_IN, workloads.RNN_HIDDEN)
    assert g_w_h.shape == (workloads.RNN_HIDDEN, workloads.RNN_HIDDEN)
    assert g_b.shape == (workloads.RNN_HIDDEN,)
    assert min(np.abs(g).max() for g in (g_w_x, g_w_h, g_b)) > 0.1  # tanh not saturated


def test_a_wrong_hand_written_backward_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    right = workloads.numpy_rnn

    def wrong(*args: np.ndarray) -> tuple:
        loss, g_w_x, g_w_h, g_b = right(*args)
        return loss, g_w_x, g_w_h * 1.001, g_b

    monkeypatch.setattr(workloads, "numpy_rnn", wrong)
    with pytest.raises(AssertionError, match="hand-written gradient gives"):
        workloads.check_rnn_by_finite_differences(workloads.rnn_data())


def test_compare_rnn_names_the_output_that_differs() -> None:
    expected = workloads.numpy_rnn(*workloads.rnn_data().args())
    assert workloads.compare_rnn(expected, expected) is None
    off = (expected[0], expected[1], expected[2] + 1e-3, expected[3])
    assert workloads.compare_rnn(off, expected) == "wrong result: g_w_h off by up to 0.001"
    cut = (expected[0], expected[1][:3], expected[2], expected[3])
    assert "g_w_x has shape (3, 128)" in workloads.compare_rnn(cut, expected)
    assert "3 outputs, expected 4" in workloads.compare_rnn(expected[:3], expected)


def test_rnn_row_checks_and_times_opweave_and_says_why_c_cannot() -> None:
    row = run.rnn_row(context(["vm", "cvm", "c"]))
    assert isinstance(row.ref_seconds, float)
    assert isinstance(row.seconds["vm"], float) and isinstance(row.seconds["cvm"], float)
    assert row.seconds["c"] == NotAvailable("no C for Scan")
    assert "JAX jit" not in row.seconds  # --no-jax: no column
    text = markdown_table([row], ["vm", "cvm", "c", "PyTensor cvm"])
    assert "n/a (no C for Scan)" in text
    assert "; target ≤ 1.0x NumPy); n/a (no PyTensor cvm time; target < PyTensor cvm" in text
    assert "loss: mean over t of sum(h_t ** 2)" in text


def test_rnn_row_stops_when_no_linker_agrees_with_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    right = workloads.numpy_rnn

    def wrong(*args: np.ndarray) -> tuple:
        loss, g_w_x, g_w_h, g_b = right(*args)
        return loss, g_w_x, g_w_h, g_b + 1.0

    monkeypatch.setattr(workloads, "check_rnn_by_finite_differences", lambda data: None)
    monkeypatch.setattr(workloads, "numpy_rnn", wrong)
    with pytest.raises(RuntimeError, match=r"no opweave linker agrees.*'vm': 'wrong result: g_b"):
        run.rnn_row(context(["vm"]))


def test_the_fastest_column_is_the_one_with_the_smallest_time() -> None:
    times = {"PyTensor cvm": 3.0, "PyTensor c": NotAvailable("no C"), "PyTensor numba": 2.0}
    assert run.fastest(times, ["PyTensor cvm", "PyTensor c", "PyTensor numba"]) == "PyTensor numba"
    assert run.fastest(times, ["PyTensor c"]) is None


JAX_VENV = run.REPO / ".bench-jax-venv"


@pytest.mark.skipif(not jax_env.venv_python(JAX_VENV).exists(), reason="no JAX benchmark venv")
def test_jax_side_checks_and_times_the_rnn() -> None:
    side = jax_env.JaxSide(jax_env.venv_python(JAX_VENV))
    assert isinstance(side.time_case("rnn", TINY), float)
    assert side.time_case("nope", TINY) == NotAvailable("KeyError: 'nope'")
