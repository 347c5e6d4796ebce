"""Rows, targets and the markdown table ``run.py`` prints."""

from __future__ import annotations

from dataclasses import dataclass, field

C_LINKERS = ("cvm", "c")


@dataclass(frozen=True)
class NotAvailable:
    """A cell without a time, and why (``no C for Dot``, ``skipped``...)."""

    reason: str


Outcome = float | NotAvailable


def seconds_of(outcome: Outcome | None) -> float | None:
    """The time of an outcome, or ``None`` when there is none."""
    return outcome if isinstance(outcome, float) else None


def fmt_time(seconds: float) -> str:
    """``1.23 ms``-style, three significant digits."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_ratio(ratio: float) -> str:
    """``0.0123x``, ``0.123x``, ``1.23x``, ``123x``: three significant digits."""
    return f"{ratio:.3g}x"


@dataclass(frozen=True)
class Target:
    """What a case must reach, judged on the fastest of ``linkers``.

    Reached when ``time / against <= max_ratio`` (``against`` names a column, e.g.
    ``PyTensor c``, or ``None`` for the row's reference) and, with ``max_seconds``, the
    time is also below that.
    """

    text: str
    max_ratio: float
    against: str | None = None
    linkers: tuple[str, ...] = C_LINKERS
    max_seconds: float | None = None

    def judge(self, row: Row) -> str:
        """``yes (cvm 0.52x)`` / ``no (c 1.3x, 2.1 µs)`` / ``n/a (...)``, plus the target."""
        base = row.ref_seconds if self.against is None else row.seconds.get(self.against)
        base_s = seconds_of(base)
        if base_s is None:
            return f"n/a (no {self.against or row.reference} time; target {self.text})"
        timed = {k: t for k in self.linkers if (t := seconds_of(row.seconds.get(k))) is not None}
        if not timed:
            return f"n/a (no {' or '.join(self.linkers)} time; target {self.text})"
        name, best = min(timed.items(), key=lambda item: item[1])
        ratio = best / base_s
        reached = ratio <= self.max_ratio
        detail = f"{name} {fmt_ratio(ratio)}"
        if self.max_seconds is not None:
            reached = reached and best < self.max_seconds
            detail += f", {fmt_time(best)}"
        return f"{'yes' if reached else 'no'} ({detail}; target {self.text})"


@dataclass(frozen=True)
class AllTargets:
    """Several targets a case must all reach: their judgements, joined by ``; ``."""

    targets: tuple[Target, ...]

    def judge(self, row: Row) -> str:
        """Each target's judgement (see :meth:`Target.judge`), in order."""
        return "; ".join(target.judge(row) for target in self.targets)


@dataclass
class Row:
    """One case: its reference time, one outcome per column, a target and notes."""

    case: str
    reference: str
    ref_seconds: Outcome
    seconds: dict[str, Outcome]
    target: Target | AllTargets | None = None
    notes: list[str] = field(default_factory=list)


def cell(outcome: Outcome | None, ref: float | None) -> str:
    """``1.2 ms (0.8x)``: a time and its ratio to the reference; ``n/a (why)`` without."""
    if outcome is None:
        return "-"
    if isinstance(outcome, NotAvailable):
        return f"n/a ({outcome.reason})"
    if ref is None:
        return fmt_time(outcome)
    return f"{fmt_time(outcome)} ({fmt_ratio(outcome / ref)})"


def escape(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: list[Row], columns: list[str]) -> str:
    """The rows as a markdown table: times, ratios to the reference, target, notes."""
    header = ["case", "reference", *columns, "target reached", "notes"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        ref = seconds_of(row.ref_seconds)
        cells = [row.case, f"{row.reference} {cell(row.ref_seconds, None)}"]
        cells += [cell(row.seconds.get(name), ref) for name in columns]
        cells.append(row.target.judge(row) if row.target else "-")
        cells.append("; ".join(row.notes))
        lines.append("| " + " | ".join(escape(c) for c in cells) + " |")
    return "\n".join(lines)
