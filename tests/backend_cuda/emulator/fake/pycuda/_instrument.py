"""The source rewrite that turns on the emulated device's memory checks.

The generated kernel source is compiled with two textual changes, which leave the code for a
real GPU untouched (see ``include/opw_emu_checks.h`` for what the checked types do):

* ``__shared__ T name[...];`` becomes ``static opw_emu::shared_elem<T> name[...];`` followed
  by an object naming the array for the reports;
* in a ``__global__`` function's parameter list, ``T* p`` becomes ``opw_emu::gptr<T> p``.

The launcher (``_emulator._launcher``) still unpacks raw pointers and wraps them.

A third rewrite (:func:`saturating_casts`) makes float to integer conversions behave as on a
GPU: every C cast to an integer type written ``(T)(expr)`` (the form the kernel generator
writes) becomes ``opw_emu::cvt<T>(expr)`` (``include/opw_emu_convert.h``), which saturates
as ``cvt.rzi`` does where x86-64 would wrap.
"""

from __future__ import annotations

import re

#: ``__shared__`` declarations of fixed-size arrays (or scalars).
SHARED_RE = re.compile(
    r"(?<![\w])__shared__\s+"
    r"(?P<type>(?:(?:const|volatile|unsigned|signed|long|short)\s+)*[A-Za-z_][\w:]*)\s+"
    r"(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\];]+\]\s*)*);"
)
#: A ``__global__`` function's head: its name and parameter list.
KERNEL_HEAD_RE = re.compile(r"(__global__\s+void\s+\w+\s*\()([^)]*)(\))", re.S)
#: One pointer parameter declaration: pointee type, ``*``, name.
POINTER_PARAM_RE = re.compile(
    r"^(?P<type>[^*]+?)\s*\*\s*(?:__restrict__\s*|__restrict\s*)?(?P<name>\w+)$", re.S
)


#: The prefix ``(T)(`` of a C cast to an integer type (``npy_*`` or a built-in one).
INT_CAST_RE = re.compile(
    r"(?<![\w)\]])\(\s*(?P<type>npy_u?int(?:8|16|32|64)|"
    r"(?:(?:unsigned|signed)\s+)?(?:char|short|int|long\s+long|long)(?:\s+int)?|"
    r"unsigned|signed)\s*\)\s*\("
)
#: What may follow a parenthesised operand and bind tighter than a cast (postfix operators).
_POSTFIX = ("[", "(", ".", "->", "++", "--")


def _closing(source: str, start: int) -> int:
    """Index just past the parenthesis that closes the one before ``start`` (or the end)."""
    depth = 1
    i = start
    while i < len(source) and depth:
        depth += {"(": 1, ")": -1}.get(source[i], 0)
        i += 1
    return i


def saturating_casts(source: str) -> str:
    """``source`` with each ``(T)(expr)`` cast to an integer type ``T`` written
    ``opw_emu::cvt<T>(expr)`` (a GPU's conversion); a cast whose operand is followed by a
    postfix operator (``(T)(a)[i]`` casts ``(a)[i]``) is left as it is."""
    out: list[str] = []
    last = 0
    for match in INT_CAST_RE.finditer(source):
        after = source[_closing(source, match.end()) :].lstrip()
        if after.startswith(_POSTFIX):
            continue
        kind = " ".join(match.group("type").split())
        out += [source[last : match.start()], f"opw_emu::cvt<{kind}>("]
        last = match.end()
    return "".join(out) + source[last:]


def pointee(decl: str) -> tuple[str, str] | None:
    """``(pointee type, name)`` of a single-pointer parameter declaration, else ``None``."""
    match = POINTER_PARAM_RE.match(decl.strip())
    if match is None:
        return None
    return " ".join(match.group("type").split()), match.group("name")


def _shared(match: re.Match[str]) -> str:
    kind, name, dims = match.group("type"), match.group("name"), match.group("dims")
    return (
        f"static opw_emu::shared_elem<{kind}> {name}{dims.rstrip()}; "
        f'static opw_emu::SharedName opw_shared_name_{name}({name}, "{name}");'
    )


def _param(decl: str) -> str:
    found = pointee(decl)
    if found is None:
        return decl
    kind, name = found
    return f"opw_emu::gptr<{kind}> {name}"


def _kernel_head(match: re.Match[str]) -> str:
    params = match.group(2)
    if not params.strip() or params.strip() == "void":
        return match.group(0)
    rewritten = ", ".join(_param(p) for p in params.split(","))
    return match.group(1) + rewritten + match.group(3)


def instrument(source: str) -> str:
    """``source`` with checked shared arrays, checked kernel pointer parameters and a GPU's
    float to integer conversions."""
    return saturating_casts(KERNEL_HEAD_RE.sub(_kernel_head, SHARED_RE.sub(_shared, source)))
