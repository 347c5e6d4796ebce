"""Hook specifications: the whole surface through which backends and plugins extend opweave.

A plugin is any module or object with functions decorated by
:data:`opweave.plugins.hookimpl` whose names are the hooks below. Distributions
publish one under the entry-point group ``opweave.plugins``::

    [project.entry-points."opweave.plugins"]
    mybackend = "mybackend.plugin"

and code can register one by hand with
``opweave.plugins.get_plugin_manager().register(obj)``.

Rules every hook follows:

* Hooks run at **compile time only** (when ``opweave.function`` builds a function,
  when a rewrite database is assembled, when ``transfer`` builds a graph), never
  once per call of a compiled function.
* "first result" hooks stop at the first plugin that returns something other
  than ``None``; plugins registered later are asked first, and ``tryfirst`` /
  ``trylast`` on the ``hookimpl`` change that order.
* "collect" hooks gather one result from every plugin.
* A plugin may implement any subset of the hooks, and may accept any subset of
  a hook's arguments (pluggy passes only those a function names).
* A broken plugin never breaks the core: an implementation that raises an
  unexpected exception, or answers with a result of the wrong kind (a collect
  hook's of the wrong shape, a thunk that is not callable, a transfer that is not
  a Variable), is reported once with a ``PluginWarning`` naming the plugin and the
  hook, and its answer is skipped. Plugins' hook wrappers are isolated the same
  way and leave the others isolated. A first-result hook may still answer with an
  error: ``NotImplementedError``, ``TypeError``, ``ValueError``, opweave's own
  exceptions and the plugin package's own exceptions reach the caller, with a
  note naming the plugin (see :mod:`opweave.plugins.isolation`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from opweave.graph.basic import Apply, Variable
    from opweave.graph.op import Op

#: The project name shared by the markers and the plugin manager.
PROJECT_NAME = "opweave"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


# ---------------------------------------------------------------------- extending


@hookspec(historic=True)
def opweave_addhooks(pluginmanager: Any) -> None:
    """Add hook specifications of this plugin's own to ``pluginmanager``.

    **Kind:** historic (called for every plugin, also those registered later).

    How a backend declares hooks that only it calls (opweave-c declares
    ``opweave_c_type`` and the ``opweave_register_*_c_code`` hooks this way)::

        @hookimpl
        def opweave_addhooks(pluginmanager):
            from mybackend import hookspecs
            pluginmanager.add_hookspecs(hookspecs)

    Plugins implementing another backend's hooks mark those implementations
    ``@hookimpl(optionalhook=True)``, so that they load where that backend is absent.
    """


@hookspec(historic=True)
def opweave_addoption(config: Any) -> None:
    """Register this plugin's configuration flags on ``config``.

    **Kind:** historic (called for every plugin, also those registered later).

    ``config`` is :data:`opweave.config`; call its ``add(name, doc, param)`` with a
    :class:`opweave.configuration.ConfigParam` (``StrParam``, ``BoolParam`` ...). The
    flags then read like the core's (``opweave.config.cxx``), and values set for them in
    ``OPWEAVE_FLAGS`` or a config file before the plugin loaded apply when it adds them.
    """


# ---------------------------------------------------------------------- linkers


@hookspec
def opweave_linkers() -> dict[str, type]:
    """Return the linkers this plugin provides, as ``{name: Linker class}``.

    **Kind:** collect.

    The names become valid values of ``config.linker`` and of
    ``Mode(linker=...)``. A Linker class may set an integer ``priority``
    attribute: ``linker="auto"`` picks the installed linker with the highest one.
    Two plugins offering the same name is an error reported at compile time.

    Example::

        @hookimpl
        def opweave_linkers():
            return {"vm": VMLinker, "py": PerformLinker}
    """


@hookspec
def opweave_backend_info() -> dict[str, Any]:
    """Describe this backend for ``opweave info`` and for error messages.

    **Kind:** collect.

    Return a dict with ``name`` (the distribution, e.g. ``"opweave-c"``),
    ``linkers`` (names it provides), ``available`` (bool) and ``reason``
    (why it is unavailable, or ``None``). A backend that installed but cannot
    work on this machine (no C compiler, no CUDA driver) says so here instead
    of failing at import.

    Optionally, ``implementations``: the backend's
    :class:`~opweave.link.implementations.ImplementationTable`, which ``opweave info
    --ops`` reports on (which Ops of its scope it implements, which it lacks).

    Optionally, ``devices``: the ``config.device`` kinds it provides (e.g.
    ``["cuda"]`` for ``device='cuda'`` and ``'cuda0'``). Compiling with such a
    device includes the rewrites tagged with the kind's name, and fails with this
    backend's ``reason`` when it is unavailable (see
    :mod:`opweave.compile.device`).

    Optionally, ``versions``: ``{what: version}`` of what the backend relies on (its
    compiler, its array library), which ``opweave info`` reports.

    Optionally, ``implementation_checks``: ``{backend: check}``, where ``check(impl)``
    returns ``None`` when ``impl`` is an implementation of that backend (the answer of an
    ``opweave_implementation`` hook) and otherwise what one must be (``"an object with a
    c_code method"``); without one, an implementation must be a ``perform``-style callable.
    Optionally, ``hardware``: a function of no arguments returning a list of strings,
    what the backend can run on here (its devices); ``opweave info`` calls it, and nothing
    else does (probing may be slow: it may import a large library).

    Optionally, ``fallback``: ``False`` for a backend whose linkers run nothing outside
    their own implementations (they refuse a graph with a node they cannot lower); the Op
    classes outside its table's scope are then reported as missing there, not as run by
    another implementation.
    A backend may add keys of its own, which the tools that read them document.
    """


# ---------------------------------------------------------------------- implementations


@hookspec(firstresult=True)
def opweave_implementation(op: Op, node: Apply, backend: str) -> Any | None:
    """Return ``backend``'s implementation of ``op`` for ``node``, or ``None``.

    **Kind:** first result.

    The backend-neutral way to give an Op an implementation without changing its class
    (the Op's class may define ``perform`` or ``c_code`` itself; those are used
    directly). What an implementation is depends on the backend, which documents it:

    * ``"py"`` (opweave-python): a callable with the signature of :meth:`Op.perform`,
      ``fn(node, inputs, output_storage)``;
    * ``"c"`` (opweave-c): an object with the Op C contract (``c_code``, and optionally
      ``c_support_code``, ``c_headers``, ``c_code_cache_version`` ...);
    * ``"cuda"`` (opweave-cuda): a ``perform``-style callable on GPU values.

    The core's resolver (:func:`opweave.link.resolver.implementation_for`) asks it, once
    per node and backend, after the Op's own method and before the backend's table;
    the thunk is then built by the core (``perform``-style implementations) or by the
    ``make_thunk`` the backend declares in its ``opweave_backend_info`` answer.

    What a backend's ``opweave_backend_info`` answer may declare for the resolver,
    besides its ``implementations`` table: ``make_thunk``, ``fn(node, implementation,
    storage_map, compute_map, no_recycling) -> thunk`` for a backend that builds thunks
    from its own implementations (opweave-c); ``implementation_of``, ``fn(entry, op,
    node) -> implementation or None``, how its table's entries become a node's
    implementation (default: the entry is it); ``falls_back_to``, the backend that runs
    the nodes its table defers (``"py"``).

    Example::

        @hookimpl
        def opweave_implementation(op, node, backend):
            if backend == "py" and isinstance(op, MyOp):
                return my_perform
            return None
    """


@hookspec(firstresult=True)
def opweave_transfer(var: Variable, target: str) -> Variable | None:
    """Return ``var`` moved to ``target`` (e.g. ``"cuda"``, ``"cpu"``), or ``None``.

    **Kind:** first result.

    Return ``var`` itself when no transfer is needed, a new variable (typically
    the output of a transfer Op) when one is, and ``None`` when this plugin
    cannot handle the pair. ``opweave.register_transfer(fn)`` registers ``fn``
    as an implementation of this hook.
    """


@hookspec(firstresult=True)
def opweave_shared(
    value: Any,
    name: str | None,
    strict: bool,
    allow_downcast: bool | None,
    borrow: bool,
    shape: tuple[int | None, ...] | None,
    target: str | None,
) -> Variable | None:
    """Return a shared variable holding ``value`` on ``target``, or ``None``.

    **Kind:** first result.

    Asked by :func:`opweave.shared` for targets other than ``None``/``"cpu"``
    (e.g. ``"cuda"``). The arguments are those of ``shared``. Return ``None`` for
    targets this plugin does not provide; raise (with a message saying why) when it
    provides the target but cannot use it on this machine.
    """


# ---------------------------------------------------------------------- rewrites


@hookspec
def opweave_rewrites(db: Any) -> None:
    """Register this plugin's rewrites into ``db``.

    **Kind:** collect (the return value is ignored).

    ``db`` is the rewrite database being assembled for one compilation. Register
    into one of its phases (``canonicalize``, ``stabilize``, ``specialize``,
    ``inplace``) with ``db["canonicalize"].register(name, rewriter, "fast_run")``,
    or as a phase of your own with ``db.register(name, rewriter, *tags,
    position=...)``; a phase name given as a tag without a position is refused
    with a message showing the right call. The core registers its own standard
    rewrites through this same hook, so a plugin's rewrites take part in queries
    (``including``/``excluding`` tags) exactly like the built-in ones.
    """


# ---------------------------------------------------------------------- names a plugin provides


@hookspec
def opweave_modes() -> dict[str, Any]:
    """Return the compilation modes this plugin provides, as ``{name: Mode or kwargs}``.

    **Kind:** collect.

    A value is a :class:`~opweave.compile.mode.Mode`, or the keyword arguments of one
    (``{"linker": "mylinker", "optimizer": "fast_run"}``). The names become valid values of
    ``mode=`` and ``config.mode`` (any case), and attributes of :mod:`opweave.compile.mode`
    (``from opweave.compile.mode import MYMODE``). A mode's linker also maps to it in
    ``fast_run_linkers_to_mode`` when its optimizer is ``"fast_run"``.
    """


@hookspec
def opweave_modules() -> dict[str, str]:
    """Return module paths under ``opweave`` that this plugin serves, as
    ``{"opweave.link.mybackend": "mybackend.pytensor_names"}``.

    **Kind:** collect.

    Importing the first name imports the second module (under the first name), so that a
    backend can give PyTensor's module paths (``pytensor.link.jax`` ...) without a file in
    the core. A path no installed plugin serves raises :class:`ModuleNotFoundError` naming
    how to get it.
    """


@hookspec
def opweave_demo() -> dict[str, Any]:
    """Return a small graph that ``python -m opweave demo`` runs with every linker.

    **Kind:** collect (the demo uses the first answer).

    A dict with ``title`` (one line), ``inputs`` (the input Variables), ``output`` (the
    output Variable), ``values`` (one value per input), ``expected`` (the output for those
    values), and optionally ``refused`` (input values the graph's Types refuse with a
    ``TypeError``).
    """
