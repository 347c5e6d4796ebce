"""Tests of the main table's MLP rows and JAX column (``run.mlp_row``, ``busy.py``...).

Not part of the suite's ``testpaths``; run with
``.venv/bin/python -m pytest benchmarks/test_mlp.py -q -p no:cacheprovider``. They need
no PyTensor; the JAX tests run only where the JAX benchmark venv exists.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import busy
import jax_env
import run
import workloads
from report import NotAvailable, markdown_table
from timing import Settings

#: One call per measurement: these tests check values and cells, not times.
TINY = Settings(repeat=1, min_run_seconds=0.0, big_n=10, compile_repeat=1)
JAX_VENV = run.REPO / ".bench-jax-venv"
needs_jax = pytest.mark.skipif(
    not jax_env.venv_python(JAX_VENV).exists(), reason="no JAX benchmark venv"
)


def context(linkers: list[str], jax: jax_env.JaxSide | NotAvailable = run.NO_JAX) -> run.Context:
    """A context without PyTensor."""
    return run.Context(TINY, linkers, ["CVM"], NotAvailable("--no-pytensor"), jax)


def busy_pids() -> set[int]:
    """The busy processes running now (``pgrep`` on their tag)."""
    done = subprocess.run(["pgrep", "-f", busy.BUSY_TAG], capture_output=True, text=True)
    return {int(pid) for pid in done.stdout.split()}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mlp_data_and_the_numpy_step_keep_the_dtype(dtype: str) -> None:
    data = workloads.mlp_data(dtype)
    arrays = (data.x, data.onehot, *data.params())
    assert {a.dtype for a in arrays} == {np.dtype(dtype)}
    assert data.x.shape == (workloads.MLP_BATCH, workloads.MLP_IN)
    np.testing.assert_array_equal(data.x, workloads.mlp_data().x.astype(dtype))
    step = workloads.numpy_mlp_step(data)
    first, second = step(data.x, data.onehot), step(data.x, data.onehot)
    assert second < first  # the step trains
    loss = workloads.mlp_loss(_log_softmax, np, data.x, data.onehot, *data.params())
    assert loss.dtype == np.dtype(dtype)
    assert float(loss) == pytest.approx(first, rel=1e-5 if dtype == "float32" else 1e-12)


def _log_softmax(z: np.ndarray, axis: int) -> np.ndarray:
    """NumPy's log-softmax, for :func:`workloads.mlp_loss`."""
    z = z - z.max(axis=axis, keepdims=True)
    out: np.ndarray = z - np.log(np.exp(z).sum(axis=axis, keepdims=True))
    return out


def test_compare_mlp_loss_checks_the_dtype_and_the_value() -> None:
    assert workloads.compare_mlp_loss(np.float32(2.5), 2.5, "float32") is None
    assert workloads.compare_mlp_loss(np.array(2.5), 2.5, "float32") == (
        "wrong result: the loss is float64, expected float32"
    )
    assert workloads.compare_mlp_loss(np.float32(2.5001), 2.5, "float32") is None
    assert workloads.compare_mlp_loss(np.float64(2.5001), 2.5, "float64") == (
        "wrong result: loss 2.5001, expected 2.5"
    )


def test_float32_mlp_row_checks_and_times_every_linker() -> None:
    row = run.mlp_row(context(["vm", "cvm"]), "float32")
    assert row.case.endswith("batch 256, float32")
    assert isinstance(row.ref_seconds, float)
    assert all(isinstance(row.seconds[k], float) for k in ("vm", "cvm"))
    assert run.scaling.JAX_COLUMN not in row.seconds  # --no-jax: no column


def test_mlp_row_shows_a_linker_whose_loss_is_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    def doubled_w2(data: workloads.MLPData) -> object:
        data.w2 = data.w2 * 2
        return build(data)

    build = run.ows.mlp_graph
    monkeypatch.setattr(run.ows, "mlp_graph", doubled_w2)
    row = run.mlp_row(context(["vm"]))
    assert isinstance(row.seconds["vm"], NotAvailable)
    assert row.seconds["vm"].reason.startswith("wrong result: loss ")


def test_busy_row_runs_beside_one_busy_process_per_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[set[int]] = []
    original = run.mlp_row

    def spy(ctx: run.Context, dtype: str = "float64") -> run.Row:
        seen.append(busy_pids())
        return original(ctx, dtype)

    monkeypatch.setattr(run, "mlp_row", spy)
    before = busy_pids()
    row = run.busy_mlp_row(context(["vm", "c"]))
    assert len(seen[0] - before) == busy.cpu_count()
    assert busy_pids() == before  # all stopped
    assert f"busy machine ({busy.cpu_count()} busy processes)" in row.case
    assert isinstance(row.seconds["vm"], float)
    assert isinstance(row.seconds["c+load"], float)  # c with the load followed, beside c
    assert "cvm+load" not in row.seconds


def test_busy_processes_stop_when_the_block_raises() -> None:
    before = busy_pids()
    with pytest.raises(KeyboardInterrupt), busy.busy_machine(2, settle_s=0.0) as n:
        assert n == 2 and len(busy_pids() - before) == 2
        raise KeyboardInterrupt
    assert busy_pids() == before


def test_busy_processes_end_with_the_process_that_started_them() -> None:
    code = "import busy, os\nwith busy.busy_machine(1, settle_s=0.5):\n    os._exit(0)"
    here = str(Path(__file__).resolve().parent)
    before = busy_pids()
    subprocess.run([sys.executable, "-c", code], cwd=here, check=True, timeout=30)
    for _ in range(50):
        if busy_pids() == before:
            break
        time.sleep(0.1)
    assert busy_pids() == before


def test_busy_machine_needs_one_process() -> None:
    with pytest.raises(ValueError, match="need at least one busy process, got 0"):
        with busy.busy_machine(0):
            pass


def test_quick_leaves_the_busy_row_out_unless_asked() -> None:
    assert run.parse_args(["--quick"]).busy is False
    assert run.parse_args(["--quick", "--busy"]).busy is True


def test_compile_rows_say_why_jax_has_no_time() -> None:
    ctx = context(["vm"], NotAvailable("not installed"))
    assert ctx.jax_none("see the compile-scaling table") == {
        run.scaling.JAX_COLUMN: NotAvailable("see the compile-scaling table")
    }
    assert context(["vm"]).jax_none("anything") == {}


@needs_jax
@pytest.mark.parametrize(
    ("case", "params"),
    [
        ("overhead", {}),
        ("fused", {"n": 1000}),
        ("sum_squares", {"n": 1000}),
        ("chain", {}),
        ("mlp", {"dtype": "float64"}),
        ("mlp", {"dtype": "float32"}),
    ],
)
def test_jax_side_checks_and_times_each_case(case: str, params: dict[str, object]) -> None:
    side = jax_env.JaxSide(jax_env.venv_python(JAX_VENV))
    assert isinstance(side.time_case(case, TINY, **params), float)


@needs_jax
def test_jax_column_is_in_the_table_when_jax_runs() -> None:
    ctx = context(["vm"], jax_env.JaxSide(jax_env.venv_python(JAX_VENV)))
    row = run.chain_row(ctx)
    assert isinstance(row.seconds[run.scaling.JAX_COLUMN], float)
    text = markdown_table([row], ["vm", run.scaling.JAX_COLUMN])
    assert text.splitlines()[0].startswith("| case | reference | vm | JAX jit |")
