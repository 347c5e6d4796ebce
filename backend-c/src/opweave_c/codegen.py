"""Generating the C of one block: the nested scopes of Theano's documented C contract.

A block computes a sequence of Apply nodes. Each variable it touches gets a mangled
name (``V<k>``) and one scope::

    {
        PyObject* py_V3 = <input value | output cell | Py_None>;  (a new reference)
        <c_declare>
        <c_extract | c_extract_out | c_extract_out_unshared | c_init>   %(fail)s -> goto __label_<L>
        { ...the next variable's scope, and innermost the nodes... }
        __label_<L>: ;
        if (!__failure) { <c_sync>; store py_V3 in its cell }     (outputs only)
        <c_cleanup>
        Py_XDECREF(py_V3);
    }

and each node one scope holding its ``c_code``, the next node, its label and its
``c_code_cleanup``. The text is written in one pass (openings forward, closings
backward) and nested scopes are not re-indented, so the code of a block, and the time to
make it, grow linearly with its nodes. ``%(fail)s`` sets ``__failure`` to the label's
number and jumps to it, so exactly what was acquired is released, in reverse order. The
block function returns 0, or the label that failed (which names the variable or node to
blame).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.utils import MethodNotDefined
from opweave_c.contract import (
    NoCCode,
    as_snippets,
    c_op_of,
    c_type_of,
    call_optional,
    filter_checked_in_c,
    version_of,
    warn_unversioned,
)

INPUT, OUTPUT, TEMP, LITERAL = "input", "output", "temp", "literal"
#: Comment opening each node's code, so compiler errors can be traced to the node.
NODE_MARKER = "opweave node:"
#: A block of kind calls with at least this many nodes is built without optimisation
#: (``OPW_GLUE``): GCC's time on the long function then stops dominating the build.
GLUE_MIN_NODES = 32


@dataclass
class BlockVar:
    """One variable of a block and how the block gets and gives its value."""

    var: Variable
    name: str
    role: str
    ctype: Any
    index: int = -1
    recycle: bool = False


@dataclass
class Block:
    """The generated C of one block and what is needed to build and link it."""

    fn_name: str
    code: str
    inputs: list[Variable]
    outputs: list[Variable]
    labels: dict[int, tuple[str, Any]]
    objects: list[tuple[Any, Any]] = field(default_factory=list)
    support_apply: list[str] = field(default_factory=list)
    init_apply: list[str] = field(default_factory=list)
    #: Added to an exception raised in the block's C (what a reader needs to map the C's
    #: message back to the graph): strings, or objects whose ``str`` is written then.
    notes: list[Any] = field(default_factory=list)


def _indent(code: str, depth: int) -> str:
    pad = "    " * depth
    return "\n".join(pad + line if line.strip() else line for line in code.splitlines())


class BlockBuilder:
    """Builds one block's function.

    Parameters
    ----------
    fn_name
        Name of the generated C function.
    nodes
        The Apply nodes, in execution order.
    inputs
        Variables read from outside, in the order of ``in_values`` (graph inputs first).
    outputs
        Variables whose values leave the block (written to output cells), in cell order.
    no_recycling
        Outputs that must not reuse their previous value's memory.
    check_input
        Passed to ``c_declare``/``c_extract``.
    describe
        How a node is named in the comment opening its code (which compiler errors are
        traced back to); default ``str``. A block whose text must not depend on where its
        node sits in a graph names nodes by what they are.
    share_kinds
        Write each node's code into a function of its own, named after a hash of its text
        and called from the block function (:meth:`_kind_call`), so that nodes computing
        the same thing on the same Types share one function and the C compiler sees each
        kind of node once. Nodes whose variables have Types from outside opweave-c keep
        their code inline.
    """

    def __init__(
        self,
        fn_name: str,
        nodes: Sequence[Apply],
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        no_recycling: Sequence[Variable] = (),
        check_input: bool = True,
        describe: Callable[[Apply], str] = str,
        share_kinds: bool = False,
    ) -> None:
        self.fn_name = fn_name
        self.describe = describe
        self.share_kinds = share_kinds
        #: Kind functions written so far: name -> (support snippets, function text).
        self.kinds: dict[str, tuple[list[str], str]] = {}
        self.nodes = list(nodes)
        self.check_input = check_input
        self.labels: dict[int, tuple[str, Any]] = {}
        self.vars: dict[Variable, BlockVar] = {}
        self.objects: list[tuple[Any, Any]] = []
        no_recycle = set(no_recycling)
        out_index = {v: i for i, v in enumerate(outputs)}
        in_index = {v: i for i, v in enumerate(inputs)}
        order: list[Variable] = list(inputs)
        for node in self.nodes:
            order += [v for v in node.inputs if v not in in_index]
        for node in self.nodes:
            order += list(node.outputs)
        self.impls = {node: c_op_of(node) for node in self.nodes}
        for var in dict.fromkeys(order):
            try:
                ctype = c_type_of(var.type)
            except NoCCode as exc:
                user = var.owner or next((n for n in self.nodes if var in n.inputs), None)
                role_text = (
                    f"node {user} uses it"
                    if user is not None
                    else "it is an input of the function that no node uses"
                )
                raise NoCCode(f"{exc}, and {role_text} (variable {var})") from exc
            if var in in_index:
                role, idx = INPUT, in_index[var]
            elif var in out_index:
                role, idx = OUTPUT, out_index[var]
            elif isinstance(var, Constant):
                literal = call_optional(ctype, "c_literal", var.data)
                if literal is None:
                    raise NoCCode(f"constant {var} is neither an input of the block nor a literal")
                role, idx = LITERAL, -1
            elif var.owner is not None and var.owner in self.nodes:
                role, idx = TEMP, -1
            else:
                raise NoCCode(f"variable {var} is not computed in the block and not an input")
            self.vars[var] = BlockVar(
                var, f"V{len(self.vars)}", role, ctype, idx, var not in no_recycle
            )
            self.objects.append((ctype, None))
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self._label = 0

    def _new_label(self, kind: str, what: Any) -> int:
        self._label += 1
        self.labels[self._label] = (kind, what)
        return self._label

    @staticmethod
    def _fail(label: int) -> str:
        return f"{{__failure = {label}; goto __label_{label};}}"

    # -------------------------------------------------------------- pieces

    def _var_open(self, bv: BlockVar) -> tuple[str, int]:
        label = self._new_label(bv.role, bv.var)
        sub = {"fail": self._fail(label), "id": str(label), "failure_var": "__failure"}
        ct, name = bv.ctype, bv.name
        if bv.role == INPUT:
            source = f"in_values[{bv.index}]"
            sub["filter"] = f"st->filters[{bv.index}]"
        elif bv.role == OUTPUT:
            source = f"PyList_GET_ITEM(st->out_cells[{bv.index}], 0)"
            sub["filter"] = "NULL"
        else:
            source = "Py_None"
            sub["filter"] = "NULL"
        lines = [f"PyObject* py_{name} = {source};", f"Py_XINCREF(py_{name});"]
        lines.append(ct.c_declare(name, sub, **self._check(ct, "c_declare")))
        if bv.role == INPUT:
            lines.append(self._python_filter(bv, sub))
            lines.append(ct.c_extract(name, sub, **self._check(ct, "c_extract")))
        elif bv.role == LITERAL:
            lines.append(f"{name} = {ct.c_literal(bv.var.data)};")
        elif bv.role == OUTPUT and bv.recycle:
            code = call_optional(ct, "c_extract_out", name, sub, check_input=False, default=None)
            lines.append(code if code is not None else ct.c_init(name, sub))
        elif bv.role == OUTPUT and bv.index >= 0:
            # Not recycled (a function's result): its Type may still take the previous value
            # when the cell holds the only reference left (see ``c_extract_out_unshared``).
            code = call_optional(ct, "c_extract_out_unshared", name, sub, default=None)
            lines.append(code if code is not None else ct.c_init(name, sub))
        else:
            lines.append(ct.c_init(name, sub))
        return "\n".join(lines), label

    def _python_filter(self, bv: BlockVar, sub: dict[str, str]) -> str:
        """For a Type whose C extraction may accept what its ``filter`` refuses: pass the
        argument through the filter the linker gives (``st->filters``; none when Python
        already filtered it) before extracting it."""
        if not self.check_input or filter_checked_in_c(bv.var.type):
            return ""
        return f"if (opw_filter(&py_{bv.name}, {sub['filter']}) < 0) {sub['fail']}"

    def _check(self, ct: Any, method: str) -> dict[str, bool]:
        from opweave_c.contract import _accepts

        fn = getattr(ct, method)
        return {"check_input": self.check_input} if _accepts(fn, "check_input") else {}

    def _var_close(self, bv: BlockVar, label: int) -> str:
        name, ct = bv.name, bv.ctype
        lines = [f"__label_{label}: ;"]
        if bv.role == OUTPUT:
            sync_label = self._new_label("sync", bv.var)
            sub = {
                "fail": f"{{__failure = {sync_label}; goto __sync_end_{sync_label};}}",
                "id": str(sync_label),
                "failure_var": "__failure",
            }
            lines.append("if (!__failure) {")
            lines.append(_indent(ct.c_sync(name, sub), 1))
            lines.append(
                f"    if (py_{name} == NULL) {{ py_{name} = Py_None; Py_INCREF(Py_None); }}"
            )
            lines.append(f"    opw_cell_set(st->out_cells[{bv.index}], py_{name});")
            lines.append(f"    __sync_end_{sync_label}: ;")
            lines.append("}")
        sub = {"fail": "", "id": str(label), "failure_var": "__failure"}
        lines.append(ct.c_cleanup(name, sub))
        lines.append(f"Py_XDECREF(py_{name});")
        return "\n".join(lines)

    def _node_code(self, node: Apply, k: int) -> tuple[str, str, Any, int]:
        impl = self.impls[node]
        label = self._new_label("node", node)
        name = f"node_{self.fn_name}_{k}"
        ins = [self.vars[v].name for v in node.inputs]
        outs = [self.vars[v].name for v in node.outputs]
        sub = {"fail": self._fail(label), "id": str(label), "failure_var": "__failure"}
        marker = self.describe(node).replace("*/", "* /").replace("\n", " ")
        try:
            body = impl.c_code(node, name, ins, outs, sub)
        except MethodNotDefined as exc:
            raise NoCCode(f"{node.op} has no C code for node {node} ({exc})") from exc
        code = f"/* {NODE_MARKER} {marker} */\n" + body
        cleanup = call_optional(impl, "c_code_cleanup", node, name, ins, outs, sub, default="")
        self.objects.append((impl, node))
        return code, cleanup or "", impl, label

    # -------------------------------------------------------------- kind functions

    def _shareable(self, node: Apply) -> bool:
        """Whether ``node``'s code can move into a kind function: every variable's C Type is
        one of opweave-c's own, whose ``c_declare`` declares one variable holding all of
        its state (plus typedefs), so copying that variable in and out is exact."""
        return all(
            type(self.vars[v].ctype).__module__.startswith("opweave_c.")
            for v in (*node.inputs, *node.outputs)
        )

    def _kind_call(self, node: Apply) -> tuple[str, int, list[str]]:
        """The call of ``node``'s kind function (written once per kind), its failure label
        and the kind's ``c_init_code_apply`` snippets.

        The kind function takes the addresses of the block's variables (``void*``, in the
        order of the node's distinct inputs and outputs), copies them into locals declared
        by the Types' ``c_declare`` under names that do not depend on the node's place,
        runs the node's ``c_code`` and ``c_code_cleanup``, and copies the outputs back
        (on failure too, so the block's cleanup releases what the code acquired). It
        returns 0, or 1 when the node failed.
        """
        impl = self.impls[node]
        label = self._new_label("node", node)
        distinct = list(dict.fromkeys([*node.inputs, *node.outputs]))
        local = {v: f"K{j}" for j, v in enumerate(distinct)}
        ins = [local[v] for v in node.inputs]
        outs = [local[v] for v in node.outputs]
        placeholder = "opw_kind_unnamed"
        sub = {"fail": "{__failure = 1; goto __kind_done;}", "id": "1", "failure_var": "__failure"}
        try:
            body = impl.c_code(node, placeholder, ins, outs, sub)
        except MethodNotDefined as exc:
            raise NoCCode(f"{node.op} has no C code for node {node} ({exc})") from exc
        cleanup = call_optional(
            impl, "c_code_cleanup", node, placeholder, ins, outs, sub, default=""
        )
        marker = f"{node.op}({', '.join(str(v.type) for v in node.inputs)})"
        marker = marker.replace("*/", "* /").replace("\n", " ")
        lines = [f"static int {placeholder}(void* const* opw_args) {{", "int __failure = 0;"]
        for v in distinct:
            ct = self.vars[v].ctype
            lines.append(ct.c_declare(local[v], sub, **self._check(ct, "c_declare")))
        for j, v in enumerate(distinct):
            lines.append(f"memcpy(&{local[v]}, opw_args[{j}], sizeof({local[v]}));")
        lines += ["{", f"/* {NODE_MARKER} {marker} */", body, "}", "__kind_done: ;"]
        lines.append(cleanup or "")
        outputs = set(node.outputs)
        for j, v in enumerate(distinct):
            if v in outputs:
                lines.append(f"memcpy(opw_args[{j}], &{local[v]}, sizeof({local[v]}));")
        lines += ["return __failure;", "}"]
        function = "\n".join(lines)
        support = as_snippets(
            call_optional(impl, "c_support_code_apply", node, placeholder, default="")
        )
        init = as_snippets(call_optional(impl, "c_init_code_apply", node, placeholder, default=""))
        digest = hashlib.sha256("\0".join([function, *support, *init]).encode()).hexdigest()
        name = f"opw_kind_{digest[:16]}"
        if name not in self.kinds:
            self.kinds[name] = (
                [snippet.replace(placeholder, name) for snippet in support],
                function.replace(placeholder, name),
            )
        self.objects.append((impl, node))
        pointers = ", ".join(f"&{self.vars[v].name}" for v in distinct)
        call = f"void* opw_args[] = {{{pointers}}};\nif ({name}(opw_args)) {self._fail(label)}"
        return call, label, [snippet.replace(placeholder, name) for snippet in init]

    # -------------------------------------------------------------- the block

    def build(self) -> Block:
        """Generate the block function."""
        opens: list[tuple[BlockVar, str, int]] = []
        for bv in self.vars.values():
            code, label = self._var_open(bv)
            opens.append((bv, code, label))
        nodes = []
        support_apply: list[str] = []
        init_apply: list[str] = []
        inline = 0  # nodes whose code is in the block function itself
        for k, node in enumerate(self.nodes):
            if self.share_kinds and self._shareable(node):
                code, label, kind_init = self._kind_call(node)
                nodes.append((code, "", label))
                init_apply += kind_init
                continue
            inline += 1
            code, cleanup, impl, label = self._node_code(node, k)
            nodes.append((code, cleanup, label))
            name = f"node_{self.fn_name}_{k}"
            support_apply += as_snippets(
                call_optional(impl, "c_support_code_apply", node, name, default="")
            )
            init_apply += as_snippets(
                call_optional(impl, "c_init_code_apply", node, name, default="")
            )
        for snippets, function in self.kinds.values():
            support_apply += [*snippets, function]
        warn_unversioned(self.objects)
        # The scopes nest (each variable's and node's holds all that follow), but the text
        # is written once, openings forward and closings backward: its size and the time to
        # make it grow linearly with the block (nested text is not re-indented).
        # A long function of calls and reference moves only: compiled without optimisation
        # (see runtime.h). A short one is optimised: it builds fast and calls cost less.
        glue = ""
        if self.share_kinds and not inline and len(self.nodes) >= GLUE_MIN_NODES:
            glue = "OPW_GLUE "
        parts = [
            f"static {glue}int {self.fn_name}(PyObject* const* in_values, opw_state* st) {{",
            "    int __failure = 0;",
            "    (void)in_values; (void)st;",
        ]
        for _, code, _ in opens:
            parts += ["{", code]
        for code, _, _ in nodes:
            parts += ["{", code]
        for _, cleanup, label in reversed(nodes):
            parts += [f"__label_{label}: ;", cleanup, "}"]
        for bv, _, label in reversed(opens):
            parts += [self._var_close(bv, label), "}"]
        parts += ["    return __failure;", "}"]
        fn = "\n".join(parts)
        return Block(
            self.fn_name,
            fn,
            self.inputs,
            self.outputs,
            self.labels,
            self.objects,
            support_apply,
            init_apply,
        )


def block_versions(block: Block) -> list[tuple[Any, ...]]:
    """Every ``c_code_cache_version`` involved in ``block`` (``()`` for unversioned parts)."""
    return [version_of(obj, node) for obj, node in block.objects]


def nodes_at_lines(source: str, lines: list[int]) -> list[str]:
    """The nodes whose code holds the given (1-based) source lines, from the markers."""
    text = source.splitlines()
    found: list[str] = []
    for number in lines:
        for line in reversed(text[: max(0, number)]):
            if NODE_MARKER in line:
                node = line.split(NODE_MARKER, 1)[1].rsplit("*/", 1)[0].strip()
                found.append(node)
                break
    return list(dict.fromkeys(found))
