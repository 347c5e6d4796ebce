"""docs/architecture.md states the floors the import test enforces, and the linkers' shape."""

from __future__ import annotations

import re
from pathlib import Path

from opweave import _layers

PAGE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def test_the_floor_table_is_the_enforced_one() -> None:
    text = PAGE.read_text()
    table = text[text.index("| floor | parts |") : text.index("## Distributions")]
    stated: dict[str, int] = {}
    for floor, parts in re.findall(r"^\| (\d+) \| ([^|]+) \|", table, re.M):
        if "the `opweave` package" in parts:
            stated[""] = int(floor)
            parts = parts.replace("the `opweave` package", "")
        for part in re.findall(r"`(\w+)`", parts):
            stated[part] = int(floor)
    assert stated == dict(_layers.FLOORS)


def test_the_linker_declarations_shown_are_the_real_ones() -> None:
    from opweave_c.linkers.cvm import CVMLinker
    from opweave_python.linkers.vm import VMLinker

    def written(impls: tuple[str | None, ...]) -> str:
        items = ", ".join(f'"{impl}"' for impl in impls)
        return f"impls = ({items},)" if len(impls) == 1 else f"impls = ({items})"

    text = PAGE.read_text()
    assert written(VMLinker.impls) in text
    assert written(CVMLinker.impls) in text
    assert f'"vm", {VMLinker.priority}, {VMLinker.compile_priority}' in text
