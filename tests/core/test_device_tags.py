"""``config.device`` and linker ``rewrite_tags``: which rewrites a compilation includes."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.device import DeviceUnavailableError, device_kind, device_rewrite_tags
from opweave.graph.rewriting import node_rewriter
from opweave.plugins import hookimpl
from opweave.plugins.manager import create_plugin_manager, use_plugin_manager
from opweave_python.linkers.vm import VMLinker


def test_device_kind() -> None:
    assert device_kind("cpu") == "cpu"
    assert device_kind("cuda") == "cuda"
    assert device_kind("cuda3") == "cuda"


class _Backend:
    def __init__(self, available: bool, reason: str | None = None) -> None:
        self.available, self.reason = available, reason

    @hookimpl
    def opweave_backend_info(self):
        return {
            "name": "fake-backend",
            "linkers": [],
            "devices": ["fake"],
            "available": self.available,
            "reason": self.reason,
        }


def test_cpu_adds_no_tags() -> None:
    assert device_rewrite_tags("cpu", create_plugin_manager(autoload=False)) == ()


def test_an_available_provider_adds_the_kind_as_a_tag() -> None:
    pm = create_plugin_manager(autoload=False)
    pm.register(_Backend(True))
    assert device_rewrite_tags("fake2", pm) == ("fake",)


def test_an_unavailable_provider_gives_its_reason() -> None:
    pm = create_plugin_manager(autoload=False)
    pm.register(_Backend(False, "no fake hardware"))
    with pytest.raises(DeviceUnavailableError, match="fake-backend: no fake hardware"):
        device_rewrite_tags("fake", pm)


def test_no_provider_names_the_distribution() -> None:
    pm = create_plugin_manager(autoload=False)
    with pytest.raises(DeviceUnavailableError, match="install opweave-cuda"):
        device_rewrite_tags("cuda", pm)


# A rewrite tagged only "marked": it runs only when a device or a linker adds that tag.
@node_rewriter(None)
def _exp_to_log(fgraph, node):
    if getattr(node.op, "scalar_op", None) is not None and str(node.op.scalar_op) == "exp":
        return [ot.log(node.inputs[0])]
    return False


class _MarkedLinker(VMLinker):
    name = "marked"
    rewrite_tags = ("marked",)


class _TaggingPlugin:
    @hookimpl
    def opweave_rewrites(self, db):
        db.register("exp_to_log", _exp_to_log, "marked", "cuda", position=5)

    @hookimpl
    def opweave_linkers(self):
        return {"marked": _MarkedLinker}

    @hookimpl
    def opweave_backend_info(self):
        return {
            "name": "marked-backend",
            "linkers": ["marked"],
            "devices": ["cuda"],
            "available": True,
            "reason": None,
        }


def _plugin_manager():
    # Only the Python backend and this plugin: the plugin provides the device kind "cuda".
    import opweave_python.plugin

    pm = create_plugin_manager(autoload=False)
    pm.register(opweave_python.plugin, name="python")
    pm.register(_TaggingPlugin())
    return pm


def test_linker_rewrite_tags_and_device_select_tagged_rewrites() -> None:
    x = ot.dvector("x")
    value = np.array([1.0, 2.0])
    with use_plugin_manager(_plugin_manager()):
        plain = opweave.function([x], ot.exp(x), mode=opweave.Mode(linker="vm"))
        np.testing.assert_allclose(plain(value), np.exp(value))
        tagged = opweave.function([x], ot.exp(x), mode=opweave.Mode(linker="marked"))
        np.testing.assert_allclose(tagged(value), np.log(value))
        with opweave.config.change_flags(device="cuda"):
            by_device = opweave.function([x], ot.exp(x), mode=opweave.Mode(linker="vm"))
        np.testing.assert_allclose(by_device(value), np.log(value))
