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

    Notes
    -----
    PyTensor's names for the same layout are properties: a state whose taps are not
    ``(-1,)`` is a *mit-sot*, one with the single tap ``-1`` a *sit-sot*
    (:attr:`mit_sot_in_slices`, :attr:`sit_sot_in_slices`), a per-step output a *nit-sot*
    (:attr:`n_nit_sot`), a shared state an *untraced sit-sot* (:attr:`n_untraced_sit_sot`,
    formerly ``n_shared_outs``). Opweave's Scan has no *mit-mot* states (they belong to
    PyTensor's gradient loops): their counts are 0 and their slices empty.
    :func:`opweave.scan.scan` lays the states out mit-sots first, as PyTensor does, so that
    the states are :attr:`mit_sot_in_slices` then :attr:`sit_sot_in_slices`, in order.
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

    # ------------------------------------------------------------------ PyTensor's names

    @property
    def mit_mot_in_slices(self) -> tuple[tuple[int, ...], ...]:
        """The input taps of the mit-mot states: none."""
        return ()

    @property
    def mit_mot_out_slices(self) -> tuple[tuple[int, ...], ...]:
        """The output taps of the mit-mot states: none."""
        return ()

    normalized_mit_mot_in_slices = mit_mot_in_slices
    normalized_mit_mot_out_slices = mit_mot_out_slices

    @property
    def n_mit_mot(self) -> int:
        """Number of mit-mot states: 0."""
        return 0

    @property
    def n_mit_mot_outs(self) -> int:
        """Number of inner outputs of the mit-mot states: 0."""
        return 0

    @property
    def mit_sot_in_slices(self) -> tuple[tuple[int, ...], ...]:
        """The taps of the states read through other taps than ``(-1,)``, in the node's
        order."""
        return tuple(tuple(taps) for taps in self.state_taps if tuple(taps) != (-1,))

    @property
    def sit_sot_in_slices(self) -> tuple[tuple[int, ...], ...]:
        """``(-1,)`` for each state read through the previous step only."""
        return tuple((-1,) for taps in self.state_taps if tuple(taps) == (-1,))

    @property
    def n_mit_sot(self) -> int:
        """Number of states with other taps than ``(-1,)``."""
        return len(self.mit_sot_in_slices)

    @property
    def n_sit_sot(self) -> int:
        """Number of states with the single tap ``-1``."""
        return len(self.sit_sot_in_slices)

    @property
    def n_nit_sot(self) -> int:
        """Number of per-step outputs (:attr:`n_nit`)."""
        return self.n_nit

    @property
    def n_untraced_sit_sot(self) -> int:
        """Number of states of which only the last value is returned: the shared states
        (:attr:`n_shared`)."""
        return self.n_shared

    @property
    def n_shared_outs(self) -> int:
        """PyTensor's former name of :attr:`n_untraced_sit_sot`."""
        return self.n_shared

    @property
    def tap_array(self) -> tuple[tuple[int, ...], ...]:
        """The taps of every state: mit-mot (none), mit-sot then sit-sot."""
        return self.mit_mot_in_slices + self.mit_sot_in_slices + self.sit_sot_in_slices

    @property
    def n_inner_inputs(self) -> int:
        """Number of inner inputs of a node of this layout."""
        return self.n_seqs + self.n_taps + self.n_shared + self.n_non_seqs

    @property
    def n_inner_outputs(self) -> int:
        """Number of inner outputs of a node of this layout (the condition included)."""
        return self.n_states + self.n_nit + self.n_shared + int(self.as_while)

    @property
    def n_outer_inputs(self) -> int:
        """Number of outer inputs of a node of this layout: ``n_steps``, the sequences,
        the states, the shared states and the non-sequences (a per-step output has no
        input giving its length: it has one entry per step)."""
        return 1 + self.n_seqs + self.n_states + self.n_shared + self.n_non_seqs

    @property
    def n_outer_outputs(self) -> int:
        """Number of outer outputs of a node of this layout."""
        return self.n_states + self.n_nit + self.n_shared
