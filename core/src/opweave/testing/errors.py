"""The failure of a conformance check: :class:`ContractViolation`, and the kit's reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opweave.compile.debug.debugmode.errors import short_repr

__all__ = ["CheckReport", "ContractViolation", "describe"]


def describe(value: Any) -> str:
    """A short description of ``value`` for a message: its class, shape, dtype and repr."""
    parts = [type(value).__name__]
    shape = getattr(value, "shape", None)
    if shape is not None:
        parts.append(f"shape={tuple(shape)}")
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        parts.append(f"dtype={dtype}")
    return f"{' '.join(parts)} {short_repr(value)}"


class ContractViolation(AssertionError):
    """A Type, an Op or a backend breaks one rule of opweave's contracts.

    An ``AssertionError``, so that pytest reports it as a test failure. The message names
    the rule, the subject, the values involved and what the contract says.

    Parameters
    ----------
    rule
        The rule's name (``"filter_idempotent"``, ``"destroy_map"`` ...).
    subject
        What was checked (a Type, an Op, a linker name).
    found
        What happened, with the values involved.
    contract
        What the contract says should happen.
    """

    def __init__(self, rule: str, subject: Any, found: str, contract: str) -> None:
        self.rule = rule
        self.subject = subject
        self.found = found
        self.contract = contract
        super().__init__(f"[{rule}] {subject!s}: {found}\n  the contract: {contract}")


@dataclass
class CheckReport:
    """What a check did: the rules it verified and the ones it skipped, with the reason.

    Attributes
    ----------
    subject
        The Type, Op or linker name checked.
    checked
        The names of the rules that were verified (each once).
    skipped
        ``{rule: why it did not apply}``.
    """

    subject: Any
    checked: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def ok(self, rule: str) -> None:
        """Record that ``rule`` was verified."""
        if rule not in self.checked:
            self.checked.append(rule)

    def skip(self, rule: str, why: str) -> None:
        """Record that ``rule`` did not apply, and why."""
        self.skipped.setdefault(rule, why)
