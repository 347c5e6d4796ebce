"""The plugin: loading without pycuda, backend info, and the errors when the GPU is missing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import types

import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.device import DeviceUnavailableError
from opweave.link.lookup import LinkerUnavailableError, available_linkers, resolve_linker
from opweave_cuda import CudaUnavailableError, availability, plugin
from opweave_cuda.impls import FACTORIES, gpu_op_classes
from opweave_cuda.linker import CudaLinker

HAS_PYCUDA = importlib.util.find_spec("pycuda") is not None
NO_PYCUDA_REASON = "pycuda is not installed (pip install 'opweave-cuda[pycuda]')"


@pytest.fixture
def fresh_availability():
    """Forget the cached answer before and after the test."""
    availability.cuda_problem.cache_clear()
    yield availability
    availability.cuda_problem.cache_clear()


def test_plugin_is_loaded_from_its_entry_point() -> None:
    records = {r.name: r for r in opweave.get_plugin_manager().records}
    assert records["cuda"].loaded and records["cuda"].distribution == "opweave-cuda"
    assert available_linkers()["cuda"] is CudaLinker


def test_importing_the_plugin_does_not_import_pycuda() -> None:
    code = (
        "import sys, opweave_cuda.plugin, opweave_cuda.rewrites, opweave_cuda.impls\n"
        "print('pycuda' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


def test_backend_info_without_pycuda(monkeypatch, fresh_availability) -> None:
    monkeypatch.setattr(availability.importlib.util, "find_spec", lambda name: None)
    info = plugin.opweave_backend_info()
    assert info == {
        "name": "opweave-cuda",
        "linkers": ["cuda"],
        "devices": ["cuda"],
        "available": False,
        "reason": NO_PYCUDA_REASON,
        "implementations": plugin.IMPLEMENTATIONS,
    }


def test_published_implementations_are_the_gpu_factories() -> None:
    table = plugin.IMPLEMENTATIONS
    assert dict(table) == dict(FACTORIES) and table.backend == "cuda"
    assert table.scope() == gpu_op_classes()
    assert table.missing() == FACTORIES.missing()


def test_compiling_for_the_cpu_imports_no_gpu_implementation(fresh_python) -> None:
    code = (
        "import sys, numpy, opweave, opweave.tensor as ot\n"
        "x = ot.dvector('x')\n"
        "f = opweave.function([x], ot.exp(x) * 2.0 + x, mode=opweave.Mode(linker='vm'))\n"
        "assert (f(numpy.zeros(2)) == 2.0).all()\n"
        "info = [i for i in opweave.get_plugin_manager().hook.opweave_backend_info()\n"
        "        if i['name'] == 'opweave-cuda']\n"
        "print('opweave_cuda.impls' in sys.modules, info[0]['implementations'].loaded)\n"
    )
    assert fresh_python(code).split() == ["False", "False"]


def test_backend_info_without_a_driver(monkeypatch, fresh_availability) -> None:
    fake_driver = types.ModuleType("pycuda.driver")

    def init() -> None:
        raise RuntimeError("cuInit failed: no CUDA-capable device is detected")

    fake_driver.init = init  # type: ignore[attr-defined]
    fake_pkg = types.ModuleType("pycuda")
    fake_pkg.driver = fake_driver  # type: ignore[attr-defined]
    monkeypatch.setattr(availability.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setitem(sys.modules, "pycuda", fake_pkg)
    monkeypatch.setitem(sys.modules, "pycuda.driver", fake_driver)
    info = plugin.opweave_backend_info()
    assert info["available"] is False
    assert info["reason"] == (
        "no CUDA driver/device: RuntimeError: cuInit failed: no CUDA-capable device is detected"
    )


@pytest.mark.skipif(HAS_PYCUDA, reason="checks the machine without pycuda")
def test_opweave_info_reports_the_backend_unavailable(machine_without_pycuda: None) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "opweave", "info"], capture_output=True, text=True, check=True
    ).stdout
    assert f"opweave-cuda: linkers cuda; unavailable ({NO_PYCUDA_REASON})" in out
    assert "cuda = opweave_cuda.plugin [opweave-cuda 0.1.0]: loaded" in out


def test_auto_linker_never_picks_cuda() -> None:
    assert resolve_linker("auto") is not CudaLinker
    assert CudaLinker.priority < 0 and CudaLinker.rewrite_tags == ("cuda",)


def _unavailable(monkeypatch) -> None:
    monkeypatch.setattr(availability, "cuda_problem", lambda: NO_PYCUDA_REASON)


def test_device_cuda_when_unavailable_is_a_clear_compile_error(monkeypatch) -> None:
    _unavailable(monkeypatch)
    x = ot.fvector("x")
    with opweave.config.change_flags(device="cuda"):
        with pytest.raises(DeviceUnavailableError) as info:
            opweave.function([x], ot.exp(x))
    msg = str(info.value)
    assert "device='cuda'" in msg and "opweave-cuda" in msg and NO_PYCUDA_REASON in msg
    with opweave.config.change_flags(device="cuda1"), pytest.raises(DeviceUnavailableError):
        opweave.function([x], ot.exp(x))


def test_linker_cuda_when_unavailable_is_a_clear_compile_error(monkeypatch) -> None:
    _unavailable(monkeypatch)
    x = ot.fvector("x")
    with pytest.raises(
        LinkerUnavailableError,
        match=r"linker 'cuda' cannot be used here: opweave-cuda is installed but unavailable: "
        r"pycuda is not installed",
    ):
        opweave.function([x], ot.exp(x), mode=opweave.Mode(linker="cuda"))


def test_shared_on_cuda_when_unavailable_is_a_clear_error(monkeypatch) -> None:
    import numpy as np

    _unavailable(monkeypatch)
    with pytest.raises(CudaUnavailableError, match=r"target='cuda'.*opweave-cuda\[pycuda\]"):
        opweave.shared(np.zeros(3), target="cuda")


def test_cpu_compiles_are_unaffected_by_the_missing_gpu(monkeypatch) -> None:
    import numpy as np

    _unavailable(monkeypatch)
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x))
    np.testing.assert_allclose(f(np.zeros(2)), [1.0, 1.0])


@pytest.mark.parametrize("linker", ["vm", "cvm", "cuda"])
def test_gpu_compiles_link_without_pycuda_when_reported_available(monkeypatch, linker) -> None:
    # Linking builds every GPU node's kernels (no pycuda needed); only calling needs a GPU.
    monkeypatch.setattr(availability, "cuda_problem", lambda: None)
    x, y = ot.fmatrix("x"), ot.fmatrix("y")
    outs = [ot.sum(ot.exp(x) * y, axis=0), ot.dot(x, y.T)[1:, ::2].reshape((-1,)), ot.max(x)]
    with opweave.config.change_flags(device="cuda" if linker != "cuda" else "cpu"):
        f = opweave.function([x, y], outs, mode=opweave.Mode(linker=linker))
    names = {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}
    assert {"GpuElemwise", "GpuCAReduce", "GpuDot", "GpuSubtensor", "GpuReshape"} <= names
    assert not names & {"Elemwise", "Sum", "Max", "Dot", "Subtensor", "Reshape"}
