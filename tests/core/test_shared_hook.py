"""The ``opweave_shared`` hook: ``shared(..., target=...)`` for targets a plugin provides."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
from opweave.plugins import hookimpl
from opweave.plugins.manager import create_plugin_manager, use_plugin_manager
from opweave.tensor.sharedvar import TensorSharedVariable


class _FakeDevicePlugin:
    """Answers target 'fake' with an ordinary tensor shared variable, remembering the call."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    @hookimpl
    def opweave_shared(self, value, name, strict, allow_downcast, borrow, shape, target):
        if target != "fake":
            return None
        self.calls.append(
            dict(
                name=name,
                strict=strict,
                allow_downcast=allow_downcast,
                borrow=borrow,
                shape=shape,
                target=target,
            )
        )
        return opweave.shared(value, name=name)


def test_a_plugin_answers_its_target_with_all_arguments() -> None:
    pm = create_plugin_manager(autoload=False)
    plugin = _FakeDevicePlugin()
    pm.register(plugin)
    with use_plugin_manager(pm):
        s = opweave.shared(
            np.zeros(3),
            name="s",
            strict=True,
            allow_downcast=False,
            borrow=True,
            shape=(3,),
            target="fake",
        )
    assert isinstance(s, TensorSharedVariable) and s.name == "s"
    assert plugin.calls == [
        dict(name="s", strict=True, allow_downcast=False, borrow=True, shape=(3,), target="fake")
    ]


def test_no_answer_keeps_the_core_error() -> None:
    pm = create_plugin_manager(autoload=False)
    pm.register(_FakeDevicePlugin())
    with use_plugin_manager(pm), pytest.raises(ValueError, match="target 'other'"):
        opweave.shared(np.zeros(3), target="other")


def test_cpu_targets_never_ask_the_hook() -> None:
    pm = create_plugin_manager(autoload=False)
    plugin = _FakeDevicePlugin()
    pm.register(plugin)
    with use_plugin_manager(pm):
        assert isinstance(opweave.shared(np.zeros(2), target="cpu"), TensorSharedVariable)
        assert isinstance(opweave.shared(np.zeros(2)), TensorSharedVariable)
    assert plugin.calls == []
