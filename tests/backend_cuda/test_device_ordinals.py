"""``config.device="cuda<N>"`` computes on device ``N``: a process uses the device its first
GPU compilation names, a number the driver does not report is a ``ValueError`` listing the
devices, and another number later in the same process is refused. Checked on the emulated
device with two devices (``cuda``: skips on a real GPU, whose devices the test cannot
choose)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave_cuda.availability import device_ordinal

pytestmark = pytest.mark.cuda


@pytest.fixture
def two_devices(fresh_pycuda: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fresh emulated driver that reports two devices; yields ``pycuda.driver``."""
    pycuda = pytest.importorskip("pycuda")
    if not getattr(pycuda, "EMULATED", False):
        pytest.skip("needs the emulated device (a chosen number of devices)")
    import pycuda.driver as drv

    monkeypatch.setenv(drv.DEVICES_VARIABLE, "2")
    return drv


def _compile(device: str) -> Any:
    x = ot.vector("x")
    with opweave.config.change_flags(device=device):
        return opweave.function([x], ot.exp(x) * 2)


def test_device_ordinal_parsing() -> None:
    assert device_ordinal("cuda") is None and device_ordinal("cpu") is None
    assert device_ordinal("cuda0") == 0 and device_ordinal("cuda12") == 12


def test_cuda1_computes_on_device_1(two_devices: Any) -> None:
    f = _compile("cuda1")
    values = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(f(values), np.exp(values) * 2, rtol=1e-15)
    assert two_devices.Context.get_device().number == 1
    # 'cuda' and 'cuda1' are this process's device; 'cuda0' is refused, naming both
    np.testing.assert_allclose(_compile("cuda")(values), np.exp(values) * 2, rtol=1e-15)
    _compile("cuda1")
    with pytest.raises(ValueError, match=r"device='cuda0'.*already computes on cuda1"):
        _compile("cuda0")


def test_a_device_the_driver_does_not_report_is_refused(two_devices: Any) -> None:
    with pytest.raises(ValueError, match=r"no CUDA device 2.*cuda0 \(.*\), cuda1 \(.*\)"):
        _compile("cuda2")
    f = _compile("cuda0")  # nothing was chosen by the refused compilation
    np.testing.assert_allclose(f(np.zeros(3)), np.full(3, 2.0))
    assert two_devices.Context.get_device().number == 0
