"""Where opweave-python's implementations live: an Op's implementation is in the module of
``opweave_python.impls`` named after the core module that defines the Op
(``docs/architecture.md``, "A new Op in the standard library").

Three names are read differently: ``scalar`` covers the whole package ``opweave.scalar``
(``basic``, ``composite``, ``math``), ``random`` the whole package
``opweave.tensor.random``, and ``compile_ops`` is ``opweave.compile.ops``.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

from opweave_python import impls

#: Implementation module name -> the core package it covers whole (instead of the rule).
PACKAGE_MODULES = {
    "scalar": "opweave.scalar",
    "random": "opweave.tensor.random",
    "scan": "opweave.scan",
    "sparse": "opweave.sparse",
}
#: Implementation module name -> the core module it is named for (instead of the rule).
RENAMED_MODULES = {"compile_ops": "opweave.compile.ops"}


def _impl_modules() -> list[ModuleType]:
    return [
        importlib.import_module(f"{impls.__name__}.{info.name}")
        for info in pkgutil.iter_modules(impls.__path__)
    ]


def _belongs(module_name: str, op_class: type) -> bool:
    core = op_class.__module__
    if module_name in PACKAGE_MODULES:
        package = PACKAGE_MODULES[module_name]
        return core == package or core.startswith(package + ".")
    if module_name in RENAMED_MODULES:
        return core == RENAMED_MODULES[module_name]
    return core.startswith("opweave.") and core.rsplit(".", 1)[-1] == module_name


MODULES_WITH_TABLES = [m for m in _impl_modules() if hasattr(m, "PERFORMS")]


def test_every_implementation_module_is_merged() -> None:
    assert MODULES_WITH_TABLES, "no implementation module found"
    assert set(MODULES_WITH_TABLES) == set(impls.implementation_modules())
    merged: dict[type, object] = {}
    for module in MODULES_WITH_TABLES:
        for cls, fn in module.PERFORMS.items():
            assert cls not in merged, f"{cls.__qualname__} is in two implementation modules"
            merged[cls] = fn
    assert merged == dict(impls.PERFORMS.items())


@pytest.mark.parametrize("module", MODULES_WITH_TABLES, ids=lambda m: m.__name__.rsplit(".")[-1])
def test_implementations_live_in_the_module_named_after_the_op_module(module: ModuleType) -> None:
    name = module.__name__.rsplit(".", 1)[-1]
    misplaced = {
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in module.PERFORMS
        if not _belongs(name, cls)
    }  # fmt: skip
    assert not misplaced, f"{module.__name__} implements Ops of other core modules: {misplaced}"


def test_loading_the_plugin_imports_no_implementation_module(fresh_python) -> None:
    code = (
        "import sys, opweave\n"
        "opweave.get_plugin_manager()\n"
        "from opweave_python.impls import PERFORMS\n"
        "before = sorted(m for m in sys.modules if m.startswith('opweave_python.impls.'))\n"
        "from opweave.scalar.basic import Add\n"
        "print(before, PERFORMS.loaded, PERFORMS.lookup(Add) is not None, PERFORMS.loaded)\n"
    )
    assert fresh_python(code).split() == ["[]", "False", "True", "True"]
