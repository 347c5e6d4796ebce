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
    """

    n_seqs: int
    state_taps: tuple[tuple[int, ...], ...]
    n_nit: int
    n_shared: int
    n_non_seqs: int
    as_while: bool = False
    truncate_gradient: int = -1

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
