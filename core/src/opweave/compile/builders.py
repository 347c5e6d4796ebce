"""``OpFromGraph``: an Op made from a graph, as PyTensor's ``pytensor.compile.builders``.

The Op wraps a :class:`~opweave.graph.fg.FunctionGraph` of copies of the given inputs and
outputs. Its symbolic side lives here: ``make_node`` (checks the inputs against the inner
inputs' Types), ``L_op`` (an ``OpFromGraph`` of the inner graph's gradient, or of the
overrides), ``R_op``, ``infer_shape`` (from the inner graph's shapes, nothing computed)
and ``connection_pattern``. The backends run it: opweave-python compiles the inner graph
once with :func:`opweave.function` and calls it (``opweave_python.impls.builders``);
``inline=True`` has the compilation replace each node by its inner graph instead
(:mod:`opweave.compile.builders_rewrites`).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from copy import copy
from typing import Any

from opweave.compile.inner_graph import (
    construct_inner_fgraph,
    infer_inner_shapes,
    io_connection_pattern,
)
from opweave.compile.maker import function
from opweave.configdefaults import config
from opweave.gradient import Rop, grad
from opweave.gradient._helpers import cast_to, dtype_of, filled_like, float_filled_like, is_float
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.replace import clone_replace
from opweave.graph.type import DisconnectedType, NullType

__all__ = ["OpFromGraph"]

#: Keyword arguments of :func:`opweave.function` that :class:`OpFromGraph` passes on to
#: the compilation of its inner graph.
FUNCTION_KWARGS = frozenset(
    name
    for name in inspect.signature(function).parameters
    if name not in ("inputs", "outputs", "updates", "givens", "name", "trust_input")
)


def _is_special(var: Any) -> bool:
    """A gradient that is no value: disconnected or undefined."""
    return isinstance(var, Variable) and isinstance(var.type, DisconnectedType | NullType)


class OpFromGraph(Op):
    r"""An Op computing ``outputs`` from ``inputs``, as ``opweave.function(inputs, outputs)``.

    Parameters
    ----------
    inputs
        The inputs of the graph (a list of Variables).
    outputs
        The outputs of the graph (a list of Variables).
    inline
        ``False`` (default): each node runs the inner graph, compiled once, on first use,
        with ``opweave.function(inner_inputs, inner_outputs, **kwargs)``. ``True``: the
        compilation of a graph using the Op replaces each of its nodes by the inner graph
        (rewrite ``inline_ofg_expansion``, tags ``fast_compile`` and ``fast_run``), so the
        compiled function has no ``OpFromGraph`` node and the inner graph is rewritten
        with the rest.
    lop_overrides
        ``None``: the gradient is the inner graph's. A callable
        ``f(inputs, outputs, output_grads) -> list`` (one gradient per input) replaces it;
        an ``OpFromGraph`` taking ``inputs + outputs + output_grads`` likewise. A list with
        one entry per input mixes them: ``None`` (the inner graph's gradient), a callable
        as above returning that input's gradient, or a ``DisconnectedType`` or ``NullType``
        variable.
    grad_overrides
        Like ``lop_overrides`` with ``f(inputs, output_grads)`` (the older interface: it
        warns ``FutureWarning``, as PyTensor does); mutually exclusive with
        ``lop_overrides``.
    rop_overrides
        ``None``: the R-operator is the inner graph's. A callable
        ``f(inputs, eval_points) -> list`` (one result per output), an ``OpFromGraph``
        taking ``inputs + eval_points``, or a list with one entry per output (``None``, a
        callable returning that output's result, a ``DisconnectedType`` or ``NullType``
        variable).
    pullback, pushforward
        PyTensor's newer names of ``lop_overrides`` and ``rop_overrides`` (same meaning);
        each is mutually exclusive with its older name.
    connection_pattern
        ``[[bool] * n_outputs] * n_inputs``: used as the Op's connection pattern instead of
        the one computed from the inner graph.
    strict
        Raise ``ValueError`` if the outputs use shared variables that are not among the
        inputs (by default they become extra inputs of every node, added by ``__call__``).
    name
        A name, for printing.
    destroy_map
        ``{output index: [input indices]}``: the inputs the inner function may overwrite
        (they are given to it as ``In(..., mutable=True)``).
    **kwargs
        Passed to :func:`opweave.function` when the inner graph is compiled, e.g.
        ``mode`` (default: ``config.mode``, whatever linker the outer function uses; the
        Python backend does not learn the outer linker) or ``on_unused_input``.
        ``updates`` and ``givens`` are not supported.

    Raises
    ------
    TypeError
        For ``inputs``/``outputs`` that are not lists of Variables, a bad override, a
        ``name`` that is not a string or an unknown keyword argument.
    ValueError
        For a variable given twice among the inputs (unless ``on_unused_input="ignore"``),
        shared variables under ``strict=True``, both ``lop_overrides`` and
        ``grad_overrides``, or a malformed ``connection_pattern``/``destroy_map``.
    NotImplementedError
        For ``updates`` or ``givens``.
    opweave.graph.utils.MissingInputError
        If the outputs depend on a variable that is not an input (nor a constant or a
        shared variable).

    Notes
    -----
    As in PyTensor, two ``OpFromGraph`` are equal only if they are the same object, so
    nodes of different instances are never merged. Override callables should be pure
    functions: they are called once, when a gradient is first asked for, and turned into
    ``OpFromGraph`` instances. An ``OpFromGraph`` pickles (with the functions using it)
    when its overrides do; the compiled inner function is not pickled but compiled again.

    Examples
    --------
    >>> import opweave, opweave.tensor as ot
    >>> from opweave.compile.builders import OpFromGraph
    >>> x, y, z = ot.dscalars("x", "y", "z")
    >>> op = OpFromGraph([x, y, z], [x + y * z])
    >>> f = opweave.function([x, y, z], op(x, y, z) + op(z, y, x))
    >>> float(f(1.0, 2.0, 3.0))
    12.0
    """

    def __init__(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        *,
        inline: bool = False,
        lop_overrides: Callable[..., Any] | list[Any] | OpFromGraph | None = None,
        grad_overrides: Callable[..., Any] | list[Any] | OpFromGraph | None = None,
        rop_overrides: Callable[..., Any] | list[Any] | OpFromGraph | None = None,
        pullback: Callable[..., Any] | list[Any] | OpFromGraph | None = None,
        pushforward: Callable[..., Any] | list[Any] | OpFromGraph | None = None,
        connection_pattern: Sequence[Sequence[bool]] | None = None,
        strict: bool = False,
        name: str | None = None,
        destroy_map: dict[int, Sequence[int]] | None = None,
        **kwargs: Any,
    ) -> None:
        inputs, outputs = _check_io(inputs, "inputs"), _check_io(outputs, "outputs")
        if "updates" in kwargs or "givens" in kwargs:
            raise NotImplementedError("OpFromGraph: updates and givens are not supported")
        unknown = sorted(set(kwargs) - FUNCTION_KWARGS)
        if unknown:
            raise TypeError(
                f"OpFromGraph got unexpected keyword arguments {unknown}; the extra keyword "
                f"arguments go to opweave.function: {sorted(FUNCTION_KWARGS)}"
            )
        if len(set(inputs)) != len(inputs) and kwargs.get("on_unused_input") != "ignore":
            duplicated = [v for i, v in enumerate(inputs) if v in inputs[:i]]
            raise ValueError(
                "The following variables were provided more than once as inputs to the "
                f"OpFromGraph: {duplicated}; the variables are given more than once as inputs, "
                "use distinct variables (e.g. var.copy()) for distinct inputs"
            )
        if name is not None and not isinstance(name, str):
            raise TypeError(f"OpFromGraph: name must be a str or None, got {name!r}")
        lop_overrides = _one_of("lop_overrides", lop_overrides, "pullback", pullback)
        rop_overrides = _one_of("rop_overrides", rop_overrides, "pushforward", pushforward)
        for arg, override in (
            ("lop_overrides", lop_overrides),
            ("grad_overrides", grad_overrides),
            ("rop_overrides", rop_overrides),
        ):
            _check_override(arg, override)
        if lop_overrides is not None and grad_overrides is not None:
            raise ValueError("OpFromGraph: lop_overrides and grad_overrides are mutually exclusive")
        if grad_overrides is not None:
            warnings.warn(
                "OpFromGraph: grad_overrides is deprecated in favour of lop_overrides "
                "(f(inputs, outputs, output_grads))",
                FutureWarning,
                stacklevel=2,
            )

        self.is_inline = bool(inline)
        self.fgraph, self.shared_inputs = construct_inner_fgraph(inputs, outputs)
        if strict and self.shared_inputs:
            raise ValueError(
                "OpFromGraph(strict=True): every variable the inner graph needs must be an "
                f"input, but the outputs use the shared variables {self.shared_inputs}"
            )
        self.kwargs = dict(kwargs)
        self.input_types = [v.type for v in self.fgraph.inputs]
        self.output_types = [v.type for v in self.fgraph.outputs]
        self.lop_overrides = lop_overrides
        self.grad_overrides = grad_overrides
        self.rop_overrides = rop_overrides
        self._lop_op_interface = grad_overrides is None
        self._connection_pattern = _check_pattern(
            connection_pattern, len(self.input_types), len(self.output_types)
        )
        self.name = name
        self.destroy_map = _check_destroy_map(
            destroy_map, len(self.input_types), len(self.output_types)
        )
        self._lop_op_cache: dict[tuple[bool, ...], Callable[..., list[Variable]]] = {}
        self._rop_op_cache: Callable[..., list[Variable | None]] | None = None
        #: Where backends keep what they build to run the Op (the compiled inner
        #: function), by backend name; not pickled, not copied by :meth:`clone`.
        self.runtime_cache: dict[str, Any] = {}

    @property
    def fn(self) -> Any:
        """The inner graph compiled on its own, ``opweave.function(inner_inputs,
        inner_outputs, **kwargs)`` (PyTensor's attribute; compiled on first use, with
        ``trust_input`` set, and kept until the Op is copied or pickled)."""
        compiled = self.runtime_cache.get("fn")
        if compiled is None:
            compiled = function(list(self.inner_inputs), list(self.inner_outputs), **self.kwargs)
            compiled.trust_input = True
            self.runtime_cache["fn"] = compiled
        return compiled

    @property
    def pullback_overrides(self) -> Any:
        """The gradient override (``lop_overrides``), under PyTensor's newer name."""
        return self.lop_overrides

    @property
    def pushforward_overrides(self) -> Any:
        """The R-operator override (``rop_overrides``), under PyTensor's newer name."""
        return self.rop_overrides

    # ------------------------------------------------------------------ identity

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __str__(self) -> str:
        name = type(self).__name__ if self.name is None else self.name
        return f"{name}{{inline={self.is_inline}}}"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_lop_op_cache"] = {}
        state["_rop_op_cache"] = None
        state["runtime_cache"] = {}
        return state

    @property
    def inner_inputs(self) -> list[Variable]:
        """The inputs of the inner graph (explicit ones, then one per shared variable)."""
        return self.fgraph.inputs

    @property
    def inner_outputs(self) -> list[Variable]:
        """The outputs of the inner graph."""
        return self.fgraph.outputs

    def clone(self) -> OpFromGraph:
        """A copy of the Op with its own copy of the inner graph (and no caches)."""
        res = copy(self)
        res.fgraph = self.fgraph.clone()
        res._lop_op_cache = {}
        res._rop_op_cache = None
        res.runtime_cache = {}
        return res

    # ------------------------------------------------------------------ graph building

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        """Apply the Op; the implicit shared inputs are added when left out."""
        n_explicit = len(self.inner_inputs) - len(self.shared_inputs)
        if len(inputs) == n_explicit:
            inputs = (*inputs, *self.shared_inputs)
        elif len(inputs) != len(self.inner_inputs):
            raise ValueError(
                f"{self} expects {n_explicit} inputs (or {len(self.inner_inputs)} with its "
                f"shared variables), got {len(inputs)}: Expected {n_explicit} input(s)"
            )
        return super().__call__(*inputs, **kwargs)

    def make_node(self, *inputs: Any) -> Apply:
        """Check each input against the inner input's Type (converting constants)."""
        if len(inputs) != len(self.inner_inputs):
            n = len(self.inner_inputs)
            raise ValueError(f"{self} expects {n} inputs, got {len(inputs)}: Expected {n} input(s)")
        checked = []
        for i, (value, expected) in enumerate(zip(inputs, self.input_types, strict=True)):
            try:
                checked.append(expected.filter_variable(value))
            except (TypeError, ValueError) as exc:
                got = f"Type {value.type}" if isinstance(value, Variable) else repr(value)
                label = f" ({value.name})" if getattr(value, "name", None) else ""
                raise TypeError(
                    f"{self}: input {i}{label} has {got}, expected Type {expected}: {exc}"
                ) from exc
        return Apply(self, checked, [t() for t in self.output_types])

    # ------------------------------------------------------------------ graph facts

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The given pattern, or which inner outputs depend on which inner inputs."""
        if self._connection_pattern is None:
            self._connection_pattern = io_connection_pattern(self.inner_inputs, self.inner_outputs)
        return [list(row) for row in self._connection_pattern]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]) -> list[Any]:
        """The inner graph's output shapes, in terms of the node's inputs and their shapes."""
        out_shapes = infer_inner_shapes(self.inner_inputs, self.inner_outputs, shapes)
        flat = [s for shp in out_shapes if shp is not None for s in shp]
        symbolic = [s for s in flat if isinstance(s, Variable)]
        repl = dict(zip(self.inner_inputs, node.inputs, strict=True))
        cloned = iter(clone_replace(symbolic, replace=repl) if symbolic else [])
        result: list[Any] = []
        for shp in out_shapes:
            if shp is None:
                result.append(None)
                continue
            result.append(tuple(next(cloned) if isinstance(s, Variable) else s for s in shp))
        return result

    # ------------------------------------------------------------------ differentiation

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """The gradient through the inner graph (or the overrides), as an ``OpFromGraph``."""
        disconnected = tuple(isinstance(g.type, DisconnectedType) for g in output_grads)
        lop = self._lop_op_cache.get(disconnected)
        if lop is None:
            lop = self._build_lop_op(disconnected)
            self._lop_op_cache[disconnected] = lop
        grads = lop(*inputs, *outputs, *output_grads)
        # A term the inner graph calls disconnected (a non-differentiable inner Op) for an
        # input the connection pattern connects to a needed output is a zero.
        pattern = self.connection_pattern(None)  # type: ignore[arg-type]
        result = []
        for i, (inp, g) in enumerate(zip(inputs, grads, strict=True)):
            needed = any(p and not d for p, d in zip(pattern[i], disconnected, strict=True))
            if isinstance(g.type, DisconnectedType) and needed:
                g = float_filled_like(inp, 0)
            result.append(g)
        return result

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:
        """:meth:`L_op` with the outputs rebuilt (PyTensor's ``grad`` interface)."""
        outputs = self(*inputs, return_list=True)
        return self.L_op(inputs, outputs, output_grads)

    def _grad_type(self, j: int) -> Any:
        """The Type of the gradient of output ``j`` (a float one for integer outputs)."""
        t = self.output_types[j]
        dtype = dtype_of(t)
        if dtype is not None and not is_float(dtype) and hasattr(t, "clone"):
            return t.clone(dtype=config.floatX)
        return t

    def _build_lop_op(self, disconnected: tuple[bool, ...]) -> Callable[..., list[Variable]]:
        """An ``OpFromGraph`` of the gradient for one pattern of disconnected output
        gradients, wrapped to take and give what ``L_op`` does."""
        inner_inputs = list(self.inner_inputs)
        nin, nout = len(inner_inputs), len(self.inner_outputs)
        override = self.lop_overrides if self._lop_op_interface else self.grad_overrides

        if isinstance(override, OpFromGraph):
            op = override
            if self._lop_op_interface:
                op.kwargs.setdefault("on_unused_input", "ignore")

                def call_lop_ofg(*args: Variable) -> list[Variable]:
                    return list(op(*args, return_list=True))

                return call_lop_ofg

            def override(inps: list[Variable], grads: list[Variable]) -> list[Variable]:
                return list(op(*inps, *grads, return_list=True))

        keep = [j for j in range(nout) if not disconnected[j]]
        # A copy of each output, so that an override does not replace the gradient
        # flowing into an output from another output.
        connected_outputs = [_identity_copy(self.inner_outputs[j]) for j in keep]
        connected_grads = [self._grad_type(j)() for j in keep]

        def default_grads(wrt: list[Variable]) -> list[Variable]:
            if not wrt:
                return []
            if not connected_outputs:
                return [DisconnectedType()() for _ in wrt]
            return list(
                grad(
                    None,
                    wrt,
                    disconnected_inputs="ignore",
                    return_disconnected="disconnected",
                    null_gradients="return",
                    known_grads=dict(zip(connected_outputs, connected_grads, strict=True)),
                )
            )

        if self._lop_op_interface:
            args: tuple[Any, ...] = (inner_inputs, connected_outputs, connected_grads)
        else:
            args = (inner_inputs, connected_grads)
        if override is None:
            input_grads = default_grads(inner_inputs)
        elif isinstance(override, list):
            if len(override) != nin:
                raise ValueError(
                    f"{self}: lop_overrides lists {len(override)} gradients, but the Op has "
                    f"{nin} inputs (one entry per input: None, a callable or a "
                    "DisconnectedType/NullType variable)"
                )
            defaults = iter(default_grads([v for v, o in zip(inner_inputs, override) if o is None]))
            input_grads = _combine(override, defaults, args, "lop_overrides")
        else:
            input_grads = _call_override(override, args, nin, "lop_overrides")
        input_grads = [
            g if _is_special(g) else _as_grad_of(inp, g, i, self)
            for i, (inp, g) in enumerate(zip(inner_inputs, input_grads, strict=True))
        ]

        real = [g for g in input_grads if not _is_special(g)]
        lop_op = OpFromGraph(
            inner_inputs + connected_outputs + connected_grads,
            real,
            inline=self.is_inline,
            name=None if self.name is None else f"{self.name}_LOp",
            on_unused_input="ignore",
        )

        def call_lop(*args: Variable) -> list[Variable]:
            ins, outs, ograds = args[:nin], args[nin : nin + nout], args[nin + nout :]
            outs_k = [outs[j] for j in keep]
            grads_k = [_cast_like(ograds[j], connected_grads[n]) for n, j in enumerate(keep)]
            computed = iter(lop_op(*ins, *outs_k, *grads_k, return_list=True) if real else [])
            return [g if _is_special(g) else next(computed) for g in input_grads]

        return call_lop

    def R_op(
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[Variable | None]:
        """The R-operator through the inner graph (or the overrides)."""
        if self._rop_op_cache is None:
            self._rop_op_cache = self._build_rop_op()
        points = [
            filled_like(inp, 0) if ev is None else ev
            for inp, ev in zip(inputs, eval_points, strict=True)
        ]
        return self._rop_op_cache(*inputs, *points)

    def _build_rop_op(self) -> Callable[..., list[Variable | None]]:
        """An ``OpFromGraph`` of the R-operator, wrapped to take and give what ``R_op`` does."""
        override = self.rop_overrides
        if isinstance(override, OpFromGraph):
            op = override

            def call_rop_ofg(*args: Variable) -> list[Variable | None]:
                return list(op(*args, return_list=True))

            return call_rop_ofg
        inner_inputs = list(self.inner_inputs)
        inner_outputs = list(self.inner_outputs)
        nout = len(inner_outputs)
        eval_points = [t() for t in self.input_types]

        def default_rops(f: list[Variable]) -> list[Variable]:
            if not f:
                return []
            return list(
                Rop(
                    f,
                    inner_inputs,
                    eval_points,
                    disconnected_outputs="ignore",
                    return_disconnected="disconnected",
                )
            )

        args = (inner_inputs, eval_points)
        if override is None:
            results = default_rops(inner_outputs)
        elif isinstance(override, list):
            if len(override) != nout:
                raise ValueError(
                    f"{self}: rop_overrides lists {len(override)} results, but the Op has "
                    f"{nout} outputs (one entry per output: None, a callable or a "
                    "DisconnectedType/NullType variable)"
                )
            defaults = iter(default_rops([v for v, o in zip(inner_outputs, override) if o is None]))
            results = _combine(override, defaults, args, "rop_overrides")
        else:
            results = _call_override(override, args, nout, "rop_overrides")
        real = [r for r in results if not _is_special(r)]
        rop_op = OpFromGraph(
            inner_inputs + eval_points,
            real,
            inline=self.is_inline,
            name=None if self.name is None else f"{self.name}_rop",
            on_unused_input="ignore",
        )

        def call_rop(*args: Variable) -> list[Variable | None]:
            computed = iter(rop_op(*args, return_list=True) if real else [])
            out: list[Variable | None] = []
            for r in results:
                if isinstance(r.type, DisconnectedType):
                    out.append(None)
                elif isinstance(r.type, NullType):
                    out.append(r)
                else:
                    out.append(next(computed))
            return out

        return call_rop


# ---------------------------------------------------------------------- argument checks


def _one_of(old_name: str, old: Any, new_name: str, new: Any) -> Any:
    """The override given under ``old_name`` or under its newer name ``new_name``.

    Raises
    ------
    ValueError
        If both are given.
    """
    if old is not None and new is not None:
        raise ValueError(f"OpFromGraph: {old_name} and {new_name} are mutually exclusive")
    return new if new is not None else old


def _check_io(value: Any, what: str) -> list[Variable]:
    if not isinstance(value, list):
        raise TypeError(
            f"OpFromGraph: {what} must be a list of Variables, got {type(value).__name__}"
        )
    for i, var in enumerate(value):
        if not isinstance(var, Variable):
            raise TypeError(
                f"OpFromGraph: {what}[{i}] must be a Variable, got {type(var).__name__} {var!r}"
            )
    return list(value)


def _check_override(arg: str, override: Any) -> None:
    if override is None or isinstance(override, OpFromGraph | list) or callable(override):
        if isinstance(override, list):
            for i, entry in enumerate(override):
                if entry is None or callable(entry):
                    continue
                if isinstance(entry, Variable) and _is_special(entry):
                    continue
                raise TypeError(
                    f"OpFromGraph: {arg}[{i}] must be None, a callable or a DisconnectedType/"
                    f"NullType variable, got {type(entry).__name__} {entry!r}"
                )
        return
    if isinstance(override, str) and override == "default":
        raise ValueError(f"OpFromGraph: {arg}='default' is no longer valid; use None instead")
    if isinstance(override, Variable):
        raise TypeError(
            f"OpFromGraph: {arg} cannot be a Variable; give a list with one entry per "
            "input (lop/grad) or output (rop) instead"
        )
    raise TypeError(
        f"OpFromGraph: {arg} must be None, a callable, an OpFromGraph or a list, got "
        f"{type(override).__name__} {override!r}"
    )


def _check_pattern(
    pattern: Sequence[Sequence[bool]] | None, nin: int, nout: int
) -> list[list[bool]] | None:
    if pattern is None:
        return None
    rows = [list(row) for row in pattern]
    if len(rows) != nin or any(len(row) != nout for row in rows):
        raise ValueError(
            f"OpFromGraph: connection_pattern must have one row of {nout} booleans per input "
            f"({nin} rows), got {pattern!r}"
        )
    return [[bool(p) for p in row] for row in rows]


def _check_destroy_map(
    destroy_map: dict[int, Sequence[int]] | None, nin: int, nout: int
) -> dict[int, list[int]]:
    if destroy_map is None:
        return {}
    if not isinstance(destroy_map, dict):
        raise TypeError(
            f"OpFromGraph: destroy_map must be a dict {{output index: [input indices]}}, got "
            f"{type(destroy_map).__name__}"
        )
    checked: dict[int, list[int]] = {}
    for out, ins in destroy_map.items():
        positions = list(ins)
        if not (isinstance(out, int) and 0 <= out < nout) or not all(
            isinstance(i, int) and 0 <= i < nin for i in positions
        ):
            raise ValueError(
                f"OpFromGraph: destroy_map entry {out}: {ins!r} must map an output index "
                f"(0..{nout - 1}) to input indices (0..{nin - 1})"
            )
        checked[out] = positions
    return checked


# ---------------------------------------------------------------------- gradient helpers


def _identity_copy(var: Variable) -> Variable:
    """``var.copy()`` where the variable has one (tensors), else ``var``."""
    method = getattr(var, "copy", None)
    return method() if callable(method) else var


def _cast_like(var: Variable, like: Variable) -> Variable:
    """``var`` with ``like``'s dtype (gradients of integer outputs arrive as floats)."""
    dtype = dtype_of(like)
    if dtype is not None and dtype_of(var) not in (None, dtype):
        return cast_to(var, dtype)
    return var


def _as_grad_of(inp: Variable, g: Any, i: int, op: OpFromGraph) -> Variable:
    """Check an override's gradient term for input ``i``."""
    if not isinstance(g, Variable):
        raise TypeError(
            f"{op}: the gradient override returned {type(g).__name__} {g!r} for input {i}; "
            "expected a Variable"
        )
    return g


def _combine(entries: list[Any], defaults: Any, args: tuple[Any, ...], arg: str) -> list[Variable]:
    """Entries of an override list: ``None`` takes the next default, a callable is called
    with ``args``, a DisconnectedType/NullType variable is kept."""
    combined = []
    for entry in entries:
        if entry is None:
            combined.append(next(defaults))
        elif isinstance(entry, Variable):
            combined.append(entry)
        else:
            value = entry(*args)
            if not isinstance(value, Variable):
                raise TypeError(
                    f"OpFromGraph: a callable in {arg} must return one Variable, got "
                    f"{type(value).__name__} {value!r}"
                )
            combined.append(value)
    return combined


def _call_override(fn: Any, args: tuple[Any, ...], n: int, arg: str) -> list[Variable]:
    """Call an override callable and check it returns a list of ``n`` results."""
    result = fn(*args)
    if not isinstance(result, list | tuple):
        raise TypeError(
            f"OpFromGraph: the {arg} callable must return a list, got {type(result).__name__}"
        )
    if len(result) != n:
        raise ValueError(
            f"OpFromGraph: the {arg} callable must return a list of {n} results, got {len(result)}"
        )
    return list(result)
