"""Call-time isolation of plugins: a failing or malformed hook answer skips that plugin.

Every hook call goes through :class:`IsolatingHookExec`, which the plugin manager
installs as pluggy's hook executor. It calls the hook implementations in pluggy's
order, as pluggy does, but:

* An unexpected exception raised by a plugin's implementation (a bug such as a
  ``RuntimeError``, ``AttributeError`` or ``KeyError``) is reported once with a
  :class:`~opweave.plugins.manager.PluginWarning` naming the plugin, its distribution
  and the hook, recorded in ``pm.failures``, and that plugin's answer is skipped.
* A result of the wrong shape (``opweave_linkers`` returning a string, say) is
  reported and skipped the same way.
* Errors that are part of a hook's contract still reach the caller, with a note
  naming the plugin: ``NotImplementedError``, ``TypeError``, ``ValueError`` and
  ``MemoryError``, opweave's own exceptions, and exceptions of the plugin's own package
  (the C backend's ``CompilationError``, say). Such an error is the plugin's answer
  to what the user asked of it.
* The core's own built-in plugin is never isolated: its errors are opweave's bugs.

Hook calls where any implementation is a pluggy wrapper run through pluggy's own
executor, without isolation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

#: The name under which the core registers its built-in plugin.
BUILTIN_PLUGIN_NAME = "opweave.builtin"

#: Exceptions a hook implementation may raise as its answer (they reach the caller).
CONTRACT_ERRORS: tuple[type[BaseException], ...] = (
    NotImplementedError,
    TypeError,
    ValueError,
    MemoryError,
)


class PluginWarning(UserWarning):
    """A plugin could not be loaded, or one of its hook answers failed, and was skipped."""


@dataclass(frozen=True)
class HookFailure:
    """One plugin's failed or malformed answer to one hook, as reported.

    Attributes
    ----------
    plugin
        The name the plugin is registered under (its entry-point name).
    distribution
        The distribution that published it, when known.
    hook
        The hook's name.
    error
        What went wrong, as shown in the warning.
    """

    plugin: str
    distribution: str | None
    hook: str
    error: str

    def describe(self) -> str:
        """The failure in one sentence, for warnings and error messages."""
        where = f" ({self.distribution})" if self.distribution else ""
        return f"plugin {self.plugin!r}{where} failed in hook {self.hook}: {self.error}"


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)


def _check_linkers(result: Any) -> str | None:
    if not isinstance(result, Mapping):
        return f"returned {type(result).__name__}, expected a dict {{name: Linker class}}"
    for name, cls in result.items():
        if not isinstance(name, str) or not isinstance(cls, type):
            return f"returned an entry {name!r}: {cls!r}; expected a str name and a Linker class"
    return None


def _check_backend_info(result: Any) -> str | None:
    if not isinstance(result, Mapping):
        return f"returned {type(result).__name__}, expected a dict with 'name' and 'linkers'"
    if not isinstance(result.get("name"), str) or not _is_str_list(result.get("linkers", [])):
        return f"returned {result!r}; expected 'name' a str and 'linkers' a list of str"
    return None


def _check_entries(result: Any) -> str | None:
    if not isinstance(result, list | tuple) or not all(
        isinstance(entry, tuple) and entry and isinstance(entry[0], type) for entry in result
    ):
        return f"returned {result!r}; expected a list of (Type class, C code, ...) tuples"
    return None


#: Checks of the results of collect hooks: a problem description, or ``None``.
RESULT_CHECKS: Mapping[str, Callable[[Any], str | None]] = {
    "opweave_linkers": _check_linkers,
    "opweave_backend_info": _check_backend_info,
    "opweave_register_deep_copy_op_c_code": _check_entries,
    "opweave_register_view_op_c_code": _check_entries,
    "opweave_register_shape_c_code": _check_entries,
    "opweave_register_shape_i_c_code": _check_entries,
}


def _top_package(plugin: Any) -> str:
    """The top-level package a plugin (a module, a class or an instance) comes from."""
    if isinstance(plugin, ModuleType):
        name = plugin.__name__
    elif isinstance(plugin, type):
        name = plugin.__module__
    else:
        name = type(plugin).__module__
    return name.partition(".")[0]


def _is_answer(exc: BaseException, plugin: Any, firstresult: bool) -> bool:
    """Whether ``exc``, raised by ``plugin``, reaches the caller rather than being isolated.

    Interrupts always do. Collect hooks only declare things, so any error there is a bug;
    a first-result hook answers with its contract's errors, opweave's own, or its
    package's own.
    """
    if not isinstance(exc, Exception):
        return True
    if not firstresult:
        return False
    if isinstance(exc, CONTRACT_ERRORS):
        return True
    origin = type(exc).__module__.partition(".")[0]
    return origin in ("opweave", _top_package(plugin))


def _note(plugin: str, hook: str) -> str:
    return f"(raised by opweave plugin {plugin!r} in {hook})"


class IsolatingHookExec:
    """pluggy's hook executor, with each plugin's implementation isolated.

    Parameters
    ----------
    pm
        The plugin manager whose ``failures``, ``records`` and names are used.
    fallback
        pluggy's own executor, used for calls that involve hook wrappers.
    """

    def __init__(self, pm: Any, fallback: Callable[..., Any]) -> None:
        self.pm = pm
        self.fallback = fallback

    def __call__(
        self,
        hook_name: str,
        hook_impls: Sequence[Any],
        caller_kwargs: Mapping[str, object],
        firstresult: bool,
    ) -> Any:
        if any(impl.hookwrapper or impl.wrapper for impl in hook_impls):
            return self.fallback(hook_name, hook_impls, caller_kwargs, firstresult)
        answers = self.answers(hook_name, hook_impls, caller_kwargs, firstresult)
        if firstresult:
            return next((result for _, result in answers), None)
        return [result for _, result in answers]

    def answers(
        self,
        hook_name: str,
        hook_impls: Sequence[Any],
        caller_kwargs: Mapping[str, object],
        firstresult: bool = False,
    ) -> Iterator[tuple[str, Any]]:
        """Yield ``(plugin name, result)`` for each implementation that answered.

        Implementations are called in pluggy's order, lazily: a first-result caller
        stops iterating at the first answer.
        """
        check = None if firstresult else RESULT_CHECKS.get(hook_name)
        for impl in reversed(hook_impls):
            args = [caller_kwargs[name] for name in impl.argnames]
            kwargs = {
                name: caller_kwargs[name] for name in impl.kwargnames if name in caller_kwargs
            }
            isolated = impl.plugin_name != BUILTIN_PLUGIN_NAME
            try:
                result = impl.function(*args, **kwargs)
            except BaseException as exc:
                if not isolated:
                    raise
                if _is_answer(exc, impl.plugin, firstresult):
                    if isinstance(exc, Exception):
                        exc.add_note(
                            f"(raised by opweave plugin {impl.plugin_name!r} in {hook_name})"
                        )
                    raise
                self.report(impl.plugin_name, hook_name, f"{type(exc).__name__}: {exc}")
                continue
            if result is None:
                continue
            problem = check(result) if check is not None and isolated else None
            if problem is not None:
                self.report(impl.plugin_name, hook_name, problem)
                continue
            yield impl.plugin_name, result

    def report(self, plugin: str, hook: str, error: str) -> None:
        """Record a failure and warn about it once per plugin, hook and error."""
        failure = HookFailure(plugin, self.pm.distribution_of(plugin), hook, error)
        if failure in self.pm.failures:
            return
        self.pm.failures.append(failure)
        self.pm.warn_once(f"opweave: {failure.describe()}; skipped its answer", PluginWarning, 5)
