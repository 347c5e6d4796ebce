"""The runtime needs NumPy only: SciPy, installed for the tests' reference values, is
not imported by opweave or its backends when a graph does not need it. Two kinds of nodes
import it when they are compiled or run:

- the Schur and QZ decompositions (NumPy has none) need it, and say so when it is missing
  (tests/core/test_linalg_schur.py);
- Cholesky and the solvers of ``opweave.tensor.slinalg`` use SciPy's LAPACK when SciPy is
  installed, in the Python kernels (``scipy.linalg.lapack``) and the C code
  (``scipy.linalg.cython_lapack``), so that every linker gives the same numbers; without
  SciPy both run the Python kernels on NumPy's LAPACK
  (tests/backend_python/test_slinalg_lapack.py)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
import numpy as np
import opweave
import opweave.tensor as ot
x = ot.dvector("x")
fns = [ot.erf(x), ot.erfc(x), ot.gammaln(x), ot.jv(2.5, x), ot.owens_t(x, 0.5)]
for linker in ("vm", "cvm"):
    f = opweave.function([x], fns, mode=opweave.Mode(linker=linker))
    f(np.linspace(0.1, 2.0, 5))
print(sorted(name for name in sys.modules if name == "scipy" or name.startswith("scipy.")))
"""


def test_compiling_and_running_special_functions_imports_no_scipy() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


NUMPY_MA = """
import sys
import numpy as np
import opweave
import opweave.tensor as ot
x = ot.dvector("x")
f = opweave.function([x], ot.tanh(x * 1.5 + 0.1) + ot.mean(x) * 0.01)
shared = opweave.shared(np.ones(3))
f(np.linspace(0.1, 2.0, 5))
print("numpy.ma" in sys.modules)
"""


def test_building_and_compiling_a_graph_does_not_import_numpy_ma() -> None:
    """NumPy loads ``numpy.ma`` on first use, which costs milliseconds of every first
    compile; telling masked arrays apart (they are refused) must not load it."""
    done = subprocess.run(
        [sys.executable, "-c", NUMPY_MA], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False"
