"""The C source files of the implementations: named sections of ``impls/c/*.c``.

Each file is a sequence of sections. A section starts with a line ``#section <name>`` and
holds every line up to the next such line (or the end of the file), less the one newline
that ends it: what lies between two ``#section`` lines is exactly the snippet, plus that
newline. A snippet that a Python module fills in per node (:func:`render`) uses
``%(name)s`` placeholders, as the ``sub`` dict of the C contract does (``%(fail)s``), and
writes a literal ``%`` as ``%%``; one used as it is (:func:`snippet`) is plain C.

Files are read once per process (package data, found next to this module) and cached
with :func:`functools.cache`.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["C_DIR", "SECTION", "render", "sections", "snippet"]

#: The folder holding the C files.
C_DIR = Path(__file__).parent / "c"

#: A section marker line.
SECTION = re.compile(r"^#section ([A-Za-z_][A-Za-z0-9_]*)[ \t]*$", re.MULTILINE)


@cache
def sections(file: str) -> MappingProxyType[str, str]:
    """The sections of one C file, by name.

    Parameters
    ----------
    file
        The file's name in ``impls/c`` (``"common.c"``).

    Returns
    -------
    MappingProxyType
        Section name -> its text (read-only), in the file's order.

    Raises
    ------
    ValueError
        When text precedes the first section or a name appears twice.
    """
    text = (C_DIR / file).read_text(encoding="utf-8")
    marks = list(SECTION.finditer(text))
    if not marks or text[: marks[0].start()].strip():
        raise ValueError(f"{file}: the file must start with a '#section <name>' line")
    found: dict[str, str] = {}
    for k, mark in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        body = text[mark.end() + 1 : end]
        if body.endswith("\n"):
            body = body[:-1]
        if mark.group(1) in found:
            raise ValueError(f"{file}: section {mark.group(1)!r} appears twice")
        found[mark.group(1)] = body
    return MappingProxyType(found)


def snippet(file: str, section: str) -> str:
    """The text of one section, as it is.

    Parameters
    ----------
    file
        The file's name in ``impls/c``.
    section
        The section's name.

    Returns
    -------
    str
        The C code.

    Raises
    ------
    KeyError
        When the file has no such section.
    """
    try:
        return sections(file)[section]
    except KeyError:
        raise KeyError(f"{file} has no section {section!r}") from None


def render(file: str, section: str, **values: Any) -> str:
    """A section with its ``%(name)s`` placeholders filled in (``%%`` becomes ``%``).

    Parameters
    ----------
    file
        The file's name in ``impls/c``.
    section
        The section's name.
    **values
        The value of each placeholder (formatted with ``str``).

    Returns
    -------
    str
        The C code.
    """
    return snippet(file, section) % values
