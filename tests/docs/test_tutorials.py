"""The tutorials of the documentation site work: every ```python block of every page runs.

The blocks of a page run in order in one namespace (later blocks see the names earlier ones
defined), as a reader pasting them into one session would run them. Output a page shows is
checked by ``assert`` statements in the blocks themselves. A block whose info string is
``python no-run`` is shown but not run; such blocks must stay rare.
Tracebacks point at the page's own line numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import opweave

DOCS = Path(__file__).resolve().parents[2] / "docs"
TUTORIALS = DOCS / "tutorials"
PAGES = [
    "getting-started",
    "graph-structures",
    "making-a-type",
    "making-an-op",
    "c-code",
    "rewrites",
    "plugins-and-backends",
    "performance",
]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
MAX_NO_RUN = 2


class Block(NamedTuple):
    """One fenced code block of a page."""

    number: int  # 1-based among the page's python blocks
    line: int  # line of the page where the code starts
    info: str
    code: str


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` whose language is ``python``, in order."""
    text = page.read_text()
    found = []
    for match in FENCE.finditer(text):
        info = match.group(1).strip()
        if info.split(" ")[0] != "python":
            continue
        line = text.count("\n", 0, match.start(2)) + 1
        found.append(Block(len(found) + 1, line, info, match.group(2)))
    return found


def run_page(page: Path) -> dict[str, Any]:
    """Exec the runnable python blocks of ``page`` into one namespace and return it."""
    namespace: dict[str, Any] = {"__name__": f"tutorial_{page.stem.replace('-', '_')}"}
    for block in blocks(page):
        if block.info == "python no-run":
            continue
        code = compile("\n" * (block.line - 1) + block.code, str(page), "exec")
        try:
            exec(code, namespace)
        except Exception as exc:
            where = page.relative_to(DOCS) if page.is_relative_to(DOCS) else page.name
            raise AssertionError(
                f"{where}: python block {block.number} (line {block.line}) "
                f"failed: {type(exc).__name__}: {exc}"
            ) from exc
    return namespace


@pytest.fixture
def restored_config() -> Iterator[None]:
    """Put back every flag a page changed, so pages cannot leak settings into other tests."""
    before = {info.name: info.value for info in opweave.config.flags()}
    yield
    for info in opweave.config.flags():
        if info.name in before and info.value != before[info.name]:
            setattr(opweave.config, info.name, before[info.name])


@pytest.mark.parametrize("name", PAGES)
def test_every_python_block_of_the_page_runs(name: str, restored_config: None) -> None:
    page = TUTORIALS / f"{name}.md"
    found = blocks(page)
    assert len(found) >= 3, f"{page.name} has too few python blocks"
    assert sum(b.info == "python no-run" for b in found) <= MAX_NO_RUN, page.name
    assert {b.info for b in found} <= {"python", "python no-run"}, page.name
    run_page(page)


def test_every_tutorial_is_in_the_table_of_contents() -> None:
    index = (DOCS / "index.md").read_text()
    assert sorted(p.stem for p in TUTORIALS.glob("*.md")) == sorted(PAGES)
    for name in PAGES:
        assert f"tutorials/{name}\n" in index, name


def test_a_failing_block_names_its_page_and_number(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n```python\nx = 1\n```\n\n```python no-run\nraise SystemExit\n```\n\n"
        "```python\nassert x == 2, 'x is 1'\n```\n"
    )
    found = blocks(page)
    assert [(b.number, b.line, b.info) for b in found] == [
        (1, 4, "python"),
        (2, 8, "python no-run"),
        (3, 12, "python"),
    ]
    with pytest.raises(AssertionError, match=r"page\.md: python block 3 \(line 12\) failed"):
        run_page(page)
