"""The floors of the core: which ``opweave`` modules may import which.

A module may import modules of its own floor (without forming an import cycle at module
level) and of the floors below it, never of a floor above, not even inside a function. An
in-function import (which breaks a cycle among the modules of one floor) carries a
``# late: ...`` comment saying why. ``tests/core/test_import_layers.py`` checks these rules
(no module-level cycle, no import of a higher floor, every late import explained) and holds
the import circles among the modules of one floor to a ratchet.

The order follows what depends on what:

0. ``configuration``, ``configdefaults``: the flags and the process-wide ``config``
   (``opweave.config`` is ``opweave.configdefaults.config``); stdlib only. A flag that
   ``config`` does not know may be one a plugin defines: reading it loads the plugins
   first, through the loader that :mod:`opweave.plugins.manager` gives ``config`` when it is
   imported.
1. ``plugins``: the pluggy hook specifications, the plugin manager, the core's own plugin
   (``plugins.builtin``), and the rule for reading files under ``config.compiledir``
   (``plugins.trusted_files``, which plugin discovery, the rewrite cache and the C
   backend's module cache share; ``opweave.link.trusted_files`` gives the same names).
   They import only the configuration (the hook specifications name graph classes for type
   checkers only), so graphs can ask the plugins (``build_rewrite_database()`` uses the
   process-wide manager by default).
2. ``graph`` (with ``graph.rewriting``): Types, Variables, Apply, Op, FunctionGraph,
   features and the rewrite framework; imports only config, plugins, stdlib and NumPy.
3. ``link``, ``transfer``, ``printing``, ``graph_picture``: linking (storage, thunks, linker
   lookup through the plugin manager), ``transfer`` dispatch through the ``opweave_transfer``
   hook, and ``debugprint``/``pprint``/``pydotprint`` (``graph_picture`` draws for the
   last). ``printing`` gives every graph object its ``dprint`` method when it is imported;
   ``transfer`` sits here because tensor variables have a ``.transfer()`` method and
   ``opweave.tensor`` re-exports it.
4. ``gradient``: reverse mode (``grad``, ``Lop``, ``Rop``) and the helpers Ops' ``grad``
   methods use (``grad_undefined``, ``grad_not_implemented``); as in PyTensor it is below the
   standard library, which uses those helpers. It builds zeros, ones and casts through the
   variables it differentiates (their ``zeros_like``/``ones_like``/``astype`` methods), so
   it never imports the tensor or scalar library. Its two modules that build tensor graphs,
   ``gradient.verify`` (``verify_grad``) and ``gradient.matrices`` (``jacobian``,
   ``hessian``), are on the tensor floor.
5. ``scalar``: scalar Types and Ops (their ``grad`` uses the gradient helpers). A
   zero-dimensional tensor becomes a scalar through its own ``_as_ScalarVariable``
   method, so ``scalar`` never imports the tensor library.
6. ``compile``: ``function``, modes, ``In``/``Out``, ``SharedVariable``, ``DeepCopyOp``/
   ``ViewOp``, the gradient-shaping Ops (``compile.gradient_ops``), the rewrite cache;
   type-generic, so below the tensor library, which builds on ``SharedVariable`` and the
   helper Ops (as in PyTensor). The ``Mode`` class is in ``compile.mode_base``, below the
   debugging modes that subclass it (``compile.debug``) and ``compile.mode``, whose
   ``get_mode`` builds them. ``compile.shared_dispatch`` (``shared``, which gives tensor
   values the tensor library's shared variables) is on the tensor floor.
7. ``tensor`` (with ``tensor.rewriting``): the tensor library, including ``Shape``/
   ``Shape_i`` (``opweave.tensor.shape``) and the core plugin's standard rewrites
   (``tensor.rewriting.plugin``). ``ifelse`` (lazy ``IfElse``), ``scan`` (loops),
   ``raise_op`` (checks), ``sparse`` (sparse matrices), ``xtensor`` (named-dimension
   tensors, lowered to tensor Ops by a phase the standard rewrites register) and
   ``updates`` build on the tensor library on the same floor.
8. the top: the ``opweave`` package itself (its re-exports), ``_wiring``, ``cli``,
   ``__main__``, ``testing``, and ``_variable_eval``, which gives every Variable its
   ``eval`` method (PyTensor's: it compiles with ``opweave.function``) when it is
   imported.

``compat`` (the ``pytensor`` import alias) is on floor 0: it imports only the standard
library, and opweave's modules by name when ``pytensor`` ones are asked for.

:data:`FLOORS` gives the floor of each top-level part; :data:`MODULE_FLOORS` that of the
few modules that sit on another floor than their package.

PyTensor code finds some names in a package below the one that defines them
(``opweave.compile.Shape``, ``opweave.compile.shared``, ``opweave.gradient.jacobian``,
``verify_grad`` and ``zero_grad``, ``get_active_mode`` of ``graph.rewriting.basic``), and
the core plugin registers the tensor library's rewrites. :mod:`opweave._wiring`, on the top
floor, binds them there once: the ``opweave`` package imports it, and importing any
``opweave`` submodule runs the package first, so they are in place before other code asks.
Within a floor, packages do the same for their modules with :func:`give_names`
(``opweave.scalar`` for ``scalar.basic.exp``, ``opweave.tensor._pytensor_paths`` and
``opweave.tensor._given_names`` for ``tensor.basic``/``tensor.math``), and
:mod:`opweave.tensor.operators` gives tensor variables the operator methods that build on
the whole tensor library (``x + y``, ``x.sum()``, ``x[i]``), so that
:mod:`opweave.tensor.variable` imports none of it.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["FLOORS", "MODULE_FLOORS", "floor_of", "give_names"]


def give_names(lower: ModuleType, home: ModuleType, names: str) -> None:
    """Bind, in ``lower``, the objects ``home`` defines under ``names``.

    A module above both (a package's ``__init__``, :mod:`opweave._wiring`) calls it for
    PyTensor's paths that name, in a lower module, what a higher one defines: the lower
    module never imports the higher one.

    Parameters
    ----------
    lower
        The module that gets the names.
    home
        The module that defines them.
    names
        The names, separated by spaces.
    """
    for name in names.split():
        setattr(lower, name, getattr(home, name))


#: Floor number of each top-level part of ``opweave`` (a package or a module); a module
#: belongs to the floor of its first component below ``opweave``.
FLOORS: dict[str, int] = {
    "configuration": 0,
    "configdefaults": 0,
    "_layers": 0,
    "utils": 0,  # PyTensor's small helpers and platform constants; stdlib only
    "compat": 0,  # the pytensor import alias: stdlib only, imports opweave when asked
    "plugins": 1,
    "graph": 2,
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
    "xtensor": 7,  # named-dimension tensors, lowered to the tensor library's Ops
    "updates": 7,  # OrderedUpdates, PyTensor's name for an ordered updates mapping
    "": 8,  # the ``opweave`` package __init__
    "_wiring": 8,  # binds PyTensor's paths in lower floors to names of higher ones
    "_variable_eval": 8,  # Variable.eval: compiles with opweave.function
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
    "compile.shared_dispatch": 7,  # shared: tensor values get tensor shared variables
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
