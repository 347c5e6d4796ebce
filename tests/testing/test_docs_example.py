"""The complete example of docs/testing-plugins.md runs, on the plugin of docs/plugins.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _blocks(page: str, first_line: str) -> list[str]:
    text = (DOCS / page).read_text()
    return [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if b.startswith(first_line)]


def test_the_example_test_file_passes(tmp_path: Path) -> None:
    package = tmp_path / "opweave_finite"
    package.mkdir()
    plugin = _blocks("plugins.md", "# opweave_finite/__init__.py")
    assert plugin, "docs/plugins.md has no opweave_finite blocks"
    (package / "__init__.py").write_text("\n".join(plugin))
    tests = tmp_path / "tests"
    tests.mkdir()
    (example,) = _blocks("testing-plugins.md", "# tests/test_conformance.py")
    (tests / "test_conformance.py").write_text(example)
    (tests / "conftest.py").write_text(
        "import opweave_finite\nfrom opweave.plugins import get_plugin_manager\n"
        "get_plugin_manager().register(opweave_finite, name='finite')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(tests),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "5 passed, 1 skipped" in run.stdout
