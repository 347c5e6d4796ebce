"""Installing opweave-jax costs nothing to users of other linkers: JAX is imported by the
first ``jax``-linker function, not by the plugin."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
import numpy as np
import opweave
import opweave.tensor as pt
from opweave.compile.mode import get_mode

x = pt.dvector("x")
f = opweave.function([x], pt.exp(x).sum(), mode=opweave.Mode(linker="py"))
assert f(np.zeros(3)) == 3.0
assert get_mode("JAX").linker == "jax"
print("jax" in sys.modules)
g = opweave.function([x], pt.exp(x).sum(), mode="JAX")
assert g(np.zeros(3)) == 3.0
print("jax" in sys.modules)
"""


def test_jax_is_imported_by_the_first_jax_function_only() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.split() == ["False", "True"]
