"""The layout of a :class:`~opweave.scan.op.Scan` node."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ScanInfo"]


@dataclass(frozen=True)
class ScanInfo:
    """The layout of a :class:`Scan` node (see the module docstring).

    Parameters
    ----------
    n_seqs
        Number of sequences.
    state_taps
        For each state, its taps (negative integers, in the order of the inner inputs).
    n_nit
        Number of per-step outputs (no initial value, not fed back).
    n_shared
        Number of shared variables updated by the body.
    n_non_seqs
        Number of non-sequences (explicit and implicit).
    as_while
        Whether the last inner output is the stopping condition.
    truncate_gradient
        Number of steps back-propagated through (``-1``: all).
    keep
        Empty (the default: every output holds all its entries), or one count per state
        then per per-step output: how many of the output's last entries the node returns
        (``0``: all). The rewrite ``scan_save_mem`` sets it when only the last entries of an
        output are read; the loop then stores no more than that (a circular buffer).
    """

    n_seqs: int
    state_taps: tuple[tuple[int, ...], ...]
    n_nit: int
    n_shared: int
    n_non_seqs: int
    as_while: bool = False
    truncate_gradient: int = -1
    keep: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        n_keep = len(self.state_taps) + self.n_nit
        if self.keep and (
            len(self.keep) != n_keep or any(not isinstance(k, int) or k < 0 for k in self.keep)
        ):
            raise ValueError(
                f"ScanInfo: keep must be empty or {n_keep} non-negative integers (one per "
                f"state then per-step output), got {self.keep!r}"
            )

    def kept(self, i: int) -> int:
        """How many last entries output ``i`` (a state or per-step output) holds (``0``:
        all)."""
        return self.keep[i] if self.keep else 0

    @property
    def n_states(self) -> int:
        """Number of states (outputs fed back)."""
        return len(self.state_taps)

    @property
    def depths(self) -> tuple[int, ...]:
        """For each state, how many initial values it needs (``-min(taps)``)."""
        return tuple(-min(taps) for taps in self.state_taps)

    @property
    def n_taps(self) -> int:
        """Number of inner inputs of all the states' taps."""
        return sum(len(taps) for taps in self.state_taps)
