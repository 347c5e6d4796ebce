"""C code of :mod:`opweave.tensor.elemwise`: ``Elemwise`` (one loop over the broadcast inputs)
and ``CAReduce`` (the loops of :mod:`opweave_c.impls.reduce_loops`).

The loop body is the scalar Op's C (:func:`opweave_c.impls.scalar_basic.scalar_c_code`); a
:class:`~opweave.scalar.composite.Composite` becomes one loop whose body is its whole
inner graph, each inner result held in a C variable of its dtype. A scalar Op with its
own ``c_code`` (PyTensor style) is used as it is, with its support code, headers and
libraries, and may fail (``%(fail)s``) with a Python exception.

At run time the node

1. computes the output shape, raising ``ValueError`` (as the Python backend does) when
   two inputs that are not statically broadcastable on an axis differ in length there: a
   length-1 axis broadcasts only where the input's Type says so (the loop then reads it
   with stride 0);
2. makes its outputs: an ``inplace_pattern`` output is the destroyed input itself (which
   must be writeable), the others are C-contiguous arrays, the previous call's when they
   fit and overlap no input (:c:func:`opw_prep_output`);
3. runs a flat loop when every input that is not statically a scalar is C-contiguous
   with the output's size (a function whose array parameters are ``restrict`` pointers,
   one index, statically broadcast inputs passed by value: GCC vectorises it when the
   body allows), or else a strided loop over the dimensions left after dropping
   length-1 axes and merging the ones that are contiguous in every operand, whose
   innermost loop (a function of its own) steps typed pointers by element strides, so
   that GCC versions it for unit strides and vectorises it. A node of 0-d arrays has
   the innermost loop alone, called once on its one element and built with the glue
   (none of the others, nor their vectorised variants, is worth compiling for it).

An input that is misaligned, byte-swapped or has strides that are not a multiple of its
item size is copied first. An in-place output that overlaps another input in any other
way than element for element (or that had to be copied) is computed into a temporary
and copied back, so the result is always what the out-of-place computation gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.link.threads import openmp_threads
from opweave.scalar.composite import Composite
from opweave.tensor.elemwise import CAReduce, Elemwise, is_broadcast_constant
from opweave_c.impls.blocked import (
    BLOCK_START,
    LANE,
    LANES,
    BlockedLoop,
    blocked_composite,
    work_per_element,
)
from opweave_c.impls.csource import snippet
from opweave_c.impls.reduce_loops import CAReduceC, reduce_name
from opweave_c.impls.scalar_basic import (
    C_TYPE,
    COMPILE_ARGS,
    SCALAR_C_SUPPORT,
    OwnCForwarding,
    OwnCOps,
    scalar_c_code,
)
from opweave_c.impls.scalar_basic import VERSION as SCALAR_VERSION
from opweave_c.impls.tensor_type import C_DTYPES
from opweave_c.vector_math import vector_math_code

__all__ = ["C_OPS", "ELEMWISE_C_SUPPORT", "ElemwiseC"]

#: Version of the generated loop code.
VERSION = (6,)

ELEMWISE_C_SUPPORT = snippet("elemwise.c", "support")

#: The flat loop on several threads: one chunk per thread (see ``ElemwiseC.use_threads``).
PARALLEL_FLAT = snippet("elemwise.c", "parallel_flat")


def openmp_threads_expr(flag: int) -> str:
    """The C expression of the threads of a parallel loop for ``config.openmp__threads ==
    flag``: the number itself, or for ``auto`` (0) the calling thread's OpenMP limit
    (``omp_get_max_threads()``) bounded by the CPUs this process may use, as they are when
    the loop is compiled (:func:`opweave.link.threads.openmp_threads`)."""
    if flag > 0:
        return str(flag)
    cpus = openmp_threads(0)
    return f"(omp_get_max_threads() < {cpus} ? omp_get_max_threads() : {cpus})"


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _indent(code: str, depth: int) -> str:
    pad = "    " * depth
    return "\n".join(pad + line if line.strip() else line for line in code.splitlines())


class ElemwiseC(OwnCForwarding):
    """The C implementation of one Elemwise node (see the module docstring).

    Parameters
    ----------
    op
        The Elemwise Op.
    node
        Its node (input and output Types fix the broadcast pattern and the dtypes).
    body
        The scalar code, on inputs ``opw_a<k>`` and outputs ``opw_r<j>`` (``return -1;``
        on failure, for scalar Ops with their own C code).
    own
        The scalar Ops with their own C code that ``body`` uses.
    """

    def __init__(self, op: Elemwise, node: Apply, body: str, own: OwnCOps) -> None:
        self.op = op
        self.body = body
        self.own = own
        self.blocked: dict[str, BlockedLoop | None] = {}
        #: Elements from which the flat loop runs on several threads (0: never).
        self.parallel_from = 0
        #: The C expression of how many threads it runs on (see :meth:`use_threads`).
        self.threads = "1"
        self.nin = len(node.inputs)
        self.nout = len(node.outputs)
        self.ndim: int = node.outputs[0].type.ndim  # type: ignore[attr-defined]
        self.bcast = [
            tuple(s == 1 for s in v.type.shape)  # type: ignore[attr-defined]
            for v in node.inputs
        ]
        self.scalar_in = [all(b) for b in self.bcast]
        self.inplace = dict(op.inplace_pattern)
        self.in_types = [C_TYPE[v.type.dtype] for v in node.inputs]  # type: ignore[attr-defined]
        self.out_types = [C_TYPE[v.type.dtype] for v in node.outputs]  # type: ignore[attr-defined]
        self.typenums = [
            "NPY_" + v.type.dtype.upper()  # type: ignore[attr-defined]
            for v in node.outputs
        ]

    # ------------------------------------------------------------------ contract

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The vector math declarations, the scalar helpers, the loop helpers, scalar Ops'
        own support code."""
        vec = vector_math_code()
        head = [vec.support_code] if vec else []
        return [*head, SCALAR_C_SUPPORT, ELEMWISE_C_SUPPORT, *self.own.snippets("c_support_code")]

    def c_libraries(self, c_compiler: Any = None) -> list[str]:
        """libmvec (see :mod:`opweave_c.vector_math`) and scalar Ops' own libraries."""
        vec = vector_math_code()
        head = list(vec.libraries) if vec else []
        return [*head, *super().c_libraries(c_compiler)]

    def c_compile_args(self, c_compiler: Any = None) -> list[str]:
        """No floating-point contraction (values as NumPy rounds them), and scalar Ops'
        own arguments; the vector math flags where they apply; OpenMP when threads are on."""
        vec = vector_math_code()
        head = list(vec.compile_args) if vec else []
        if self.parallel_from:
            head.append("-fopenmp")
        return [*COMPILE_ARGS, *head, *self.own.snippets("c_compile_args", c_compiler=c_compiler)]

    def c_headers(self, c_compiler: Any = None) -> list[str]:
        """``<omp.h>`` when threads are on, and scalar Ops' own headers."""
        head = ["<omp.h>"] if self.parallel_from else []
        return [*head, *super().c_headers(c_compiler)]

    def use_threads(self, enabled: bool, min_size: int, work: int = 1, threads: int = 0) -> None:
        """Run the flat loop on several threads (OpenMP) when ``enabled`` and no scalar Op
        brings C of its own (which may fail, and setting a Python exception needs the
        calling thread): from ``min_size`` elements for a loop doing ``work`` = 1 cheap
        operation per element, proportionally fewer for more work; on ``threads`` threads
        (``config.openmp__threads``: 0 for ``auto``, see :func:`openmp_threads_expr`)."""
        threshold = max(1, min_size // max(1, work))
        self.parallel_from = threshold if enabled and not self.own.items else 0
        self.threads = openmp_threads_expr(threads)

    def _parallel_flat(self, name: str) -> str:
        """The flat loop cut into one chunk per thread (multiples of 64 elements)."""
        params = self._contig_params("flat")
        names = [decl.split()[-1] for decl, _ in params]
        chunk = ["opw_hi - opw_lo"]
        chunk += [
            f"{n} + opw_lo" if "*" in decl else n for n, (decl, _) in zip(names[1:], params[1:])
        ]
        return PARALLEL_FLAT.format(
            name=name,
            decls=", ".join(decl for decl, _ in params),
            min_size=self.parallel_from,
            threads=self.threads,
            whole=", ".join(names),
            chunk=", ".join(chunk),
        )

    def c_support_code_apply(self, node: Apply, name: str) -> str:
        """The node's loops: flat (contiguous operands), row (one row of the strided loop
        whose operands are contiguous along it or broadcast across it), strided."""
        if self.ndim == 0:
            # One element: the inner loop alone, called once, built with the glue (no
            # vectorised variants, compiled at -O3, of a loop that runs one iteration).
            return f"static int opw_ew_inner_{name}" + self._inner_loop()
        args = "PyArrayObject* const* opw_x, PyArrayObject* const* opw_dst"
        flat = ", ".join(decl for decl, _ in self._contig_params("flat"))
        code = (
            f"OPW_EW_NOINLINE static int opw_ew_flat_{name}({flat}) {{\n"
            + _indent(self._contig_loop("flat"), 1)
            + "\n}\n\n"
        )
        if self.parallel_from:
            code += self._parallel_flat(name)
        if self.has_row_loop:
            row = ", ".join(decl for decl, _ in self._contig_params("row"))
            code += (
                f"OPW_EW_NOINLINE static int opw_ew_row_{name}({row}) {{\n"
                + _indent(self._contig_loop("row"), 1)
                + "\n}\n\n"
            )
        return (
            code
            + f"OPW_EW_NOINLINE static int opw_ew_inner_{name}"
            + self._inner_loop()
            + f"\nstatic int opw_ew_strided_{name}({args}, const npy_intp* opw_dims, "
            "int opw_unit) {\n" + _indent(self._strided_loop(name), 1) + "\n}\n"
        )

    def c_code_cache_version(self) -> tuple[Any, ...]:
        """The loop's version and the scalar code's (unversioned if a scalar Op's own C
        code is)."""
        inner = self.own.versions()
        return () if inner is None else (*VERSION, *SCALAR_VERSION, *inner)

    # ------------------------------------------------------------------ code

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        sub: dict[str, str],
    ) -> str:
        """The node's code: shape, outputs, then the flat or the strided loop."""
        nin, nout, nd = self.nin, self.nout, self.ndim
        release = f"opw_ew_release(opw_cp, {nin}); opw_ew_release(opw_tmp, {nout});"
        fail = "{ " + release + " " + sub["fail"] + " }"
        opname = _c_string(str(self.op))
        lines: list[str] = []
        add = lines.append
        add(f"npy_intp opw_dims[{max(nd, 1)}];")
        add("npy_intp opw_n = 1;")
        add(f"PyArrayObject* opw_x[{nin}];")
        add(f"PyArrayObject* opw_cp[{nin}] = {{NULL}};")
        add(f"PyArrayObject* opw_tmp[{nout}] = {{NULL}};")
        add(f"PyArrayObject* opw_dst[{nout}];")
        add("int opw_fast = 1, opw_k;")
        add("(void)opw_k;")
        for k, var in enumerate(inputs):
            add(f"opw_x[{k}] = {var};")
        # 1. the output shape, checking non-broadcastable axes
        for d in range(nd):
            free = [k for k in range(nin) if not self.bcast[k][d]]
            if not free:
                add(f"opw_dims[{d}] = 1;")
                continue
            add(f"opw_dims[{d}] = PyArray_DIMS({inputs[free[0]]})[{d}];")
            for k in free[1:]:
                add(
                    f"if (PyArray_DIMS({inputs[k]})[{d}] != opw_dims[{d}]) {{\n"
                    f"    opw_ew_shape_error({opname}, {d}, opw_x, {nin});\n    {fail}\n}}"
                )
            add(f"opw_n *= opw_dims[{d}];")
        # 2. inputs the loop can read as they are, or copies
        add(
            f"for (opw_k = 0; opw_k < {nin}; opw_k++) {{\n"
            "    if (!opw_ew_usable(opw_x[opw_k])) {\n"
            "        opw_cp[opw_k] = (PyArrayObject*)PyArray_NewCopy(opw_x[opw_k], NPY_CORDER);\n"
            f"        if (!opw_cp[opw_k]) {fail}\n"
            "        opw_x[opw_k] = opw_cp[opw_k];\n"
            "    }\n"
            "}"
        )
        # 3. outputs
        for j, out in enumerate(outputs):
            if j in self.inplace:
                i = self.inplace[j]
                src = inputs[i]
                add(
                    f"if (!PyArray_ISWRITEABLE({src})) {{\n"
                    f"    opw_ew_readonly_error({opname}, {i});\n    {fail}\n}}"
                )
                add(f"Py_XDECREF({out});\n{out} = {src};\nPy_INCREF({out});")
                # Element-for-element aliasing is safe; any other overlap (or a copied
                # destination) computes into a temporary that is copied back.
                others = [k for k in range(nin) if k != i]
                cond = [f"opw_cp[{i}] != NULL"]
                cond += [
                    f"(opw_overlap({src}, opw_x[{k}]) && !opw_ew_same_elements_{j}_{k})"
                    for k in others
                ]
                for k in others:
                    add(
                        f"int opw_ew_same_elements_{j}_{k} = "
                        + self._same_elements(src, f"opw_x[{k}]", k, nd)
                        + ";"
                    )
                add(
                    f"if ({' || '.join(cond)}) {{\n"
                    f"    opw_tmp[{j}] = (PyArrayObject*)PyArray_EMPTY({nd}, opw_dims, "
                    f"{self.typenums[j]}, 0);\n"
                    f"    if (!opw_tmp[{j}]) {fail}\n"
                    f"    opw_dst[{j}] = opw_tmp[{j}];\n"
                    "    opw_fast = 0;\n"
                    f"}} else {{\n    opw_dst[{j}] = {src};\n}}"
                )
                for k in others:  # restrict pointers must not alias a written array
                    add(f"if (opw_ew_same_elements_{j}_{k}) opw_fast = 0;")
            else:
                overlap = " || ".join(f"opw_overlap({out}, {v})" for v in inputs)
                add(f"if ({out} != NULL && ({overlap})) Py_CLEAR({out});")
                add(f"if (opw_prep_output(&{out}, {nd}, opw_dims, {self.typenums[j]}) < 0) {fail}")
                add(f"opw_dst[{j}] = {out};")
        # 4. the loops (functions of their own: small functions compile fast and well)
        if nd == 0:  # one element, whatever the layout: the inner loop, once
            operands = [f"opw_x[{k}]" for k in range(nin)]
            operands += [f"opw_dst[{j}]" for j in range(nout)]
            args = ", ".join(
                f"({t}*)PyArray_DATA({a}), 0"
                for t, a in zip(self._operand_types(), operands, strict=True)
            )
            add(f"if (opw_ew_inner_{name}(1, {args}) < 0) {fail}")
        else:
            self._loop_calls(add, name, fail)
        # 5. temporaries back into the destroyed inputs
        for j in range(nout):
            if j in self.inplace:
                src = inputs[self.inplace[j]]
                add(f"if (opw_tmp[{j}] && PyArray_CopyInto({src}, opw_tmp[{j}]) < 0) {fail}")
        add(release)
        code = "\n".join(lines)
        return "{\n" + _indent(code, 1) + "\n}\n"

    def _loop_calls(self, add: Any, name: str, fail: str) -> None:
        """Step 4 of :meth:`c_code` for arrays of at least one dimension: the flat loop
        when every operand allows it, else the strided one."""
        nin = self.nin
        add("if (opw_n > 0) {")
        fast_cond = [
            f"(PyArray_IS_C_CONTIGUOUS(opw_x[{k}]) && PyArray_SIZE(opw_x[{k}]) == opw_n)"
            for k in range(nin)
            if not self._hoisted(k)
        ]
        # No temporary and no aliased input: the loops over contiguous rows may be used.
        add("    int opw_unit = opw_fast;")
        if fast_cond:
            add("    opw_fast = opw_fast && " + " && ".join(fast_cond) + ";")
        flat_args = ", ".join(arg for _, arg in self._contig_params("flat"))
        flat_fn = "par" if self.parallel_from else "flat"
        add(
            f"    if ((opw_fast ? opw_ew_{flat_fn}_{name}({flat_args}) : "
            f"opw_ew_strided_{name}(opw_x, opw_dst, opw_dims, opw_unit)) < 0) {fail}"
        )
        add("}")

    def _hoisted(self, k: int) -> bool:
        """Is input ``k`` read once, before the flat loop (statically one element, and not
        overwritten in place)?"""
        return self.scalar_in[k] and k not in self.inplace.values()

    def _same_elements(self, dst: str, src: str, k: int, nd: int) -> str:
        """C condition: input ``k`` (``src``) reads, for every output element, exactly the
        element of ``dst`` that the loop writes there."""
        terms = [f"PyArray_DATA({dst}) == PyArray_DATA({src})"]
        for d in range(nd):
            if self.bcast[k][d]:
                terms.append(f"opw_dims[{d}] <= 1")
            else:
                terms.append(
                    f"(opw_dims[{d}] <= 1 || "
                    f"PyArray_STRIDES({dst})[{d}] == PyArray_STRIDES({src})[{d}])"
                )
        return "(" + " && ".join(terms) + ")"

    def _by_value(self, variant: str) -> set[int]:
        """The inputs a contiguous loop takes by value (read once, not per element):
        ``"flat"``, the statically scalar ones; ``"row"``, those statically broadcast along
        the last axis (one value per row). Never an input overwritten in place."""
        if variant == "flat":
            same = self.scalar_in
        else:
            same = [bool(b) and b[-1] for b in self.bcast]
        return {k for k in range(self.nin) if same[k] and k not in self.inplace.values()}

    @property
    def has_row_loop(self) -> bool:
        """Whether the strided loop has a row variant: arrays of at least two dimensions
        (one row of a 1-d loop is the whole array, which the flat loop takes whenever the
        row loop could), no input overwritten in place that is broadcast along the last
        axis."""
        return self.ndim >= 2 and not any(self.bcast[i][-1] for i in self.inplace.values())

    def _loads(self, index: str, elem_stride: str | None, by_value: set[int]) -> list[str]:
        """Read each input's element into ``opw_a<k>`` (those taken by value are read
        already)."""
        lines = []
        for k, t in enumerate(self.in_types):
            if k in by_value:
                continue
            at = index if elem_stride is None else f"{index} * {elem_stride}{k}"
            lines.append(f"const {t} opw_a{k} = opw_p{k}[{at}];")
        return lines

    def _contig_params(self, variant: str) -> list[tuple[str, str]]:
        """A contiguous loop's parameters: ``(declaration, argument)`` per operand. Arrays
        are ``restrict`` parameters (so GCC needs no aliasing checks), inputs taken by
        value (:meth:`_by_value`) their value, an in-place output the destroyed input's
        pointer. The arguments are those of the flat loop's call (array data) or of the row
        loop's (the strided loop's current pointers)."""
        params = [("npy_intp opw_n", "opw_n" if variant == "flat" else "opw_gd[opw_nd - 1]")]
        by_value = self._by_value(variant)
        dest_of = {i: j for j, i in self.inplace.items()}

        def data(o: int) -> str:
            if variant == "row":
                return f"opw_gp[{o}]"
            return (
                f"PyArray_DATA(opw_x[{o}])"
                if o < self.nin
                else (f"PyArray_DATA(opw_dst[{o - self.nin}])")
            )

        for k, t in enumerate(self.in_types):
            if k in by_value:
                params.append((f"const {t} opw_a{k}", f"*(const {t}*){data(k)}"))
            elif k in dest_of:
                params.append((f"{t}* restrict opw_p{k}", f"({t}*){data(k)}"))
            else:
                params.append((f"const {t}* restrict opw_p{k}", f"(const {t}*){data(k)}"))
        for j, t in enumerate(self.out_types):
            if j not in self.inplace:
                params.append((f"{t}* restrict opw_q{j}", f"({t}*){data(self.nin + j)}"))
        return params

    def block(self, scalar_op: Any) -> None:
        """Use blocked evaluation (:mod:`opweave_c.impls.blocked`) in the contiguous
        loops, where the scalar Op is a Composite with several expensive calls or many
        nodes."""
        if not isinstance(scalar_op, Composite):
            return
        if any(self.scalar_in[k] and not self._hoisted(k) for k in range(self.nin)):
            return
        at = f"[{BLOCK_START} + {LANE}]"
        sub = {"fail": "return -1;", "id": "0"}
        outputs = [
            f"opw_p{self.inplace[j]}{at}" if j in self.inplace else f"opw_q{j}{at}"
            for j in range(self.nout)
        ]
        for variant in ("flat", "row") if self.has_row_loop else ("flat",):
            by_value = self._by_value(variant)
            inputs = [f"opw_a{k}" if k in by_value else f"opw_p{k}{at}" for k in range(self.nin)]
            uniform = [k in by_value for k in range(self.nin)]
            self.blocked[variant] = blocked_composite(
                scalar_op, inputs, self.scalar_in, outputs, self.own, sub, uniform
            )

    def _blocked_loop(self, blocked: BlockedLoop) -> str:
        """Blocks of ``blocked.block`` elements, a few short loops per block."""
        b = blocked.block
        return "\n".join(
            [
                f"npy_intp {BLOCK_START}, {LANE}, {LANES};",
                blocked.prologue,
                f"for ({BLOCK_START} = 0; {BLOCK_START} < opw_n; {BLOCK_START} += {b}) {{",
                f"    {LANES} = opw_n - {BLOCK_START} < {b} ? opw_n - {BLOCK_START} : {b};",
                _indent(blocked.steps, 1),
                "}",
                "return 0;",
            ]
        )

    def _contig_loop(self, variant: str) -> str:
        """One index over contiguous operands (``"flat"``: the whole arrays, ``"row"``: one
        row of the strided loop); inputs taken by value are read once."""
        blocked = self.blocked.get(variant)
        if blocked is not None:
            return self._blocked_loop(blocked)
        lines = ["npy_intp opw_i;", "for (opw_i = 0; opw_i < opw_n; opw_i++) {"]
        body = self._loads("opw_i", None, self._by_value(variant))
        body += self._compute()
        for j in range(self.nout):
            if j in self.inplace:
                body.append(f"opw_p{self.inplace[j]}[opw_i] = opw_r{j};")
            else:
                body.append(f"opw_q{j}[opw_i] = opw_r{j};")
        lines.append(_indent("\n".join(body), 1))
        lines.append("}")
        lines.append("return 0;")
        return "\n".join(lines)

    def _compute(self) -> list[str]:
        lines = [f"{t} opw_r{j};" for j, t in enumerate(self.out_types)]
        lines.append(self.body)
        return lines

    def _operand_types(self) -> list[str]:
        """The pointer types of the inputs then the outputs."""
        return [f"const {t}" for t in self.in_types] + list(self.out_types)

    def _inner_loop(self) -> str:
        """The strided loop's innermost axis: typed pointers and element strides (GCC
        versions it for unit strides)."""
        params = ["npy_intp opw_m"]
        for k, t in enumerate(self.in_types):
            params += [f"const {t}* opw_p{k}", f"npy_intp opw_e{k}"]
        for j, t in enumerate(self.out_types):
            params += [f"{t}* opw_q{j}", f"npy_intp opw_f{j}"]
        body = self._loads("opw_j", "opw_e", set())
        body += self._compute()
        body += [f"opw_q{j}[opw_j * opw_f{j}] = opw_r{j};" for j in range(self.nout)]
        return (
            f"({', '.join(params)}) {{\n    npy_intp opw_j;\n"
            "    for (opw_j = 0; opw_j < opw_m; opw_j++) {\n"
            + _indent("\n".join(body), 2)
            + "\n    }\n    return 0;\n}\n"
        )

    def _strided_loop(self, name: str) -> str:
        """Drop length-1 axes, merge contiguous ones, loop with an odometer over the outer
        axes, calling the inner loop on the innermost one."""
        nd, nin = self.ndim, self.nin
        nop = nin + self.nout
        lines = [
            f"npy_intp opw_gd[{max(nd, 1)}], opw_gs[{nop}][{max(nd, 1)}], "
            f"opw_idx[{max(nd, 1)}], opw_es[{nop}];",
            f"char* opw_gp[{nop}];",
            "int opw_nd = 0, opw_d, opw_o;",
        ]
        for k in range(nin):
            lines.append(f"opw_gp[{k}] = PyArray_BYTES(opw_x[{k}]);")
        for j in range(self.nout):
            lines.append(f"opw_gp[{nin + j}] = PyArray_BYTES(opw_dst[{j}]);")
        for d in range(nd):
            strides = []
            for k in range(nin):
                s = "0" if self.bcast[k][d] else f"PyArray_STRIDES(opw_x[{k}])[{d}]"
                strides.append(s)
            for j in range(self.nout):
                strides.append(f"PyArray_STRIDES(opw_dst[{j}])[{d}]")
            merge = " && ".join(
                f"opw_gs[{o}][opw_nd - 1] == ({s}) * opw_dims[{d}]" for o, s in enumerate(strides)
            )
            sets = " ".join(f"opw_gs[{o}][opw_nd] = {s};" for o, s in enumerate(strides))
            inner = " ".join(f"opw_gs[{o}][opw_nd - 1] = {s};" for o, s in enumerate(strides))
            lines.append(
                f"if (opw_dims[{d}] != 1) {{\n"
                f"    if (opw_nd > 0 && {merge}) {{\n"
                f"        opw_gd[opw_nd - 1] *= opw_dims[{d}];\n        {inner}\n"
                f"    }} else {{\n"
                f"        opw_gd[opw_nd] = opw_dims[{d}];\n        {sets}\n"
                f"        opw_nd++;\n    }}\n}}"
            )
        lines.append(
            "if (opw_nd == 0) {\n"
            "    opw_gd[0] = 1;\n"
            f"    for (opw_o = 0; opw_o < {nop}; opw_o++) opw_gs[opw_o][0] = 0;\n"
            "    opw_nd = 1;\n}"
        )
        sizes = [f"sizeof({t})" for t in (*self.in_types, *self.out_types)]
        for o, size in enumerate(sizes):
            lines.append(f"opw_es[{o}] = opw_gs[{o}][opw_nd - 1] / (npy_intp){size};")
        lines.append("for (opw_d = 0; opw_d < opw_nd; opw_d++) opw_idx[opw_d] = 0;")
        args = [f"({t}*)opw_gp[{o}], opw_es[{o}]" for o, t in enumerate(self._operand_types())]
        call = f"opw_ew_inner_{name}(opw_gd[opw_nd - 1], {', '.join(args)})"
        if self.has_row_loop:
            # Rows along the last axis where every operand is contiguous along it or
            # broadcast across it (a bias row, a column of scales): the row loop, whose
            # unit-stride pointers GCC vectorises (it gives up on unknown strides).
            by_value = self._by_value("row")
            unit = [f"opw_es[{o}] == 1" for o in range(nin) if o not in by_value]
            unit += [f"opw_es[{nin + j}] == 1" for j in range(self.nout)]
            lines.append(
                f"const int opw_row = opw_unit && opw_dims[{nd - 1}] != 1 && "
                + " && ".join(unit)
                + ";"
            )
            row_args = ", ".join(arg for _, arg in self._contig_params("row"))
            call = f"(opw_row ? opw_ew_row_{name}({row_args}) : {call})"
        lines.append("for (;;) {")
        inner = [f"if ({call} < 0) return -1;"]
        inner.append(
            "for (opw_d = opw_nd - 2; opw_d >= 0; opw_d--) {\n"
            "    if (++opw_idx[opw_d] < opw_gd[opw_d]) {\n"
            f"        for (opw_o = 0; opw_o < {nop}; opw_o++) "
            "opw_gp[opw_o] += opw_gs[opw_o][opw_d];\n"
            "        break;\n"
            "    }\n"
            "    opw_idx[opw_d] = 0;\n"
            f"    for (opw_o = 0; opw_o < {nop}; opw_o++)\n"
            "        opw_gp[opw_o] -= opw_gs[opw_o][opw_d] * (opw_gd[opw_d] - 1);\n"
            "}\n"
            "if (opw_d < 0) break;"
        )
        lines.append(_indent("\n".join(inner), 1))
        lines.append("}")
        lines.append("return 0;")
        return "\n".join(lines)


def _elemwise(op: Elemwise, node: Apply) -> ElemwiseC | None:
    dtypes = [v.type.dtype for v in (*node.inputs, *node.outputs)]  # type: ignore[attr-defined]
    if any(d not in C_DTYPES for d in dtypes):
        return None
    if any(getattr(v.type, "ndim", None) is None for v in (*node.inputs, *node.outputs)):
        return None
    nin = len(node.inputs)
    scalar_like = [all(s == 1 for s in v.type.shape) for v in node.inputs]  # type: ignore[attr-defined]
    own = OwnCOps()
    body = scalar_c_code(
        op.scalar_op,
        dtypes[:nin],
        dtypes[nin:],
        [f"opw_a{k}" for k in range(nin)],
        [f"opw_r{j}" for j in range(len(node.outputs))],
        scalar_like,
        prefix="opw_s_",
        sub={"fail": "return -1;", "id": "0"},
        own=own,
        constant=[is_broadcast_constant(v) for v in node.inputs],
    )
    if body is None:
        return None
    from opweave import config

    impl = ElemwiseC(op, node, body, own)
    impl.block(op.scalar_op)
    if config.openmp:
        impl.use_threads(
            True,
            config.openmp_elemwise_minsize,
            work_per_element(op.scalar_op),
            config.openmp__threads,
        )
    return impl


def _careduce(op: CAReduce, node: Apply) -> CAReduceC | None:
    """A CAReduce's C (the loops of :mod:`opweave_c.impls.reduce_loops`), or ``None``."""
    name = reduce_name(op)
    if name is None:
        return None
    impl = CAReduceC(node, name)
    return impl if impl.supported() else None


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({Elemwise: _elemwise, CAReduce: _careduce})
