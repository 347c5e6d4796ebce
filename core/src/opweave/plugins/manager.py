"""The process-wide plugin manager and entry-point loading.

Entry points of the group ``opweave.plugins`` are loaded one by one: a plugin
whose import fails, whose hook implementations do not match a specification, or
that names a hook that does not exist is reported with a :class:`PluginWarning`
naming it and the error, and skipped. The other plugins and the core go on.

The same holds at call time: a hook implementation that raises unexpectedly or
answers with a malformed result is reported once and its answer skipped
(:mod:`opweave.plugins.isolation`).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import pluggy

from opweave.configdefaults import config
from opweave.plugins import builtin, hookspecs
from opweave.plugins.discovery import PluginSource, find_plugins, source_of
from opweave.plugins.forksafe import ForkSafeLock
from opweave.plugins.isolation import (
    BUILTIN_PLUGIN_NAME,
    HookFailure,
    IsolatingHookExec,
    PluginWarning,
)

#: The entry-point group plugins are published under.
ENTRY_POINT_GROUP = "opweave.plugins"
#: Setting this environment variable to ``1`` turns entry-point loading off.
DISABLE_AUTOLOAD_ENV = "OPWEAVE_DISABLE_PLUGIN_AUTOLOAD"


@dataclass(frozen=True)
class PluginRecord:
    """What happened to one entry point when plugins were loaded."""

    name: str
    value: str
    distribution: str | None
    version: str | None
    loaded: bool
    error: str | None = None


class OpweavePluginManager(pluggy.PluginManager):
    """A :class:`pluggy.PluginManager` that also remembers what it loaded or skipped.

    Attributes
    ----------
    records
        One :class:`PluginRecord` per entry point it tried to load.
    failures
        One :class:`~opweave.plugins.isolation.HookFailure` per hook answer it skipped.
    """

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME)
        self.add_hookspecs(hookspecs)
        self.records: list[PluginRecord] = []
        self.failures: list[HookFailure] = []
        self._warned: set[tuple[type[Warning], Hashable]] = set()
        # pluggy calls every hook through ``_inner_hookexec`` (tracing replaces it the same
        # way); ours isolates each plugin's implementation.
        self._isolation = IsolatingHookExec(self, self._inner_hookexec)
        self._inner_hookexec = self._isolation
        # Set while entry points load: a plugin may implement hooks that a backend loaded
        # after it declares (opweave_addhooks), so unknown hooks are checked at the end.
        self._defer_checks = False
        # Historic: every plugin registered from now on declares its hooks and flags.
        self.hook.opweave_addhooks.call_historic(kwargs={"pluginmanager": self})
        self.hook.opweave_addoption.call_historic(kwargs={"config": config})

    def answers(self, hook_name: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call the collect hook ``hook_name`` and return ``(plugin name, answer)`` pairs.

        The same isolation as ``pm.hook.<name>(...)`` applies; this form also says which
        plugin gave each answer (for error messages that name it).
        """
        caller = getattr(self.hook, hook_name)
        return list(self._isolation.answers(hook_name, caller.get_hookimpls(), kwargs))

    def first_answer(self, hook_name: str, **kwargs: Any) -> tuple[str, Any] | None:
        """Call the first-result hook ``hook_name``: ``(plugin name, answer)``, or ``None``
        when no plugin answers.

        The same isolation as ``pm.hook.<name>(...)`` applies. When a plugin wraps the hook,
        the wrappers take part through pluggy's own call, and the answer is attributed to
        ``"a plugin"`` (a wrapper may change which plugin's answer comes out).
        """
        caller = getattr(self.hook, hook_name)
        impls = caller.get_hookimpls()
        if any(impl.hookwrapper or impl.wrapper for impl in impls):
            answer = caller(**kwargs)
            return None if answer is None else ("a plugin", answer)
        return next(self._isolation.answers(hook_name, impls, kwargs, True), None)

    def warn_once(
        self,
        message: str,
        category: type[Warning],
        stacklevel: int = 3,
        key: Hashable | None = None,
    ) -> None:
        """Issue ``message`` as a ``category`` warning unless this manager already did.

        Parameters
        ----------
        message, category
            The warning.
        stacklevel
            As for :func:`warnings.warn`, counted from the caller of this method.
        key
            What "already" compares (default: the message itself), e.g. a directory for
            a warning whose wording varies with the operation that hit it.
        """
        said = (category, message if key is None else key)
        if said in self._warned:
            return
        self._warned.add(said)
        warnings.warn(message, category, stacklevel=stacklevel + 1)

    def distribution_of(self, plugin_name: str) -> str | None:
        """The distribution that published the plugin registered as ``plugin_name``."""
        for rec in self.records:
            if rec.name == plugin_name:
                return rec.distribution
        return None

    def problems_of(self, distribution: str) -> list[str]:
        """Why the plugins of ``distribution`` failed to load or to answer, if they did."""
        found = [
            f"its plugin {rec.name!r} failed to load: {rec.error}"
            for rec in self.records
            if rec.distribution == distribution and not rec.loaded
        ]
        found += [f.describe() for f in self.failures if f.distribution == distribution]
        return found

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        """Register ``plugin``, rejecting hook implementations with unknown names.

        Raises
        ------
        pluggy.PluginValidationError
            When the plugin implements a hook that has no specification (a
            misspelling), or implements one with arguments it does not have.
        """
        plugin_name = super().register(plugin, name)
        if self._defer_checks:
            return plugin_name
        try:
            self._check_plugin(plugin)
        except pluggy.PluginValidationError:
            self.unregister(plugin)
            raise
        return plugin_name

    def _check_plugin(self, plugin: Any) -> None:
        for hook in self.get_hookcallers(plugin) or ():
            if hook.spec is not None:
                continue
            for impl in hook.get_hookimpls():
                if impl.plugin is plugin and not impl.optionalhook:
                    raise pluggy.PluginValidationError(
                        plugin,
                        f"unknown hook {hook.name!r} in plugin {self.get_name(plugin)!r}; "
                        f"known hooks: {', '.join(sorted(_spec_names()))}",
                    )

    def load_entry_points(self, entry_points: Iterable[metadata.EntryPoint] | None = None) -> None:
        """Load and register every ``opweave.plugins`` entry point, skipping broken ones.

        Parameters
        ----------
        entry_points
            The entry points to load; by default those of the installed distributions
            (:func:`opweave.plugins.discovery.find_plugins`).
        """
        if entry_points is None:
            sources = find_plugins(ENTRY_POINT_GROUP)
        else:
            sources = [source_of(ep) for ep in entry_points]
        self._defer_checks = True
        try:
            self._load_each(sources)
        finally:
            self._defer_checks = False
        self._check_loaded()

    def _load_each(self, sources: Iterable[PluginSource]) -> None:
        for ep, dist_name, version in sources:
            if self.has_plugin(ep.name) or self.is_blocked(ep.name):
                continue
            try:
                plugin = ep.load()
                self.register(plugin, name=ep.name)
            except Exception as exc:  # a broken plugin never breaks the core
                self._skip(PluginRecord(ep.name, ep.value, dist_name, version, False), exc)
                continue
            self.records.append(PluginRecord(ep.name, ep.value, dist_name, version, True))

    def _check_loaded(self) -> None:
        """Unregister and report the loaded plugins that implement unknown hooks."""
        for i, rec in enumerate(self.records):
            plugin = self.get_plugin(rec.name) if rec.loaded else None
            if plugin is None:
                continue
            try:
                self._check_plugin(plugin)
            except pluggy.PluginValidationError as exc:
                self.unregister(plugin)
                del self.records[i]
                self._skip(rec, exc, at=i)

    def _skip(self, rec: PluginRecord, exc: Exception, at: int | None = None) -> None:
        """Record ``rec`` as skipped because of ``exc`` and warn, naming it."""
        error = f"{type(exc).__name__}: {exc}"
        failed = PluginRecord(rec.name, rec.value, rec.distribution, rec.version, False, error)
        self.records.insert(len(self.records) if at is None else at, failed)
        where = f" from {rec.distribution}" if rec.distribution else ""
        warnings.warn(
            f"opweave: skipped plugin {rec.name!r} ({rec.value}){where}: {error}",
            PluginWarning,
            stacklevel=3,
        )


def _spec_names() -> list[str]:
    return [name for name in dir(hookspecs) if name.startswith("opweave_")]


def _register_builtins(pm: OpweavePluginManager) -> None:
    pm.register(builtin, name=BUILTIN_PLUGIN_NAME)


def create_plugin_manager(autoload: bool | None = None) -> OpweavePluginManager:
    """Return a new plugin manager with the core's built-in plugin registered.

    Parameters
    ----------
    autoload
        Load the ``opweave.plugins`` entry points. ``None`` means: unless the
        environment variable ``OPWEAVE_DISABLE_PLUGIN_AUTOLOAD`` is ``1``.
    """
    pm = OpweavePluginManager()
    _register_builtins(pm)
    if autoload is None:
        autoload = os.environ.get(DISABLE_AUTOLOAD_ENV, "").strip() not in ("1", "true", "yes")
    if autoload:
        pm.load_entry_points()
    config.check_pending()
    return pm


_state: dict[str, OpweavePluginManager] = {}
#: Held while the process-wide manager is made (its plugins' modules imported): one thread
#: makes it, and a fork waits for it, since a child could not finish another thread's
#: imports.
_creating = ForkSafeLock(fork_waits=True)


def get_plugin_manager() -> OpweavePluginManager:
    """Return the process-wide plugin manager, creating and loading it on first use."""
    pm = _state.get("pm")
    if pm is None:
        with _creating:
            pm = _state.get("pm")
            if pm is None:
                pm = _state["pm"] = create_plugin_manager()
    return pm


def _load_plugins() -> None:
    """Create the process-wide plugin manager, whose plugins register their flags."""
    get_plugin_manager()


# A flag that ``config`` does not know may be one a plugin defines: reading it loads the
# plugins first (the configuration is the floor below, so the loader is given from here).
config.defer_unknown_flags(_load_plugins)


@contextlib.contextmanager
def use_plugin_manager(pm: OpweavePluginManager) -> Iterator[OpweavePluginManager]:
    """Make ``pm`` the process-wide plugin manager inside a ``with`` block."""
    previous = _state.get("pm")
    _state["pm"] = pm
    try:
        yield pm
    finally:
        if previous is None:
            _state.pop("pm", None)
        else:
            _state["pm"] = previous
