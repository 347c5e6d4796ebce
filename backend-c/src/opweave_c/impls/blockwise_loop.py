"""The C of a ``Blockwise`` node: a batch loop around its core Op's C code.

The core Op is applied to placeholders of one batch entry of the node's inputs (their
core Types), and the C implementation of that core node is found as for any node
(:func:`opweave_c.contract.c_op_of`). Its ``c_code`` becomes a static function of its own
(``<name>_core``, see ``opw_bw_core_t`` in ``impls/c/blockwise.c``), so that its
declarations and labels are valid once per call; the node's code (``opw_bw_run``) calls it
once per batch index, in C order, on views of the inputs (the core shape and strides at the
batch entry's offset), and copies its outputs into the batch entries of new C-contiguous
outputs, allocated once the first call has given the core shapes. Everything the core
code needs (support code, headers, libraries, compile arguments, init code) comes with it.

As in the Python backend's kernel (:mod:`opweave_python.impls.blockwise`), only batch
dimensions of static length 1 broadcast; lengths that do not broadcast, and an empty
batch (where the core Op never runs and its ``infer_shape`` gives the core shapes), are
left to that kernel (:func:`run_python`), which raises its error or gives the empty
outputs. An error of the core code at some batch index propagates as it is.
"""

from __future__ import annotations

import base64
import pickle
from functools import lru_cache
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.link.perform import find_perform
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.type import TensorType
from opweave_c.impls.common import SHARED_SUPPORT, SnippetImpl, c_string, tensor_dtype, typenum
from opweave_c.impls.csource import render, snippet

__all__ = ["BlockwiseC", "blockwise_c", "core_implementation", "run_python"]

#: Bump when the generated C changes.
VERSION = (1,)

#: The most inputs and outputs a node may have (``OPW_BW_MAX_IN``/``_OUT`` of the C).
MAX_ARGS = 16

SUPPORT = snippet("blockwise.c", "support")

#: The ``c_*`` methods giving lists (headers, libraries ...), passed on from the core code.
_LISTS = (
    "c_headers",
    "c_header_dirs",
    "c_lib_dirs",
    "c_libraries",
    "c_compile_args",
    "c_no_compile_args",
)


def _call(obj: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    from opweave_c.contract import call_optional

    return call_optional(obj, method, *args, default=None, **kwargs)


def _snippets(code: Any) -> list[str]:
    from opweave_c.contract import as_snippets

    return as_snippets(code)


def core_implementation(op: Blockwise, node: Apply) -> tuple[Apply, Any, list[Any]] | None:
    """The core node of ``node`` (on placeholders of its inputs' core Types), the C
    implementation of that node and the C interfaces of its Types, or ``None``.

    Parameters
    ----------
    op
        The Blockwise.
    node
        A node of ``op``.

    Returns
    -------
    tuple or None
        ``(core node, C implementation, [C Type of each core input, then output])``;
        ``None`` when the core node cannot be built or has no C.
    """
    from opweave_c.contract import NoCCode, c_op_of, c_type_of

    batch = op.batch_ndim(node)
    try:
        placeholders = [
            TensorType(v.type.dtype, shape=v.type.shape[batch:])()  # type: ignore[attr-defined]
            for v in node.inputs
        ]
        core_node = op.core_op.make_node(*placeholders)
        impl = c_op_of(core_node)
        ctypes = [c_type_of(v.type) for v in (*core_node.inputs, *core_node.outputs)]
    except (NoCCode, TypeError, ValueError, NotImplementedError):
        return None
    if impl is None or any(ct is None for ct in ctypes):
        return None
    return core_node, impl, ctypes


def _describe(node: Apply) -> str:
    """The node (its Op and variable Types) pickled, as ASCII, for :func:`run_python`."""
    types = ([v.type for v in node.inputs], [v.type for v in node.outputs])
    return base64.b64encode(pickle.dumps((node.op, *types))).decode("ascii")


@lru_cache(maxsize=256)
def _python_kernel(described: str) -> tuple[Apply, Any]:
    op, in_types, out_types = pickle.loads(base64.b64decode(described))
    node = Apply(op, [t() for t in in_types], [t() for t in out_types])
    perform = find_perform(op, node)  # the ``py`` kernel, through the core's resolver
    if perform is None:
        raise NotImplementedError(f"{op}: no Python implementation to run")
    return node, perform


def run_python(described: str, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
    """Run the Python backend's kernel of the node ``described`` on ``inputs``.

    The generated code calls this for batch lengths that do not broadcast (the kernel
    raises its error) and for an empty batch.

    Parameters
    ----------
    described
        The node, as the generated code holds it.
    *inputs
        The node's input values.

    Returns
    -------
    tuple of numpy.ndarray
        The node's outputs.
    """
    node, perform = _python_kernel(described)
    cells: list[list[Any]] = [[None] for _ in node.outputs]
    perform(node, list(inputs), cells)
    return tuple(
        np.asarray(cell[0], dtype=out.type.dtype)  # type: ignore[attr-defined]
        for cell, out in zip(cells, node.outputs, strict=True)
    )


class BlockwiseC(SnippetImpl):
    """A Blockwise node: ``opw_bw_run`` around the core node's code.

    Parameters
    ----------
    core_node
        The core Op applied to placeholders of one batch entry.
    core_impl
        The C implementation of ``core_node``.
    core_ctypes
        The C interfaces of ``core_node``'s input, then output Types.
    described
        The node for :func:`run_python`.
    """

    version = VERSION

    def __init__(
        self, core_node: Apply, core_impl: Any, core_ctypes: list[Any], described: str
    ) -> None:
        self.core_node = core_node
        self.core_impl = core_impl
        self.core_ctypes = core_ctypes
        self.described = described

    def _core_objects(self) -> list[Any]:
        return [self.core_impl, *self.core_ctypes]

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers, the core code's and its Types' support code, the loop.

        Parameters
        ----------
        **kwargs
            Passed on (the contract may pass ``c_compiler``).

        Returns
        -------
        list of str
            The support snippets.
        """
        found = [SHARED_SUPPORT]
        for obj in self._core_objects():
            found += _snippets(_call(obj, "c_support_code", **kwargs))
        return [*dict.fromkeys([*found, SUPPORT])]

    def c_init_code(self, **kwargs: Any) -> list[str]:
        """The core code's and its Types' init code."""
        found: list[str] = []
        for obj in self._core_objects():
            found += _snippets(_call(obj, "c_init_code", **kwargs))
        return [*dict.fromkeys(found)]

    def _lists(self, method: str, kwargs: dict[str, Any]) -> list[str]:
        found: list[str] = []
        for obj in self._core_objects():
            found += list(_call(obj, method, **kwargs) or [])
        return [*dict.fromkeys(found)]

    def c_headers(self, **kwargs: Any) -> list[str]:
        """The core code's headers."""
        return self._lists("c_headers", kwargs)

    def c_header_dirs(self, **kwargs: Any) -> list[str]:
        """The core code's header folders."""
        return self._lists("c_header_dirs", kwargs)

    def c_lib_dirs(self, **kwargs: Any) -> list[str]:
        """The core code's library folders."""
        return self._lists("c_lib_dirs", kwargs)

    def c_libraries(self, **kwargs: Any) -> list[str]:
        """The core code's libraries."""
        return self._lists("c_libraries", kwargs)

    def c_compile_args(self, **kwargs: Any) -> list[str]:
        """The core code's compile arguments."""
        return self._lists("c_compile_args", kwargs)

    def c_no_compile_args(self, **kwargs: Any) -> list[str]:
        """The compile arguments the core code cannot take."""
        return self._lists("c_no_compile_args", kwargs)

    def c_code_cache_version_apply(self, node: Apply) -> tuple[Any, ...]:
        """This loop's version with the core code's; ``()`` when the core is unversioned.

        Parameters
        ----------
        node
            The node.

        Returns
        -------
        tuple
            The version.
        """
        from opweave_c.contract import version_of

        parts = [version_of(self.core_impl, self.core_node)]
        parts += [version_of(ct) for ct in self.core_ctypes]
        if any(not p for p in parts):
            return ()
        return (self.version, *parts)

    def c_support_code_apply(self, node: Apply, name: str) -> list[str]:
        """The core code's own per-node support, then the function ``<name>_core``.

        Parameters
        ----------
        node
            The node.
        name
            Its name in the generated code.

        Returns
        -------
        list of str
            The snippets.
        """
        code_name = f"{name}_corenode"
        found = _snippets(_call(self.core_impl, "c_support_code_apply", self.core_node, code_name))
        return [*found, self._core_function(f"{name}_core", code_name)]

    def c_init_code_apply(self, node: Apply, name: str) -> list[str]:
        """The core code's own per-node init code."""
        code_name = f"{name}_corenode"
        return _snippets(_call(self.core_impl, "c_init_code_apply", self.core_node, code_name))

    def _core_function(self, core_name: str, code_name: str) -> str:
        """``static int <core_name>(PyArrayObject* const* in, PyArrayObject** out)``: the
        core node's code, named ``code_name``."""
        core = self.core_node
        nin = len(core.inputs)
        names = [f"C{j}" for j in range(nin + len(core.outputs))]
        ins, outs = names[:nin], names[nin:]
        sub = {"fail": "{__failure = 1; goto __core_done;}", "id": "1", "failure_var": "__failure"}
        lines = [
            f"static int {core_name}(PyArrayObject* const* opw_in, PyArrayObject** opw_out) {{",
            "int __failure = 0;",
        ]
        for ct, var in zip(self.core_ctypes, names, strict=True):
            lines.append(_call(ct, "c_declare", var, sub, check_input=False))
        lines += [f"{var} = opw_in[{j}];" for j, var in enumerate(ins)]
        lines += [f"{var} = opw_out[{j}];" for j, var in enumerate(outs)]
        body = self.core_impl.c_code(core, code_name, ins, outs, sub)
        cleanup = _call(self.core_impl, "c_code_cleanup", core, code_name, ins, outs, sub)
        lines += ["{", body, "}", "__core_done: ;", cleanup or ""]
        lines += [f"opw_out[{j}] = {var};" for j, var in enumerate(outs)]
        lines += ["return __failure;", "}"]
        return "\n".join(lines)

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Fill in the node's section of ``blockwise.c``."""
        op = node.op
        assert isinstance(op, Blockwise)
        nb = op.batch_ndim(node)
        one = [
            "1" if v.type.shape[d] == 1 else "0"  # type: ignore[attr-defined]
            for v in node.inputs
            for d in range(nb)
        ]
        return render(
            "blockwise.c",
            "node",
            in_core=", ".join(str(v.type.ndim - nb) for v in node.inputs),  # type: ignore[attr-defined]
            out_core=", ".join(str(v.type.ndim - nb) for v in node.outputs),  # type: ignore[attr-defined]
            one=", ".join(one) or "0",
            typenums=", ".join(typenum(str(tensor_dtype(v))) for v in node.outputs),
            who=c_string(str(op)),
            nin=len(inputs),
            nout=len(outputs),
            nb=nb,
            node=c_string(self.described),
            ins=", ".join(inputs),
            outs=", ".join(outputs),
            core=f"{name}_core",
            store="\n".join(f"    {z} = opw_outs[{k}];" for k, z in enumerate(outputs)),
            fail=sub["fail"],
        )


def blockwise_c(op: Blockwise, node: Apply) -> BlockwiseC | None:
    """The C implementation of a Blockwise node whose core node has C, else ``None``.

    ``None`` also for a Blockwise (or core Op) with a ``gufunc_spec`` (the Python kernel
    then calls NumPy on the whole batch), a core Op that destroys or views its inputs,
    variables that are not tensors of a dtype with C, and nodes that cannot be described
    for :func:`run_python`.

    Parameters
    ----------
    op
        The Blockwise.
    node
        A node of ``op``.

    Returns
    -------
    BlockwiseC or None
        The implementation.
    """
    core_op = op.core_op
    if op.gufunc_spec is not None or getattr(core_op, "gufunc_spec", None) is not None:
        return None
    if getattr(core_op, "destroy_map", None) or getattr(core_op, "view_map", None):
        return None
    if len(node.inputs) > MAX_ARGS or len(node.outputs) > MAX_ARGS:
        return None
    if any(tensor_dtype(v) is None for v in (*node.inputs, *node.outputs)):
        return None
    found = core_implementation(op, node)
    if found is None:
        return None
    try:
        described = _describe(node)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    return BlockwiseC(*found, described)
