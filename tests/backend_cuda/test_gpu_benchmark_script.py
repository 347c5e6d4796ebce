"""``benchmarks/gpu_run.py`` runs every case end to end (here on whatever device the
``cuda`` tests use) and finds opweave's results equal to NumPy's; its times are not judged."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.cuda
def test_every_case_runs_and_agrees_with_numpy(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import gpu_layouts
    import gpu_run

    try:
        status = gpu_run.main(["--quick", "--n", "65536", "--no-cupy", "--no-torch"])
    finally:
        for name in ("gpu_run", "gpu_layouts", "workloads", "report", "timing"):
            sys.modules.pop(name, None)
    report = capsys.readouterr().out
    assert status == 0
    rows = [line for line in report.splitlines() if line.startswith("| ") and "---" not in line]
    cases = [row.split(" | ")[0].removeprefix("| ") for row in rows[1:]]
    for name in [c.name for c in gpu_layouts.CASES] + ["sum(x ** 2), n=65536 float32"]:
        assert name in cases
    assert len(cases) == 5 + len(gpu_layouts.CASES)
    assert "WRONG RESULT" not in report
    opweave_cells = [row.split(" | ")[2] for row in rows[1:]]
    assert not [cell for cell in opweave_cells if cell.startswith("n/a")]
