"""The C linkers say which part of a long compile runs: generating C, compiling modules."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode


@pytest.mark.parametrize("linker", ["c", "cvm"])
def test_c_linkers_report_generation_and_compilation(capsys, linker: str) -> None:
    x = ot.dvector("x")
    with opweave.config.change_flags(compile__progress_delay=0):
        f = opweave.function([x], ot.tanh(x) * 3.0 - x, mode=Mode(linker=linker))
    np.testing.assert_allclose(f(np.ones(3)), np.tanh(1.0) * 3.0 - 1.0)
    lines = capsys.readouterr().err.splitlines()
    generating = [i for i, line in enumerate(lines) if line.startswith("opweave: generating C")]
    compiling = [i for i, line in enumerate(lines) if "compiling C module" in line]
    assert generating and compiling and generating[0] < compiling[0]
    assert lines[compiling[-1]].endswith("1 of 1")
