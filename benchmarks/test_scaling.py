"""Tests of the compile-scaling table's machinery (``scaling.py``, ``scaling_probe.py``).

Not part of the suite's ``testpaths``; run with
``.venv/bin/python -m pytest benchmarks/test_scaling.py -q -p no:cacheprovider``. They need
neither PyTensor nor JAX: the probes they start run opweave's ``vm`` linker.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scaling
import scaling_probe
import workloads
from report import NotAvailable

VM = scaling.Column("vm", "opweave", "vm")
OPWEAVE = scaling.Runner(Path(sys.executable), scaling.opweave_env)


def probe(seconds: float) -> scaling.Probe:
    """A measurement taking ``seconds``."""
    return scaling.Probe(seconds, seconds / 10, 7, 0.1, "cvm")


def test_parse_blocks_sorts_and_drops_repeats() -> None:
    assert scaling.parse_blocks("500, 30,120,30") == [30, 120, 500]


@pytest.mark.parametrize("text", ["", "0,10", "10,ten", "-3"])
def test_parse_blocks_refuses_what_is_not_positive_integers(text: str) -> None:
    with pytest.raises(ValueError, match="--scaling-blocks: expected comma-separated positive"):
        scaling.parse_blocks(text)


def test_blocks_workload_gives_each_block_its_constant() -> None:
    x = workloads.blocks_input()
    e = x
    for c in (1.0, 1.001, 1.002):
        e = np.tanh(e * c + 0.1) + np.mean(e) * 0.01
    np.testing.assert_array_equal(workloads.blocks(np.tanh, np.mean, x, 3), e)
    assert x.shape == (workloads.BLOCKS_VECTOR_N,) and x.dtype == np.float64


def test_probe_check_refuses_a_wrong_result() -> None:
    x = workloads.blocks_input()
    right = workloads.blocks(np.tanh, np.mean, x, 4)
    assert scaling_probe.check(right, 4, x) is None
    assert scaling_probe.check(right + 1e-6, 4, x).startswith("wrong result: max abs error")
    assert "shape (9,)" in scaling_probe.check(right[:9], 4, x)


def test_probe_compiles_the_workload_in_a_new_process(tmp_path: Path) -> None:
    result = scaling.run_probe(OPWEAVE, VM, 3, tmp_path, timeout=120)
    assert isinstance(result, scaling.Probe), result
    assert result.linker == "vm"
    assert result.nodes is not None and result.nodes > 3
    assert 0 < result.rewrite_seconds < result.seconds


def test_probe_reports_an_unknown_linker_as_not_available(tmp_path: Path) -> None:
    column = scaling.Column("nope", "opweave", "no-such-linker")
    result = scaling.run_probe(OPWEAVE, column, 2, tmp_path, timeout=120)
    assert isinstance(result, NotAvailable)
    assert "no-such-linker" in result.reason


def test_probe_past_its_timeout_is_killed(tmp_path: Path) -> None:
    result = scaling.run_probe(OPWEAVE, VM, 3, tmp_path, timeout=0.01)
    assert result == scaling.TimedOut(0.01)
    assert scaling.describe(result) == "> 0.01 s"


def test_after_a_timeout_larger_sizes_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []

    def fake(
        runner: scaling.Runner, column: scaling.Column, blocks: int, tmp: Path, timeout: float
    ) -> scaling.Result:
        asked.append(blocks)
        return probe(1.0) if blocks < 100 else scaling.TimedOut(timeout)

    monkeypatch.setattr(scaling, "run_probe", fake)
    result = scaling.run_scaling([VM], {"opweave": OPWEAVE}, [10, 100, 1000], timeout=5)
    assert asked == [10, 10, 100]  # cold and warm at 10; cold at 100 times out
    assert result.cell("vm", 10).warm == probe(1.0)
    assert result.cell("vm", 100).cold == scaling.TimedOut(5)
    assert result.cell("vm", 100).warm == scaling.SKIPPED
    assert result.cell("vm", 1000).cold == scaling.SKIPPED
    assert "| 1000 | cold | skipped |" in scaling.table(result)


def judged(cold: dict[str, scaling.Result], warm: float, growth_to: scaling.Result) -> str:
    """The table of a run whose 120-block cells are ``cold`` (and ``warm`` for default)."""
    columns = scaling.columns_for([])
    result = scaling.Scaling([120, 500], columns, timeout=300, repeat=1)
    for column in columns:
        result.cells[column.name, 120] = scaling.Cell(
            cold[column.name], probe(warm) if column.name == "default" else probe(1.0)
        )
        result.cells[column.name, 500] = scaling.Cell(growth_to, growth_to)
    return scaling.table(result)


def test_targets_are_judged_on_the_default_column() -> None:
    cold = {
        "default": probe(1.0),
        "PyTensor default": probe(5.0),
        "PyTensor cvm": probe(9.0),
        "JAX jit": probe(3.0),
    }
    text = judged(cold, warm=0.2, growth_to=probe(6.0))
    assert "yes (default 0.333x; target ≤ 0.5x JAX jit)" in text
    assert "no (default 0.2x; target ≤ 0.1x PyTensor default)" in text
    assert "yes (default 200 ms; target < 0.3 s)" in text
    assert "no (default 6x; target ≤ 5x from 120 to 500 blocks)" in text


def test_a_timed_out_comparison_gives_a_bound() -> None:
    cold = {
        "default": probe(10.0),
        "PyTensor default": scaling.TimedOut(300),
        "PyTensor cvm": scaling.TimedOut(300),
        "JAX jit": NotAvailable("--no-jax"),
    }
    text = judged(cold, warm=0.5, growth_to=scaling.SKIPPED)
    assert "yes (default < 0.0333x, PyTensor default > 300 s; target ≤ 0.1x" in text
    assert "n/a (no JAX jit time; target ≤ 0.5x JAX jit)" in text
    assert "no (default 500 ms; target < 0.3 s)" in text
    assert "no (default skipped at 500 blocks; target ≤ 5x" in text
