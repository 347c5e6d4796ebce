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
stacked over the steps. A *shared state* (PyTensor's untraced sit-sot) is a shared variable
updated by the body, or a value without a shape (a random generator) given in
``outputs_info``: its value goes from step to step and its last value is the output.
``scan`` lays out the states mit-sots (other taps than ``(-1,)``) first, then sit-sots, and
gives each its initial values as ``set_subtensor(AllocEmpty(...)[:n], init)`` (see
:mod:`opweave.scan.initial_buffer`). Sequences are given already
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

from opweave.compile.maker import function
from opweave.gradient.opsupport import grad_undefined
from opweave.graph.basic import Apply, Variable, clone_get_equiv
from opweave.graph.basic import clone as clone_graph
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op, io_connection_pattern
from opweave.graph.type import DisconnectedType, disconnected_type
from opweave.scan.grad import scan_grad
from opweave.scan.info import ScanInfo
from opweave.scan.layout import (
    ScanMethodsMixin,
    TensorConstructorType,
    check_broadcast,
    copy_var_format,
    err_msg1,
    err_msg2,
    err_msg3,
    profile_printer,
)
from opweave.scan.rop import scan_rop
from opweave.scan.utils import scan_io_mappings
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.math import minimum
from opweave.tensor.type import TensorType

__all__ = [
    "InnerGraph",
    "Scan",
    "ScanInfo",
    "ScanMethodsMixin",
    "TensorConstructorType",
    "check_broadcast",
    "copy_var_format",
    "err_msg1",
    "err_msg2",
    "err_msg3",
    "profile_printer",
]


class Scan(ScanMethodsMixin, Op):
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
    profile, allow_gc
        How the inner function is compiled (as :func:`opweave.scan.scan`'s arguments).
    truncate_gradient
        PyTensor's keyword: when given, replaces ``info.truncate_gradient``.
    typeConstructor, strict
        PyTensor's keywords, accepted and unused (opweave's outer Types follow the inner
        ones, and every inner input is explicit).

    Raises
    ------
    TypeError
        If ``info`` is not a :class:`ScanInfo`.
    ValueError
        If the inner graph does not have the sizes ``info`` gives it.

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
        *,
        truncate_gradient: int | None = None,
        typeConstructor: Any = None,
        strict: bool = True,
    ) -> None:
        if not isinstance(info, ScanInfo):
            raise TypeError(
                f"Scan: info must be an opweave.scan.info.ScanInfo, got {type(info).__name__}"
            )
        if truncate_gradient is not None and truncate_gradient != info.truncate_gradient:
            info = dc_replace(info, truncate_gradient=int(truncate_gradient))
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
        state.pop("_fgraph", None)  # rebuilt on demand
        state.pop("_fn", None)
        return state

    # ------------------------------------------------------------------ PyTensor's names

    @property
    def truncate_gradient(self) -> int:
        """Number of steps the gradient flows back through (``-1``: all); ``info``'s."""
        return self.info.truncate_gradient

    @property
    def fgraph(self) -> FunctionGraph:
        """The inner graph as an :class:`InnerGraph` over the inner inputs and outputs
        themselves (not copies); built on first use. Clone it before changing it: a clone
        keeps the inner inputs, so that its outputs and :attr:`inner_inputs` make a new
        Scan."""
        fgraph = self.__dict__.get("_fgraph")
        if fgraph is None:
            fgraph = InnerGraph(self.inner_inputs, self.inner_outputs, clone=False)
            self.__dict__["_fgraph"] = fgraph
        return fgraph

    @property
    def fn(self) -> Any:
        """The inner graph compiled with the Op's mode (a function of the inner inputs
        returning the list of inner outputs); compiled on first use."""
        fn = self.__dict__.get("_fn")
        if fn is None:
            fn = function(
                self.inner_inputs,
                list(self.inner_outputs),
                mode=self.mode,
                on_unused_input="ignore",
                name=f"inner function of {self}",
            )
            self.__dict__["_fn"] = fn
        return fn

    def get_oinp_iinp_iout_oout_mappings(self) -> dict[str, dict[int, Any]]:
        """How the outer and inner inputs and outputs correspond (PyTensor's name).

        Returns
        -------
        dict
            ``{"<to>_from_<from>": {index: index(es)}}`` over ``outer_inp``, ``inner_inp``,
            ``inner_out`` and ``outer_out``; see :func:`opweave.scan.utils.scan_io_mappings`
            (per-step outputs have no outer input: ``-1``).
        """
        info = self.info
        return scan_io_mappings(
            info.n_seqs, info.state_taps, info.n_nit, info.n_shared, len(self.inner_inputs)
        )

    @property
    def var_mappings(self) -> dict[str, dict[int, Any]]:
        """:meth:`get_oinp_iinp_iout_oout_mappings`, as PyTensor's attribute."""
        return self.get_oinp_iinp_iout_oout_mappings()

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

    def clone(self) -> Scan:
        """A copy of the Op with its own copy of the inner graph (PyTensor's contract of
        Ops with inner graphs)."""
        inner_inputs, inner_outputs = clone_graph(self.inner_inputs, self.inner_outputs)
        return self.clone_with(inner_inputs, inner_outputs, self.info)

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
        """Which outer inputs each outer output depends on, through the inner graph's
        connections (:func:`~opweave.graph.op.io_connection_pattern`) and the states
        carried from step to step, as in PyTensor: an input reaches an output when it
        reaches the output's inner output, directly or through the previous step of a
        state (or shared state) it reaches. ``n_steps`` reaches none differentiably, and
        neither does a value read only as an index or a generator read only to draw an
        index. Computed once per node (kept in ``node.tag``: loops nested in loops would
        otherwise compute their inner loops' patterns again at every level)."""
        cached = getattr(node.tag, "connection_pattern", None)
        if cached is not None and len(cached) == len(node.inputs):
            return [list(row) for row in cached]
        inner = io_connection_pattern(self.inner_inputs, self.inner_outputs)
        info = self.info
        maps = scan_io_mappings(
            info.n_seqs, info.state_taps, info.n_nit, info.n_shared, len(self.inner_inputs)
        )
        n_out = len(node.outputs)
        inner_out = [maps["inner_out_from_outer_out"][j][0] for j in range(n_out)]
        # The inner inputs each output feeds at the next step (states and shared states).
        feeds = [maps["inner_inp_from_outer_out"][j] for j in range(n_out)]

        def reaches(inner_inputs: Sequence[int], j: int) -> bool:
            return any(inner[x][inner_out[j]] for x in inner_inputs)

        rows = [[False] * n_out]
        for i in range(1, len(node.inputs)):
            row = [reaches(maps["inner_inp_from_outer_inp"][i], j) for j in range(n_out)]
            pending = [r for r in range(n_out) if row[r] and feeds[r]]
            while pending:
                carried = feeds[pending.pop()]
                for j in range(n_out):
                    if not row[j] and reaches(carried, j):
                        row[j] = True
                        if feeds[j]:
                            pending.append(j)
            rows.append(row)
        node.tag.connection_pattern = tuple(tuple(row) for row in rows)
        return rows

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Back-propagation through time: a second Scan over the stored states, backwards
        (see :mod:`opweave.scan.grad`). An input that :meth:`connection_pattern` does not
        connect to an output with a gradient gets a ``DisconnectedType`` gradient (the
        loop's gradient for it is zero by construction: a mask, an index, a generator)."""
        grads = scan_grad(self, list(inputs), list(outputs), list(output_grads))
        pattern = self.connection_pattern(outputs[0].owner)
        wanted = [not isinstance(g.type, DisconnectedType) for g in output_grads]
        result = []
        for i, (row, g) in enumerate(zip(pattern, grads, strict=True)):
            if not any(p and w for p, w in zip(row, wanted, strict=True)):
                g = disconnected_type()
            elif isinstance(g.type, DisconnectedType):  # a generator the body draws with
                g = grad_undefined(self, i, inputs[i], f"{inputs[i].type} is not differentiable")
            result.append(g)
        return result

    def R_op(
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[Variable | None]:
        """Forward mode: a loop running the body and its tangents side by side (see
        :mod:`opweave.scan.rop`)."""
        return scan_rop(self, list(inputs), list(eval_points))


class InnerGraph(FunctionGraph):
    """A loop's inner graph, whose copies share its inputs.

    :meth:`clone` and :meth:`clone_get_equiv` copy every node but keep the root inputs
    themselves, as PyTensor's inner graphs do (they root on interned nominal inputs):
    a copy's outputs, rewritten or not, are computed from the Op's ``inner_inputs``.
    """

    def clone_get_equiv(
        self, check_integrity: bool = True, attach_feature: bool = True
    ) -> tuple[FunctionGraph, dict[Any, Any]]:
        """Return a copy of this graph (over the same inputs) and the old-to-new map."""
        equiv = clone_get_equiv(self.inputs, self.outputs, copy_inputs=False)
        new = InnerGraph(
            list(self.inputs),
            [equiv[o] for o in self.outputs],
            clone=False,
            update_mapping=self.update_mapping,
        )
        if check_integrity:
            new.check_integrity()
        if attach_feature:
            for feature in self._features:
                clone_feature = getattr(feature, "clone", None)
                if clone_feature is not None:
                    new.attach_feature(clone_feature())
        return new, equiv


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
