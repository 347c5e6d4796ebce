"""Call-time isolation of plugins: a failing or malformed hook answer skips that plugin.

Every hook call goes through :class:`IsolatingHookExec`, which the plugin manager
installs as pluggy's hook executor. It calls the hook implementations in pluggy's
order, as pluggy does (through pluggy's own executor, each implementation wrapped, when
a plugin wraps the hook), but:

* An unexpected exception raised by a plugin's implementation (a bug such as a
  ``RuntimeError``, ``AttributeError`` or ``KeyError``) is reported once with a
  :class:`~opweave.plugins.manager.PluginWarning` naming the plugin, its distribution
  and the hook, recorded in ``pm.failures``, and that plugin's answer is skipped.
* A result of the wrong kind is reported and skipped the same way: a collect hook's
  answer of the wrong shape (``opweave_linkers`` returning a string, say), or a
  first-result hook's answer that cannot be what it asks for (an
  ``opweave_implementation`` that is not what its backend declares, ``opweave_transfer``
  returning something that is not a Variable). The next plugin in line answers instead.
  A plugin declaring hooks of its own attaches their checks to its specs
  (:func:`answer_check`).
* Errors that are part of a hook's contract still reach the caller, with a note
  naming the plugin: ``NotImplementedError``, ``TypeError``, ``ValueError`` and
  ``MemoryError``, opweave's own exceptions, and exceptions of the plugin's own package
  (the C backend's ``CompilationError``, say). Such an error is the plugin's answer
  to what the user asked of it.
* A plugin's hook wrapper (``wrapper=True`` or the old-style ``hookwrapper=True``) is
  isolated too: one that raises before it yields is skipped as if it were absent, and
  one that fails after it yields leaves the answer of the implementations it wraps.
  Isolation stays on for every other plugin of the call.
* The core's own built-in plugin is never isolated: its errors are opweave's bugs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
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


#: A check of one hook's answer, given the hook's arguments: a problem, or ``None``.
ResultCheck = Callable[[Any, Mapping[str, object]], "str | None"]


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)


def _check_linkers(result: Any, kwargs: Mapping[str, object]) -> str | None:
    if not isinstance(result, Mapping):
        return f"returned {type(result).__name__}, expected a dict {{name: Linker class}}"
    for name, cls in result.items():
        if not isinstance(name, str) or not isinstance(cls, type):
            return f"returned an entry {name!r}: {cls!r}; expected a str name and a Linker class"
    return None


def _check_backend_info(result: Any, kwargs: Mapping[str, object]) -> str | None:
    if not isinstance(result, Mapping):
        return f"returned {type(result).__name__}, expected a dict with 'name' and 'linkers'"
    if not isinstance(result.get("name"), str) or not _is_str_list(result.get("linkers", [])):
        return f"returned {result!r}; expected 'name' a str and 'linkers' a list of str"
    versions = result.get("versions", {})
    if not isinstance(versions, Mapping) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in versions.items()
    ):
        return f"returned 'versions' {versions!r}; expected a dict of str to str"
    return None


def _check_str_keys(what: str) -> ResultCheck:
    """A check that a collect hook's answer is a dict with str keys (values: ``what``)."""

    def check(result: Any, kwargs: Mapping[str, object]) -> str | None:
        if isinstance(result, Mapping) and all(isinstance(k, str) for k in result):
            return None
        return f"returned {result!r} ({type(result).__name__}), expected a dict {{name: {what}}}"

    return check


def _check_modules(result: Any, kwargs: Mapping[str, object]) -> str | None:
    if isinstance(result, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in result.items()
    ):
        return None
    return f"returned {result!r}, expected a dict {{module path: module name}} of str"


def _check_implementation(
    result: Any, kwargs: Mapping[str, object], expected: str | None
) -> str | None:
    """``expected`` is what the backend asked about says its implementations are (its
    ``implementation_checks`` answer), or ``None`` for a callable with the signature of
    ``Op.perform``."""
    if expected is None:
        if callable(result):
            return None
        expected = "a perform-style callable"
    return (
        f"returned {result!r} ({type(result).__name__}) for backend {kwargs.get('backend')!r}, "
        f"expected {expected} or None"
    )


def _check_variable(result: Any, kwargs: Mapping[str, object]) -> str | None:
    # The graph is a floor above the plugin machinery; an answer can only be a Variable
    # once that module is loaded.
    graph = sys.modules.get("opweave.graph.basic")
    if graph is not None and isinstance(result, graph.Variable):
        return None
    return f"returned {result!r} ({type(result).__name__}), expected a Variable or None"


#: Checks of the answers to the core's hooks (``None`` answers are never checked). A
#: plugin's own hooks carry theirs (:func:`answer_check`); ``opweave_implementation``
#: answers are checked against what the backend asked about declares
#: (:meth:`IsolatingHookExec.check_for`).
RESULT_CHECKS: Mapping[str, ResultCheck] = {
    "opweave_linkers": _check_linkers,
    "opweave_backend_info": _check_backend_info,
    "opweave_modes": _check_str_keys("Mode or Mode keyword arguments"),
    "opweave_modules": _check_modules,
    "opweave_demo": _check_str_keys("value"),
    "opweave_transfer": _check_variable,
    "opweave_shared": _check_variable,
}


#: The attribute of a hook specification function holding its answer check.
ANSWER_CHECK_ATTRIBUTE = "opweave_answer_check"


def answer_check(check: ResultCheck) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator attaching ``check`` to a hook specification declared by a plugin.

    A backend that declares hooks of its own (``opweave_addhooks``) marks each spec with
    the check its answers must pass; an answer that fails it is reported and skipped like
    a malformed answer to a core hook::

        @answer_check(lambda result, kwargs: None if isinstance(result, list) else "not a list")
        @hookspec
        def mybackend_entries() -> list[Any]: ...
    """

    def mark(spec: Callable[..., Any]) -> Callable[..., Any]:
        setattr(spec, ANSWER_CHECK_ATTRIBUTE, check)
        return spec

    return mark


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


#: How the note naming the plugin that raised an error begins.
_NOTE_PREFIX = "(raised by opweave plugin"


def _noted(exc: BaseException) -> bool:
    """Whether a plugin was already named on ``exc`` (by the hook call that raised it).

    An error raised inside a nested hook call (a backend's hook asking
    ``opweave_implementation``) names the plugin that raised it, not the one it passed
    through.
    """
    return any(note.startswith(_NOTE_PREFIX) for note in getattr(exc, "__notes__", ()))


class _IsolatedImpl:
    """A stand-in for a pluggy ``HookImpl`` whose function is isolated.

    pluggy's executor reads only these attributes; everything but ``function`` is the
    original implementation's.
    """

    __slots__ = (
        "argnames",
        "function",
        "hookwrapper",
        "kwargnames",
        "optionalhook",
        "opts",
        "plugin",
        "plugin_name",
        "tryfirst",
        "trylast",
        "wrapper",
    )

    def __init__(self, impl: Any, function: Callable[..., Any]) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(impl, name))
        self.function = function


class IsolatingHookExec:
    """pluggy's hook executor, with each plugin's implementation isolated.

    Parameters
    ----------
    pm
        The plugin manager whose ``failures``, ``records`` and names are used.
    fallback
        pluggy's own executor, which runs the isolated implementations of calls that
        involve hook wrappers.
    """

    def __init__(self, pm: Any, fallback: Callable[..., Any]) -> None:
        self.pm = pm
        self.fallback = fallback
        self._implementation_checks: tuple[tuple[int, ...], dict[str, Any]] = ((), {})

    def check_for(self, hook_name: str) -> ResultCheck | None:
        """The check of ``hook_name``'s answers: the core's, the one its spec carries
        (:func:`answer_check`), or ``None``."""
        if hook_name == "opweave_implementation":
            return self._check_implementation
        check = RESULT_CHECKS.get(hook_name)
        if check is not None:
            return check
        caller = getattr(self.pm.hook, hook_name, None)
        spec = getattr(caller, "spec", None)
        return getattr(getattr(spec, "function", None), ANSWER_CHECK_ATTRIBUTE, None)

    def _check_implementation(self, result: Any, kwargs: Mapping[str, object]) -> str | None:
        check = self.implementation_checks().get(str(kwargs.get("backend")))
        expected = check(result) if check is not None else None
        if check is not None and expected is None:
            return None
        return _check_implementation(result, kwargs, expected)

    def implementation_checks(self) -> dict[str, Callable[[Any], str | None]]:
        """``{backend: check}`` from the installed backends' ``implementation_checks``
        answers (``check(result)`` says what was expected, or ``None`` when it is fine);
        read again only when the plugins answering ``opweave_backend_info`` change."""
        caller = getattr(self.pm.hook, "opweave_backend_info", None)
        if caller is None:
            return {}
        key = tuple(id(impl) for impl in caller.get_hookimpls())
        if key != self._implementation_checks[0]:
            found: dict[str, Any] = {}
            for info in caller():
                if isinstance(info, Mapping):
                    found.update(info.get("implementation_checks") or {})
            self._implementation_checks = (key, found)
        return self._implementation_checks[1]

    def __call__(
        self,
        hook_name: str,
        hook_impls: Sequence[Any],
        caller_kwargs: Mapping[str, object],
        firstresult: bool,
    ) -> Any:
        if any(impl.hookwrapper or impl.wrapper for impl in hook_impls):
            isolated = [
                self.isolate(impl, hook_name, caller_kwargs, firstresult) for impl in hook_impls
            ]
            return self.fallback(hook_name, isolated, caller_kwargs, firstresult)
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
        stops iterating at the first answer. Hook wrappers take no part: they wrap a
        whole call, not one plugin's answer.
        """
        for impl in reversed(hook_impls):
            if impl.hookwrapper or impl.wrapper:
                continue
            args = [caller_kwargs[name] for name in impl.argnames]
            kwargs = {
                name: caller_kwargs[name] for name in impl.kwargnames if name in caller_kwargs
            }
            result = self._call(impl, hook_name, caller_kwargs, firstresult, args, kwargs)
            if result is not None:
                yield impl.plugin_name, result

    def isolate(
        self,
        impl: Any,
        hook_name: str,
        caller_kwargs: Mapping[str, object],
        firstresult: bool,
    ) -> Any:
        """``impl`` with its function isolated (the built-in plugin's is returned as is)."""
        if impl.plugin_name == BUILTIN_PLUGIN_NAME:
            return impl
        if impl.hookwrapper:
            function = self._isolated_old_style_wrapper(impl, hook_name, firstresult)
        elif impl.wrapper:
            function = self._isolated_wrapper(impl, hook_name, caller_kwargs, firstresult)
        else:

            def function(*args: Any, **kwargs: Any) -> Any:
                return self._call(impl, hook_name, caller_kwargs, firstresult, args, kwargs)

        return _IsolatedImpl(impl, function)

    def _call(
        self,
        impl: Any,
        hook_name: str,
        caller_kwargs: Mapping[str, object],
        firstresult: bool,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
    ) -> Any:
        """Call one (non-wrapper) implementation: its answer, or ``None`` when skipped."""
        if impl.plugin_name == BUILTIN_PLUGIN_NAME:
            return impl.function(*args, **kwargs)
        try:
            result = impl.function(*args, **kwargs)
        except BaseException as exc:
            self._fail(exc, impl, hook_name, firstresult)
            return None
        check = self.check_for(hook_name) if result is not None else None
        if result is None or check is None:
            return result
        problem = check(result, caller_kwargs)
        if problem is not None:
            self.report(impl.plugin_name, hook_name, problem)
            return None
        return result

    def _isolated_wrapper(
        self,
        impl: Any,
        hook_name: str,
        caller_kwargs: Mapping[str, object],
        firstresult: bool,
    ) -> Callable[..., Generator[None, Any, Any]]:
        check = self.check_for(hook_name)

        def isolated(*args: Any, **kwargs: Any) -> Generator[None, Any, Any]:
            teardown = self._set_up(impl, hook_name, firstresult, args, kwargs)
            if teardown is None:  # skipped: pass the wrapped answer through
                return (yield)
            try:
                inner = yield
            except BaseException as raised:
                return self._tear_down_after_error(teardown, raised, impl, hook_name, firstresult)
            try:
                teardown.send(inner)
            except StopIteration as stop:
                result = stop.value
            except BaseException as exc:
                self._fail(exc, impl, hook_name, firstresult)
                return inner
            else:
                teardown.close()
                self.report(impl.plugin_name, hook_name, "wrapper yielded more than once")
                return inner
            problem = None if result is None or check is None else check(result, caller_kwargs)
            if problem is not None:
                self.report(impl.plugin_name, hook_name, problem)
                return inner
            return result

        return isolated

    def _isolated_old_style_wrapper(
        self, impl: Any, hook_name: str, firstresult: bool
    ) -> Callable[..., Generator[None, Any, None]]:
        def isolated(*args: Any, **kwargs: Any) -> Generator[None, Any, None]:
            teardown = self._set_up(impl, hook_name, firstresult, args, kwargs)
            if teardown is None:
                yield
                return
            outcome = yield
            try:
                teardown.send(outcome)
            except StopIteration:
                return
            except BaseException as exc:
                self._fail(exc, impl, hook_name, firstresult)
                return
            teardown.close()
            self.report(impl.plugin_name, hook_name, "wrapper yielded more than once")

        return isolated

    def _set_up(
        self,
        impl: Any,
        hook_name: str,
        firstresult: bool,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
    ) -> Generator[None, Any, Any] | None:
        """Run a wrapper up to its ``yield``; ``None`` when it failed there (reported)."""
        try:
            teardown: Generator[None, Any, Any] = impl.function(*args, **kwargs)
            next(teardown)
        except StopIteration:
            self.report(impl.plugin_name, hook_name, "wrapper did not yield")
            return None
        except BaseException as exc:
            self._fail(exc, impl, hook_name, firstresult)
            return None
        return teardown

    def _tear_down_after_error(
        self,
        teardown: Generator[None, Any, Any],
        raised: BaseException,
        impl: Any,
        hook_name: str,
        firstresult: bool,
    ) -> Any:
        """Let a wrapper see the error of what it wraps; its own failure is isolated."""
        try:
            teardown.throw(raised)
        except StopIteration as stop:
            return stop.value
        except BaseException as exc:
            if exc is raised:
                raise
            self._fail(exc, impl, hook_name, firstresult)
        else:
            teardown.close()
            self.report(impl.plugin_name, hook_name, "wrapper yielded more than once")
        raise raised

    def _fail(self, exc: BaseException, impl: Any, hook_name: str, firstresult: bool) -> None:
        """Re-raise ``exc`` with a note when it is the plugin's answer, else report it."""
        if _is_answer(exc, impl.plugin, firstresult):
            if isinstance(exc, Exception) and not _noted(exc):
                exc.add_note(f"{_NOTE_PREFIX} {impl.plugin_name!r} in {hook_name})")
            raise exc
        self.report(impl.plugin_name, hook_name, f"{type(exc).__name__}: {exc}")

    def report(self, plugin: str, hook: str, error: str) -> None:
        """Record a failure and warn about it once per plugin, hook and error."""
        failure = HookFailure(plugin, self.pm.distribution_of(plugin), hook, error)
        if failure in self.pm.failures:
            return
        self.pm.failures.append(failure)
        self.pm.warn_once(f"opweave: {failure.describe()}; skipped its answer", PluginWarning, 5)
