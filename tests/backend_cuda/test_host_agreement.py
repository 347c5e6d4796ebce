"""Where the GPU's own conventions differ from NumPy's, the CUDA backend gives the CPU
backends' results (``cuda``: needs a GPU): float to integer casts, reductions without an
identity over an empty axis, and a clean process exit with device arrays still alive."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import opweave
import opweave.tensor as ot

pytestmark = pytest.mark.cuda

VALUES = [-1.0, np.nan, 300.0, 1e10, -1e10, 3.7, -3.7, 3e9, 2.0**63, 2.0**64, -(2.0**63)]
VALUES += [65535.9, 70000.0, -129.5, np.inf]
TARGETS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


@pytest.mark.parametrize("source", ["float64", "float32", "float16"])
@pytest.mark.parametrize("target", TARGETS)
def test_float_to_int_cast_matches_the_c_backend(source: str, target: str) -> None:
    x = ot.vector("x", dtype=source)
    out = ot.cast(x * 1, target)
    values = np.array(VALUES, dtype=source)
    gpu = opweave.function([x], out, mode=opweave.Mode(linker="cuda"))(values)
    cpu = opweave.function([x], out, mode=opweave.Mode(linker="cvm"))(values)
    keep = np.ones(len(values), bool)
    if source == "float16" and target == "uint32":
        # cvm runs float16 casts through NumPy, whose float16 loop maps NaN and -inf to 0 in
        # uint32 where its float32/float64 loops (and the C code) give 2**31.
        keep = np.isfinite(values)
    np.testing.assert_array_equal(np.asarray(gpu)[keep], cpu[keep])


@pytest.mark.parametrize(("reduce", "name"), [(ot.max, "maximum"), (ot.min, "minimum")])
def test_extremum_of_an_empty_axis_raises_as_on_the_cpu(reduce: object, name: str) -> None:
    x = ot.matrix("x")
    f = opweave.function([x], reduce(x, axis=0), mode=opweave.Mode(linker="cuda"))  # type: ignore[operator]
    np.testing.assert_array_equal(np.asarray(f(np.ones((2, 3)))), np.ones(3))
    with pytest.raises(ValueError, match=f"zero-size array to reduction operation {name}"):
        f(np.ones((0, 3)))


def test_process_exits_cleanly_with_device_arrays_alive() -> None:
    """Arrays that outlive the atexit handlers (module globals) are freed without an abort."""
    script = textwrap.dedent(
        """
        import numpy as np
        import opweave, opweave.tensor as ot
        x = ot.vector("x")
        f = opweave.function([x], ot.exp(x) * 2, mode=opweave.Mode(linker="cuda"))
        KEPT = [f(np.arange(1000.0)) for _ in range(3)]
        SHARED = opweave.shared(np.ones(4096), target="cuda")
        from opweave_cuda.device_copy import empty
        HELD = empty((1000,), "float32")
        print("ok")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok"
    assert "terminate called" not in proc.stderr


def test_fused_float16_rounds_after_every_operation_as_numpy() -> None:
    """``a * b + a`` fused into one kernel rounds ``a * b`` to float16 before the addition,
    as NumPy (and the CPU backends, one operation at a time) do."""
    rng = np.random.default_rng(4)
    a, b = (rng.uniform(0.5, 2.0, size=100_000).astype("float16") for _ in range(2))
    x, y = ot.vector("x", dtype="float16"), ot.vector("y", dtype="float16")
    f = opweave.function([x, y], x * y + x, mode=opweave.Mode(linker="cuda"))
    fused = [n for n in f.maker.fgraph.apply_nodes if "Composite" in str(n.op)]
    assert fused, "the graph is fused into one elementwise kernel"
    np.testing.assert_array_equal(np.asarray(f(a, b)), a * b + a)
