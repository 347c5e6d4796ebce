"""The symbolic ``Scan`` Op: a loop whose body is an inner graph.

A :class:`Scan` node has a normalized layout (:func:`opweave.scan.basic.scan` builds it from
the user's ``sequences``, ``outputs_info`` and ``non_sequences``):

* outer inputs: ``[n_steps, *sequences, *state_buffers, *shared_states, *non_sequences]``;
* outer outputs: ``[*state_buffers, *per_step_outputs, *shared_states]``;
* inner inputs: ``[*sequence_slices, *state_taps, *shared_states, *non_sequences]``, where
  ``state_taps`` lists, state after state, one input per tap of that state;
* inner outputs: ``[*new_states, *per_step_outputs, *new_shared_states, (condition)]``.

A *state* (PyTensor's sit-sot / mit-sot) with taps ``taps`` (all negative) has depth
``d = -min(taps)``; its outer input is the buffer of its ``d`` initial values and its outer
output the buffer of ``d + n_steps`` values, initial ones first (step ``t`` writes entry
``t + d`` and reads entry ``t + d + k`` for tap ``k``). A *per-step output* (nit-sot) is
stacked over the steps. A *shared state* is a shared variable updated by the body: its
value goes from step to step and its last value is the output. Sequences are given already
sliced and ordered (``go_backwards`` is applied by ``scan``): step ``t`` reads entry ``t``.

With a ``condition`` (``until``) the loop stops after the first step whose condition is
true; the outputs then hold the steps run, not ``n_steps``.

The Op holds no kernel: opweave-python runs it (``opweave_python.impls.scan``), compiling
the inner graph once per Op with :func:`opweave.function` and calling it once per step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace as dc_replace
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.scan.grad import scan_grad
from opweave.scan.info import ScanInfo
from opweave.scan.rop import scan_rop
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.math import minimum
from opweave.tensor.type import TensorType

__all__ = ["Scan", "ScanInfo"]


class Scan(Op):
    """A loop over an inner graph (see the module docstring for the layout).

    Parameters
    ----------
    inner_inputs, inner_outputs
        The inner graph: root variables and what the body computes from them.
    info
        The layout.
    mode
        The mode the inner function is compiled with; ``None``: the default mode
        (``opweave.config.mode`` with ``opweave.config.linker``). :func:`scan` passes its
        ``mode`` argument.
    name
        A name for printing.

    Notes
    -----
    Two Scans are equal when they share the same inner graph objects and layout.
    """

    __props__ = ("info", "mode", "name")

    def __init__(
        self,
        inner_inputs: Sequence[Variable],
        inner_outputs: Sequence[Variable],
        info: ScanInfo,
        mode: Any = None,
        name: str | None = None,
        profile: Any = False,
        allow_gc: bool | None = None,
    ) -> None:
        self.inner_inputs = list(inner_inputs)
        self.inner_outputs = list(inner_outputs)
        self.info = info
        self.mode = mode
        self.name = name
        #: How the inner function is compiled: ``profile`` as ``function``'s (``True`` or a
        #: ProfileStats: the inner function's steps are profiled there), and ``allow_gc``
        #: for its intermediates (``None``: kept from step to step and freed when the loop
        #: ends). Not part of the Op's identity.
        self.profile = profile
        self.allow_gc = allow_gc
        n_in = info.n_seqs + info.n_taps + info.n_shared + info.n_non_seqs
        n_out = info.n_states + info.n_nit + info.n_shared + int(info.as_while)
        if len(self.inner_inputs) != n_in or len(self.inner_outputs) != n_out:
            raise ValueError(
                f"Scan: the layout {info} needs {n_in} inner inputs and {n_out} inner outputs, "
                f"got {len(self.inner_inputs)} and {len(self.inner_outputs)}"
            )

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and self.info == other.info
            and self.mode is other.mode
            and self.inner_outputs == other.inner_outputs
            and self.inner_inputs == other.inner_inputs
        )

    def __hash__(self) -> int:
        return hash((type(self), self.info, tuple(id(v) for v in self.inner_outputs)))

    def __str__(self) -> str:
        return f"Scan{{{self.name}}}" if self.name else "Scan"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_inner_function", None)  # a compiled function: rebuilt on demand
        state.pop("_inner_in_place", None)  # what the backend learnt compiling it
        return state

    def clone_with(
        self,
        inner_inputs: Sequence[Variable],
        inner_outputs: Sequence[Variable],
        info: ScanInfo,
    ) -> Scan:
        """A Scan of the same class, mode, name and compilation options over another
        inner graph and layout (what the rewrites of :mod:`opweave.scan.rewriting` build)."""
        return type(self)(
            inner_inputs,
            inner_outputs,
            info,
            mode=self.mode,
            name=self.name,
            profile=self.profile,
            allow_gc=self.allow_gc,
        )

    # ------------------------------------------------------------------ layout helpers

    def split_outer_inputs(self, inputs: Sequence[Any]) -> dict[str, list[Any]]:
        """``{"n_steps", "seqs", "states", "shared", "non_seqs"}`` parts of outer inputs."""
        info = self.info
        parts = [1, info.n_seqs, info.n_states, info.n_shared, info.n_non_seqs]
        return dict(zip(("n_steps", "seqs", "states", "shared", "non_seqs"), _split(inputs, parts)))

    def split_inner_inputs(self, inputs: Sequence[Any]) -> dict[str, list[Any]]:
        """``{"seqs", "taps", "shared", "non_seqs"}`` parts of inner inputs."""
        info = self.info
        parts = [info.n_seqs, info.n_taps, info.n_shared, info.n_non_seqs]
        return dict(zip(("seqs", "taps", "shared", "non_seqs"), _split(inputs, parts)))

    def split_inner_outputs(self, outputs: Sequence[Any]) -> dict[str, list[Any]]:
        """``{"states", "nits", "shared", "cond"}`` parts of inner outputs."""
        info = self.info
        parts = [info.n_states, info.n_nit, info.n_shared, int(info.as_while)]
        return dict(zip(("states", "nits", "shared", "cond"), _split(outputs, parts)))

    def taps_per_state(self) -> list[list[Variable]]:
        """The inner inputs of each state's taps, state after state."""
        taps_in = self.split_inner_inputs(self.inner_inputs)["taps"]
        found, pos = [], 0
        for taps in self.info.state_taps:
            found.append(list(taps_in[pos : pos + len(taps)]))
            pos += len(taps)
        return found

    def keeping(
        self,
        node: Apply,
        states: Sequence[int],
        nits: Sequence[int],
        new_nits: Sequence[Variable] = (),
    ) -> list[Variable]:
        """The outputs of a node like ``node`` whose loop computes only the states
        ``states`` and per-step outputs ``nits`` (positions in this Op's layout), and
        stacks the body's values ``new_nits`` as more per-step outputs (all of their
        entries kept): ``[*states, *nits, *new_nits, *shared states]``.

        The rewrites that drop or move states out of a loop build their node with it."""
        info = self.info
        taps_of = self.taps_per_state()
        inner_in = self.split_inner_inputs(self.inner_inputs)
        inner_out = self.split_inner_outputs(self.inner_outputs)
        keep: tuple[int, ...] = ()
        if info.keep:
            keep = tuple(info.kept(j) for j in states)
            keep += tuple(info.kept(info.n_states + k) for k in nits) + (0,) * len(new_nits)
        new_op = self.clone_with(
            [
                *inner_in["seqs"],
                *(v for j in states for v in taps_of[j]),
                *inner_in["shared"],
                *inner_in["non_seqs"],
            ],
            [
                *(inner_out["states"][j] for j in states),
                *(inner_out["nits"][k] for k in nits),
                *new_nits,
                *inner_out["shared"],
                *inner_out["cond"],
            ],
            dc_replace(
                info,
                state_taps=tuple(info.state_taps[j] for j in states),
                n_nit=len(nits) + len(new_nits),
                keep=keep,
            ),
        )
        outer = self.split_outer_inputs(node.inputs)
        return new_op(  # type: ignore[return-value]
            node.inputs[0],
            *outer["seqs"],
            *(outer["states"][j] for j in states),
            *outer["shared"],
            *outer["non_seqs"],
            return_list=True,
        )

    # ------------------------------------------------------------------ the Op contract

    def make_node(self, *inputs: Any) -> Apply:
        info = self.info
        n_expected = 1 + info.n_seqs + info.n_states + info.n_shared + info.n_non_seqs
        if len(inputs) != n_expected:
            raise TypeError(f"{self}: expected {n_expected} inputs, got {len(inputs)}")
        n_steps = as_tensor_variable(inputs[0])
        if n_steps.type.ndim != 0 or not str(n_steps.type.dtype).startswith(("int", "uint")):
            raise TypeError(f"{self}: n_steps must be an integer scalar, got {n_steps.type}")
        outer = self.split_outer_inputs([n_steps, *inputs[1:]])
        inner_in = self.split_inner_inputs(self.inner_inputs)
        inner_out = self.split_inner_outputs(self.inner_outputs)
        seqs = [
            _check_outer(self, f"sequence {i}", as_tensor_variable(x), inner, 1)
            for i, (x, inner) in enumerate(zip(outer["seqs"], inner_in["seqs"], strict=True))
        ]
        states = [
            _check_outer(self, f"initial state {j}", as_tensor_variable(x), inner, 1)
            for j, (x, inner) in enumerate(zip(outer["states"], inner_out["states"], strict=True))
        ]
        shared = list(outer["shared"])
        for k, (x, inner) in enumerate(zip(shared, inner_in["shared"], strict=True)):
            if x.type != inner.type:
                raise TypeError(
                    f"{self}: shared state {k} has Type {x.type}, expected {inner.type}"
                )
        non_seqs = [
            inner.type.filter_variable(x)
            for x, inner in zip(outer["non_seqs"], inner_in["non_seqs"], strict=True)
        ]
        outputs = [TensorType(x.type.dtype, shape=(None, *x.type.shape[1:]))() for x in states]
        outputs += [
            TensorType(o.type.dtype, shape=(None, *o.type.shape))() for o in inner_out["nits"]
        ]
        outputs += [x.type() for x in shared]
        return Apply(self, [n_steps, *seqs, *states, *shared, *non_seqs], outputs)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        info = self.info
        if info.as_while:
            raise NotImplementedError("the number of steps of a while loop is known at run time")
        nits = self.split_inner_outputs(self.inner_outputs)["nits"]
        if any(None in o.type.shape for o in nits):
            raise NotImplementedError("the shape of a per-step output depends on the body")
        n_steps = node.inputs[0]
        parts = self.split_outer_inputs(shapes)
        out: list[Any] = [(shape[0] + n_steps, *shape[1:]) for shape in parts["states"]]
        out += [(n_steps, *o.type.shape) for o in nits]
        for i, keep in enumerate(info.keep):
            if keep:
                out[i] = (minimum(out[i][0], keep), *out[i][1:])
        out += list(parts["shared"])
        return out

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Every input but ``n_steps`` may reach every output (``n_steps`` reaches none
        differentiably)."""
        n_out = len(node.outputs)
        return [[False] * n_out] + [[True] * n_out for _ in node.inputs[1:]]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Back-propagation through time: a second Scan over the stored states, backwards
        (see :mod:`opweave.scan.grad`)."""
        return scan_grad(self, list(inputs), list(outputs), list(output_grads))

    def R_op(
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[Variable | None]:
        """Forward mode: a loop running the body and its tangents side by side (see
        :mod:`opweave.scan.rop`)."""
        return scan_rop(self, list(inputs), list(eval_points))


def _split(items: Sequence[Any], sizes: Sequence[int]) -> list[list[Any]]:
    parts, pos = [], 0
    for size in sizes:
        parts.append(list(items[pos : pos + size]))
        pos += size
    return parts


def _check_outer(op: Scan, what: str, x: Any, inner: Any, extra: int) -> Any:
    """Check that the outer ``x`` stacks values of ``inner``'s Type (``extra`` more dims)."""
    if x.type.ndim != inner.type.ndim + extra or x.type.dtype != inner.type.dtype:
        raise TypeError(
            f"{op}: {what} must be a {inner.type.ndim + extra}-d {inner.type.dtype} tensor "
            f"(steps of {inner.type}), got {x.type}"
        )
    return x
