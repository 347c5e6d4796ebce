"""PyTensor's helpers of the Scan Op module: the per-kind accessors of a Scan's inputs
and outputs (:class:`ScanMethodsMixin`), the checks of initial states
(:func:`check_broadcast`, :func:`copy_var_format`, ``err_msg1``-``err_msg3``) and the
profile summary of Scan nodes (:func:`profile_printer`).

The accessors follow :class:`~opweave.scan.op.Scan`'s layout (:mod:`opweave.scan.op`):
a state whose only tap is ``-1`` is a sit-sot, any other state a mit-sot; there are no
mit-mot states, and per-step (nit-sot) outputs take no outer input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from opweave.tensor.type import TensorType

__all__ = [
    "ScanMethodsMixin",
    "TensorConstructorType",
    "check_broadcast",
    "copy_var_format",
    "err_msg1",
    "err_msg2",
    "err_msg3",
    "profile_printer",
]

#: A function building a TensorType from a static shape and a dtype.
TensorConstructorType = Callable[[Iterable[bool | int | None], Any], TensorType]

_RANK_HINT = (
    "If the inner function returns a vector of size d and scan uses the previous "
    "step's value, the initial state should be a matrix of shape (1, d): its first "
    "dimension counts the previous steps scan uses. Add that dimension with "
    "dimshuffle or shape_padleft. "
)
#: Message for an initial state whose inner variable has another dtype or rank
#: (``% (kind, name, index, dtype, ndim, inner name, inner dtype, inner ndim)``).
err_msg1 = (
    "Compiling the inner function of scan: the %s %s (argument number %d) has dtype %s "
    "and %d dimension(s), but its inner variable %s has dtype %s and %d dimension(s). "
    "The inner variable should have the same dtype and one dimension fewer than the "
    "initial state (outputs_info). " + _RANK_HINT
)
#: Message for an initial state whose dtype differs from the inner function's result
#: (``% (name, index, state dtype, result dtype)``).
err_msg2 = (
    "Compiling the inner function of scan: the initial state (outputs_info) of %s "
    "(argument number %d) has dtype %s, while the inner function (fn) returns dtype %s. "
    "The inner function probably upcasts or downcasts it."
)
#: Message for an initial state whose rank does not fit the inner function's result
#: (``% (name, index, state ndim, result ndim)``).
err_msg3 = (
    "Compiling the inner function of scan: the initial state (outputs_info) of %s "
    "(argument number %d) has %d dimension(s), while the inner function's result has "
    "%d dimension(s) (it should have one fewer). " + _RANK_HINT
)


def check_broadcast(v1: Any, v2: Any) -> None:
    """Check that ``v1`` and ``v2`` are broadcastable on the same trailing axes.

    Raises
    ------
    TypeError
        Naming the axis where one is broadcastable and the other is not (fix it with
        ``specify_broadcastable``).
    """
    if not isinstance(v1.type, TensorType) and not isinstance(v2.type, TensorType):
        return
    size = min(v1.type.ndim, v2.type.ndim)
    pairs = zip(
        v1.type.broadcastable[len(v1.type.broadcastable) - size :],
        v2.type.broadcastable[len(v2.type.broadcastable) - size :],
        strict=True,
    )
    for n, (b1, b2) in enumerate(pairs):
        if b1 != b2:
            a1 = n + size - v1.type.ndim + 1
            a2 = n + size - v2.type.ndim + 1
            raise TypeError(
                f"The broadcast pattern of the output of scan ({v1.type}) is inconsistent "
                f"with the one provided in `output_info` ({v2.type}). The output on axis "
                f"{a1} is `{b1!r}`, but it is `{b2!r}` on axis {a2} in `output_info`. "
                "One of the dimensions is probably fixed to 1 on one side only; make "
                "them consistent, e.g. with opweave.tensor.specify_broadcastable."
            )


def copy_var_format(var: Any, as_var: Any) -> Any:
    """``var`` cast to ``as_var``'s dtype and filtered to its Type (with one more
    leading dimension when ``var`` has one more dimension than ``as_var``)."""
    if not hasattr(var, "dtype"):
        return var
    result = var
    if result.type.dtype != as_var.type.dtype:
        result = result.astype(as_var.type.dtype)
    if result.type.ndim == as_var.type.ndim:
        return as_var.type.filter_variable(result)
    wider = as_var.type.clone(shape=(*var.type.shape[:1], *as_var.type.shape))
    return wider.filter_variable(result)


def _states(info: Any, sit: bool) -> list[int]:
    return [j for j, taps in enumerate(info.state_taps) if (tuple(taps) == (-1,)) == sit]


class ScanMethodsMixin:
    """Accessors of a Scan's inputs and outputs by kind (PyTensor's method names).

    Each takes the full list of the node's outer inputs, inner inputs, inner outputs or
    outer outputs, and returns the part of one kind. Needs ``self.info``
    (:class:`~opweave.scan.info.ScanInfo`) and the ``split_*`` methods of
    :class:`~opweave.scan.op.Scan`.
    """

    info: Any

    def split_outer_inputs(self, inputs: Sequence[Any]) -> dict[str, list[Any]]:
        raise NotImplementedError

    def split_inner_inputs(self, inputs: Sequence[Any]) -> dict[str, list[Any]]:
        raise NotImplementedError

    def split_inner_outputs(self, outputs: Sequence[Any]) -> dict[str, list[Any]]:
        raise NotImplementedError

    def _grouped_taps(self, list_inputs: Sequence[Any], sit: bool) -> list[list[Any]]:
        taps_in = self.split_inner_inputs(list_inputs)["taps"]
        groups, pos = [], 0
        for taps in self.info.state_taps:
            if (tuple(taps) == (-1,)) == sit:
                groups.append(list(taps_in[pos : pos + len(taps)]))
            pos += len(taps)
        return groups

    # sequences and non-sequences
    def inner_seqs(self, list_inputs: Sequence[Any]) -> list[Any]:
        """The inner inputs of the sequences."""
        return self.split_inner_inputs(list_inputs)["seqs"]

    def outer_seqs(self, list_inputs: Sequence[Any]) -> list[Any]:
        """The outer sequences."""
        return self.split_outer_inputs(list_inputs)["seqs"]

    def inner_non_seqs(self, list_inputs: Sequence[Any]) -> list[Any]:
        """The inner inputs of the non-sequences."""
        return self.split_inner_inputs(list_inputs)["non_seqs"]

    def outer_non_seqs(self, list_inputs: Sequence[Any]) -> list[Any]:
        """The outer non-sequences."""
        return self.split_outer_inputs(list_inputs)["non_seqs"]

    # mit-mot: none in this layout
    def inner_mitmot(self, list_inputs: Sequence[Any]) -> list[Any]:
        """Always empty: this layout has no mit-mot states."""
        return []

    def outer_mitmot(self, list_inputs: Sequence[Any]) -> list[Any]:
        """Always empty: this layout has no mit-mot states."""
        return []

    def inner_mitmot_outs(self, list_outputs: Sequence[Any]) -> list[Any]:
        """Always empty: this layout has no mit-mot states."""
        return []

    def outer_mitmot_outs(self, list_outputs: Sequence[Any]) -> list[Any]:
        """Always empty: this layout has no mit-mot states."""
        return []

    # mit-sot and sit-sot states
    def inner_mitsot_grouped(self, list_inputs: Sequence[Any]) -> list[list[Any]]:
        """The inner tap inputs of each mit-sot state."""
        return self._grouped_taps(list_inputs, sit=False)

    def inner_mitsot(self, list_inputs: Sequence[Any]) -> list[Any]:
        """The inner tap inputs of the mit-sot states, state after state."""
        return [v for group in self.inner_mitsot_grouped(list_inputs) for v in group]

    def outer_mitsot(self, list_inputs: Sequence[Any]) -> list[Any]:
        """The outer initial values of the mit-sot states."""
        states = self.split_outer_inputs(list_inputs)["states"]
        return [states[j] for j in _states(self.info, sit=False)]

    def inner_mitsot_outs(self, list_outputs: Sequence[Any]) -> list[Any]:
        """The inner outputs of the mit-sot states."""
        states = self.split_inner_outputs(list_outputs)["states"]
        return [states[j] for j in _states(self.info, sit=False)]

    def outer_mitsot_outs(self, list_outputs: Sequence[Any]) -> list[Any]:
        """The outer outputs of the mit-sot states."""
        return [list_outputs[j] for j in _states(self.info, sit=False)]

    def inner_sitsot(self, list_inputs: Sequence[Any]) -> list[Any]:
        """The inner inputs of the sit-sot states."""
        return [v for group in self._grouped_taps(list_inputs, sit=True) for v in group]

    def outer_sitsot(self, list_inputs: Sequence[Any]) -> list[Any]:
        """The outer initial values of the sit-sot states."""
        states = self.split_outer_inputs(list_inputs)["states"]
        return [states[j] for j in _states(self.info, sit=True)]

    def inner_sitsot_outs(self, list_outputs: Sequence[Any]) -> list[Any]:
        """The inner outputs of the sit-sot states."""
        states = self.split_inner_outputs(list_outputs)["states"]
        return [states[j] for j in _states(self.info, sit=True)]

    def outer_sitsot_outs(self, list_outputs: Sequence[Any]) -> list[Any]:
        """The outer outputs of the sit-sot states."""
        return [list_outputs[j] for j in _states(self.info, sit=True)]

    # nit-sot outputs
    def outer_nitsot(self, list_inputs: Sequence[Any]) -> list[Any]:
        """Always empty: per-step outputs take no outer input in this layout."""
        return []

    def inner_nitsot_outs(self, list_outputs: Sequence[Any]) -> list[Any]:
        """The inner per-step outputs."""
        return self.split_inner_outputs(list_outputs)["nits"]

    def outer_nitsot_outs(self, list_outputs: Sequence[Any]) -> list[Any]:
        """The outer per-step outputs."""
        start = self.info.n_states
        return list(list_outputs[start : start + self.info.n_nit])

    # shared states
    def inner_shared(self, list_inputs: Sequence[Any]) -> list[Any]:
        """The inner inputs of the shared states."""
        return self.split_inner_inputs(list_inputs)["shared"]

    def outer_shared(self, list_inputs: Sequence[Any]) -> list[Any]:
        """The outer shared variables updated by the loop."""
        return self.split_outer_inputs(list_inputs)["shared"]

    def inner_shared_outs(self, list_outputs: Sequence[Any]) -> list[Any]:
        """The inner outputs updating the shared states."""
        return self.split_inner_outputs(list_outputs)["shared"]

    def outer_shared_outs(self, list_outputs: Sequence[Any]) -> list[Any]:
        """The outer outputs of the shared states."""
        start = self.info.n_states + self.info.n_nit
        return list(list_outputs[start : start + self.info.n_shared])


def profile_printer(
    message: str,
    compile_time: float,
    fct_call_time: float,
    apply_time: dict[Any, float],
    apply_cimpl: Any,
    outputs_size: Any,
    file: TextIO,
) -> None:
    """Print the time of each Scan node of a profile, and that of its inner function
    when the Scan was built with a profile (nothing when no Scan node took time)."""
    scans = [
        (node, t)
        for (_, node), t in apply_time.items()
        if t > 0 and isinstance(node.op, ScanMethodsMixin)
    ]
    if not scans:
        return
    print("", file=file)
    print("Scan overhead:", file=file)
    print("<Scan op time(s)> <inner function time(s)> <node>", file=file)
    for node, t in scans:
        profile = getattr(getattr(node.op, "fn", None), "profile", None)
        inner = getattr(profile, "call_time", None) if profile else None
        if inner is None:
            print(f"  {t:5.1f}s  (inner function not profiled)  {node}", file=file)
        else:
            print(f"  {t:5.1f}s  {inner:5.1f}s  {node}", file=file)
