"""The floors of the core: which ``opweave`` modules may import which at module level.

A module may import, at module level, modules of its own floor (without forming an import
cycle) and of the floors below it, never of a floor above. A lower floor that must call up
(``Op.make_thunk`` reaching the link layer, ``Variable.eval`` compiling a function, a
tensor operator reaching ``opweave.tensor.math``) does it with an in-function import that
carries a ``# late: ...`` comment saying why; ``tests/core/test_import_layers.py`` checks
all three rules (no cycle, no upward module-level import, every late import explained).

The order follows what depends on what:

0. ``configuration``, ``configdefaults``: the flags and the process-wide ``config``
   (``opweave.config`` is ``opweave.configdefaults.config``); stdlib only.
1. ``graph`` (with ``graph.rewriting``): Types, Variables, Apply, Op, FunctionGraph,
   features and the rewrite framework; imports only config, stdlib and NumPy.
2. ``plugins``: the pluggy hook specifications, the plugin manager, and the rule for
   reading files under ``config.compiledir`` (``plugins.trusted_files``, which plugin
   discovery, the rewrite cache and the C backend's module cache share;
   ``opweave.link.trusted_files`` gives the same names).
3. ``link``, ``transfer``, ``printing``, ``graph_picture``: linking (storage, thunks, linker
   lookup through the plugin manager), ``transfer`` dispatch through the ``opweave_transfer``
   hook, and ``debugprint``/``pprint``/``pydotprint`` (``graph_picture`` draws for the
   last). They need only graph and plugins; ``transfer`` sits here
   because tensor variables have a ``.transfer()`` method and ``opweave.tensor`` re-exports it.
4. ``gradient``: reverse mode (``grad``, ``Lop``, ``Rop``) and the helpers Ops' ``grad``
   methods use (``grad_undefined``, ``grad_not_implemented``); as in PyTensor it is below the
   standard library, which uses those helpers. It builds zeros, ones and casts through the
   variables it differentiates (their ``zeros_like``/``ones_like``/``astype`` methods), so
   it never imports the tensor or scalar library. Its two modules that build tensor graphs,
   ``gradient.verify`` (``verify_grad``) and ``gradient.matrices`` (``jacobian``,
   ``hessian``), are on the tensor floor; ``opweave.gradient`` gives their names on first
   use.
5. ``scalar``: scalar Types and Ops (their ``grad`` uses the gradient helpers). A
   zero-dimensional tensor becomes a scalar through its own ``_as_ScalarVariable``
   method, so ``scalar`` never imports the tensor library.
6. ``compile``: ``function``, modes, ``In``/``Out``, ``SharedVariable``, ``DeepCopyOp``/
   ``ViewOp``, the rewrite cache; type-generic, so below the tensor library, which
   builds on ``SharedVariable`` and the helper Ops (as in PyTensor).
7. ``tensor`` (with ``tensor.rewriting``): the tensor library, including ``Shape``/
   ``Shape_i`` (``opweave.tensor.shape``; ``opweave.compile.ops`` re-exports them lazily).
   ``ifelse`` (lazy ``IfElse``), ``scan`` (loops), ``raise_op`` (checks), ``sparse``
   (sparse matrices) and ``updates`` build on the tensor library on the same floor.
8. the top: the ``opweave`` package itself (its re-exports), ``cli``, ``__main__``.

``compat`` (the ``pytensor`` import alias) is on floor 0: it imports only the standard
library, and opweave's modules by name when ``pytensor`` ones are asked for.

:data:`FLOORS` gives the floor of each top-level part; :data:`MODULE_FLOORS` that of the
few modules that sit on another floor than their package.

The test also counts in-function imports: those of a higher floor are held to a budget
(each is listed when it is exceeded), and so is the largest import circle, overall and
within one floor. Among the imports of a higher floor that remain are PyTensor's paths for
names defined further up (``opweave.compile.Shape``, ``opweave.compile.shared``,
``opweave.gradient.jacobian``, ``verify_grad`` and ``zero_grad``), the default plugin
manager of ``build_rewrite_database()`` and of a flag that ``config`` does not know yet
(a plugin may define it), the core plugin's standard rewrites (``opweave.tensor.rewriting``),
``get_active_mode`` of ``graph.rewriting`` (which
asks ``compile.mode`` for the mode of a compilation), and ``Variable.eval``/``Node.dprint``, which
compile and print through the ``opweave`` package.
"""

from __future__ import annotations

__all__ = ["FLOORS", "MODULE_FLOORS", "floor_of"]

#: Floor number of each top-level part of ``opweave`` (a package or a module); a module
#: belongs to the floor of its first component below ``opweave``.
FLOORS: dict[str, int] = {
    "configuration": 0,
    "configdefaults": 0,
    "_layers": 0,
    "utils": 0,  # PyTensor's small helpers and platform constants; stdlib only
    "compat": 0,  # the pytensor import alias: stdlib only, imports opweave when asked
    "graph": 1,
    "plugins": 2,
    "link": 3,
    "transfer": 3,
    "printing": 3,
    "graph_picture": 3,
    "gradient": 4,
    "scalar": 5,
    "compile": 6,
    "tensor": 7,
    "ifelse": 7,
    "scan": 7,
    "raise_op": 7,  # CheckAndRaise/Assert: tensor Ops at PyTensor's path
    "sparse": 7,  # sparse matrices: a Type and Ops built on the tensor library
    "updates": 7,  # OrderedUpdates, PyTensor's name for an ordered updates mapping
    "": 8,  # the ``opweave`` package __init__
    "cli": 8,
    "__main__": 8,
    "testing": 8,  # the conformance kit: compiles functions, builds tensor graphs
}


#: Floor number of the modules (dotted paths below ``opweave``) that are not on their
#: package's floor; the longest listed path that is a module's or one of its packages'
#: decides, before :data:`FLOORS`.
MODULE_FLOORS: dict[str, int] = {
    "gradient.matrices": 7,  # jacobian, hessian: stack tensor rows or loop with scan
    "gradient.verify": 7,  # verify_grad: compiles tensor graphs
}


def floor_of(module: str) -> int:
    """The floor of the dotted ``module`` name (``opweave.tensor.math`` -> 7).

    A module listed in :data:`MODULE_FLOORS` (or inside a package listed there) has the
    floor given there (``opweave.gradient.verify`` -> 7); any other the floor of its
    top-level part (``opweave.gradient.reverse`` -> 4).

    Raises
    ------
    KeyError
        For a top-level part that :data:`FLOORS` does not list (add it there).
    """
    parts = module.split(".")
    if parts[0] != "opweave":
        raise KeyError(f"{module} is not an opweave module")
    for end in range(len(parts), 2, -1):
        path = ".".join(parts[1:end])
        if path in MODULE_FLOORS:
            return MODULE_FLOORS[path]
    return FLOORS[parts[1] if len(parts) > 1 else ""]
