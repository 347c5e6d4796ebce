"""The C of the implementations lives in ``opweave_c/impls/c/*.c``: every section that the
Python code names exists, and every section of the files is named somewhere (no dead C)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import opweave_c.impls
from opweave_c.impls import csource

IMPLS = Path(opweave_c.impls.__file__).parent


def _references() -> set[tuple[str, str]]:
    """Every ``snippet(file, section)`` / ``render(file, section, ...)`` call in the package."""
    found = set()
    for path in sorted(IMPLS.parent.rglob("*.py")):
        if path.name == "csource.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            name = fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", None)
            if name not in ("snippet", "render"):
                continue
            args = node.args[:2]
            assert len(args) == 2 and all(
                isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args
            ), f"{path.name}:{node.lineno}: name C sections with literal strings"
            found.add((args[0].value, args[1].value))
    return found


def _render_keywords() -> dict[tuple[str, str], list[tuple[str, set[str]]]]:
    """Per section, where each ``render(file, section, ...)`` call is and its keywords."""
    found: dict[tuple[str, str], list[tuple[str, set[str]]]] = {}
    for path in sorted(IMPLS.parent.rglob("*.py")):
        if path.name == "csource.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            name = fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", None)
            if name != "render":
                continue
            keys = {k.arg for k in node.keywords}
            assert None not in keys, f"{path.name}:{node.lineno}: name render's values"
            file, section = (a.value for a in node.args[:2])  # type: ignore[attr-defined]
            found.setdefault((file, section), []).append((f"{path.name}:{node.lineno}", keys))
    return found


#: A ``%(name)s`` placeholder (a ``%%`` before it is a literal percent sign).
PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def _sections() -> set[tuple[str, str]]:
    return {
        (path.name, section)
        for path in sorted(csource.C_DIR.glob("*.[ch]"))
        for section in csource.sections(path.name)
    }


def test_every_referenced_section_exists() -> None:
    refs = _references()
    assert refs, "no C section is referenced"
    for file, section in sorted(refs):
        assert isinstance(csource.snippet(file, section), str)


def test_every_section_is_used() -> None:
    unused = _sections() - _references()
    assert not unused, f"C sections nobody uses: {sorted(unused)}"


def test_render_calls_fill_exactly_the_placeholders() -> None:
    for (file, section), calls in sorted(_render_keywords().items()):
        text = csource.snippet(file, section).replace("%%", "")
        wanted = set(PLACEHOLDER.findall(text))
        assert "%" not in PLACEHOLDER.sub("", text), f"{file}:{section}: a lone '%'"
        for where, keys in calls:
            assert keys == wanted, f"{where}: {file}:{section} wants {sorted(wanted)}"


def test_snippets_are_read_once() -> None:
    file, section = sorted(_references())[0]
    assert csource.snippet(file, section) is csource.snippet(file, section)


def test_missing_section_is_a_clear_error() -> None:
    file = sorted(_references())[0][0]
    with pytest.raises(KeyError, match="no section"):
        csource.snippet(file, "no_such_section")


def test_render_fills_placeholders_and_percent_signs(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "t.c").write_text(
        '#section a\nprintf("%%d", %(x)s);\n\n#section b\nint y;\n', encoding="utf-8"
    )
    monkeypatch.setattr(csource, "C_DIR", tmp_path)
    csource.sections.cache_clear()
    try:
        assert csource.render("t.c", "a", x="v") == 'printf("%d", v);\n'
        assert csource.snippet("t.c", "b") == "int y;"
    finally:
        csource.sections.cache_clear()
