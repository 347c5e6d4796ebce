"""docs/plugins.md works: its plugin, exec'd block by block, runs on every linker.

Each ```python block of the guide starts with a comment naming the file it belongs to:
the plugin's module (``opweave_finite/__init__.py``) or its test file
(``tests/test_finite.py``). The plugin's blocks are run, in order, into one module object,
which is registered by hand, as an installed entry point would be; then the guide's own
tests are run. The guide lives in the repository, not in any wheel: these tests read it
from the checkout.
"""

from __future__ import annotations

import ast
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import opweave
from opweave.compile import Mode
from opweave.compile.debugmode import DebugMode
from opweave.plugins import get_plugin_manager, hookspecs

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
PLUGIN_FILE = "# opweave_finite/__init__.py"
TEST_FILE = "# tests/test_finite.py"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks() -> list[tuple[int, str]]:
    """``(first line number, code)`` of every python block of the guide, in order."""
    text = GUIDE.read_text()
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in BLOCK.finditer(text)]


def run_blocks(header: str, namespace: dict[str, Any]) -> int:
    """Exec the blocks starting with ``header`` into ``namespace``; return how many.

    Tracebacks point at the guide's own line numbers.
    """
    count = 0
    for line, code in python_blocks():
        if code.splitlines()[0] == header:
            exec(compile("\n" * (line - 1) + code, str(GUIDE), "exec"), namespace)
            count += 1
    return count


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The guide's plugin, as the module ``opweave_finite``, registered by hand."""
    module = types.ModuleType("opweave_finite")
    module.__file__ = str(GUIDE)
    monkeypatch.setitem(sys.modules, "opweave_finite", module)
    assert run_blocks(PLUGIN_FILE, module.__dict__) >= 4
    get_plugin_manager().register(module, name="finite")
    return module


def test_every_block_belongs_to_the_plugin_or_its_tests() -> None:
    blocks = python_blocks()
    assert len(blocks) >= 5
    for line, code in blocks:
        assert code.splitlines()[0] in (PLUGIN_FILE, TEST_FILE), f"docs/plugins.md:{line}"
        ast.parse(code)


def test_the_guides_own_tests_pass(plugin: types.ModuleType) -> None:
    namespace: dict[str, Any] = {"__name__": "test_finite"}
    assert run_blocks(TEST_FILE, namespace) == 1
    tests = [fn for name, fn in namespace.items() if name.startswith("test_")]
    assert len(tests) >= 4
    for test in tests:
        test()


@pytest.mark.parametrize("linker", ["py", "vm", "c", "cvm", "DebugMode"])
def test_the_plugin_op_runs_and_refuses_alike(plugin: types.ModuleType, linker: str) -> None:
    mode = DebugMode() if linker == "DebugMode" else Mode(linker=linker)
    x = plugin.finite("x")
    f = opweave.function([x], [plugin.Scale(2.0)(plugin.Scale(-1.5)(x)), x], mode=mode)
    assert [n.op for n in f.maker.fgraph.toposort() if isinstance(n.op, plugin.Scale)] == [
        plugin.Scale(-3.0)
    ]
    assert f(2.0) == [-6.0, 2.0]
    with pytest.raises(ValueError, match=r"argument 0 \(name 'x'\).*inf is not finite"):
        f(float("inf"))
    with pytest.raises(TypeError, match="expected a real number, got str"):
        f("2")
    assert f(3) == [-9.0, 3.0]


def test_the_c_linkers_compile_the_plugin_op(plugin: types.ModuleType) -> None:
    x = plugin.finite("x")
    f = opweave.function([x], plugin.Scale(0.5)(x), mode=Mode(linker="cvm"))
    assert f.fn.c_nodes == [0]
    g = opweave.function([x], [plugin.Scale(0.5)(x), x], mode=Mode(linker="c"))
    assert g(4.0) == [2.0, 4.0]


def _listed_hooks(table: str) -> list[str]:
    return sorted(re.findall(r"^\| `(opweave_\w+)\(", table, re.M))


def _specs(module: types.ModuleType) -> list[str]:
    return sorted(name for name in vars(module) if name.startswith("opweave_"))


def test_the_hook_tables_list_every_hook() -> None:
    from opweave_c import hookspecs as c_hookspecs

    text = GUIDE.read_text()
    section = text[text.index("## 7. Every hook") : text.index("## 8.")]
    core_table, _, c_table = section.partition("| opweave-c hook |")
    assert _listed_hooks(core_table) == _specs(hookspecs), "core table != opweave.plugins.hookspecs"
    assert _listed_hooks(c_table) == _specs(c_hookspecs), "C table != opweave_c.hookspecs"
    assert {"opweave_shared", "opweave_backend_info", "opweave_implementation"} <= set(
        _listed_hooks(core_table)
    )


def test_requirements_are_ranges_never_pins() -> None:
    text = GUIDE.read_text()
    assert '"opweave>=0.1,<0.2"' in text
    assert "==" not in re.sub(r"```python.*?```", "", text, flags=re.S)
