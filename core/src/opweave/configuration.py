"""Configuration machinery: typed flags, their current values, and where each value came from.

A :class:`Config` holds named flags. Each flag has a :class:`ConfigParam` that gives its
default and converts raw values (strings from ``OPWEAVE_FLAGS``, TOML values, Python
objects) into the flag's type, rejecting bad values by name. Values are read, lowest
priority first, from

1. the defaults given to :meth:`Config.add`;
2. the user file ``$XDG_CONFIG_HOME/opweave/config.toml`` (``~/.config/opweave/config.toml``
   when ``XDG_CONFIG_HOME`` is unset), keys at its top level or under ``[opweave]``;
3. the ``[tool.opweave]`` table of the nearest ``pyproject.toml`` (the first one found
   walking up from the working directory; if that file has no ``[tool.opweave]`` table,
   nothing is read from it);
4. the environment variable ``OPWEAVE_FLAGS`` (``"linker=c,mode=FAST_RUN"``);
5. assignments in code (``config.linker = "c"``) and :meth:`Config.change_flags`.

Flag names may contain ``__`` for sections: in TOML, ``[tool.opweave.gcc]`` with
``cxxflags = "-O3"`` sets ``gcc__cxxflags``. The standard flags are registered by
:func:`opweave.configdefaults.build_config`.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "ENV_VAR",
    "SOURCE_CODE",
    "SOURCE_DEFAULT",
    "BoolParam",
    "ChangeFlags",
    "Config",
    "ConfigParam",
    "EnumParam",
    "FlagInfo",
    "IntParam",
    "PathParam",
    "StrParam",
    "UnknownFlagError",
    "default_user_config_path",
    "find_pyproject",
    "parse_env_flags",
    "read_pyproject_flags",
    "read_user_flags",
]

#: Environment variable holding comma-separated ``name=value`` flag assignments.
ENV_VAR = "OPWEAVE_FLAGS"
#: :meth:`Config.source` of a value that was never changed.
SOURCE_DEFAULT = "default"
#: :meth:`Config.source` of a value set by assignment or :meth:`Config.change_flags`.
SOURCE_CODE = "code"

_FLAG_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_{1,2}[A-Za-z0-9]+)*")
_TRUE_WORDS = frozenset({"true", "1", "yes"})
_FALSE_WORDS = frozenset({"false", "0", "no"})


class UnknownFlagError(AttributeError, ValueError):
    """An unknown configuration flag name.

    It is an :class:`AttributeError` (``config.lnker`` and ``hasattr`` behave as for any
    missing attribute) and a :class:`ValueError` (like every other bad configuration input).
    """


# --------------------------------------------------------------------------- parameters


class ConfigParam:
    """The type of a configuration flag: its default and a converter for raw values.

    Parameters
    ----------
    default
        The flag's default value; it is passed through :meth:`parse` when the flag is added.
    parser
        Optional converter used by :meth:`parse`; subclasses override :meth:`parse` instead.
    expected
        Description of the accepted values, used in error messages
        (``"... (expected <expected>)"``).
    """

    expected: str = "a valid value"

    def __init__(
        self,
        default: Any,
        parser: Any = None,
        expected: str | None = None,
    ) -> None:
        self.default = default
        self._parser = parser
        if expected is not None:
            self.expected = expected

    def parse(self, value: Any) -> Any:
        """Convert ``value`` to the flag's type.

        Parameters
        ----------
        value
            A raw value: a string (from ``OPWEAVE_FLAGS`` or TOML), a TOML native value,
            or a Python object assigned in code.

        Returns
        -------
        Any
            The converted value.

        Raises
        ------
        ValueError, TypeError
            If the value is not acceptable; :class:`Config` rewrites the error so that it
            names the flag and :attr:`expected`.
        """
        if self._parser is None:
            return value
        return self._parser(value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(default={self.default!r})"


class StrParam(ConfigParam):
    """A string flag, optionally restricted to a regular expression.

    Parameters
    ----------
    default
        The default string.
    pattern
        Optional regular expression the whole value must match.
    expected
        Description of the accepted values for error messages; by default it is derived
        from ``pattern``.
    """

    expected = "a string"

    def __init__(self, default: str, pattern: str | None = None, expected: str | None = None):
        if expected is None and pattern is not None:
            expected = f"a string matching {pattern}"
        super().__init__(default, expected=expected)
        self.pattern = None if pattern is None else re.compile(pattern)

    def parse(self, value: Any) -> str:
        """Return ``value`` if it is a string (matching :attr:`pattern`, if any)."""
        if not isinstance(value, str):
            raise TypeError(f"not a string: {value!r}")
        if self.pattern is not None and self.pattern.fullmatch(value) is None:
            raise ValueError(f"{value!r} does not match {self.pattern.pattern}")
        return value


class EnumParam(ConfigParam):
    """A string flag with a fixed set of choices (compared case-sensitively).

    Parameters
    ----------
    default
        The default choice; it must be one of ``choices``.
    choices
        The accepted strings, in the order they are listed in error messages.
    """

    def __init__(self, default: str, choices: Iterable[str]) -> None:
        self.choices = tuple(choices)
        super().__init__(default, expected="one of: " + ", ".join(self.choices))

    def parse(self, value: Any) -> str:
        """Return ``value`` if it is one of :attr:`choices`."""
        if value not in self.choices or not isinstance(value, str):
            raise ValueError(f"{value!r} is not one of {self.choices}")
        return value


class BoolParam(ConfigParam):
    """A boolean flag.

    Accepts Python bools, the integers 0 and 1, and the strings ``true``/``false``,
    ``1``/``0`` and ``yes``/``no`` in any case.

    Parameters
    ----------
    default
        The default value.
    """

    expected = "a boolean: true/false, 1/0 or yes/no"

    def __init__(self, default: bool) -> None:
        super().__init__(default)

    def parse(self, value: Any) -> bool:
        """Convert ``value`` to a bool."""
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str):
            word = value.strip().lower()
            if word in _TRUE_WORDS:
                return True
            if word in _FALSE_WORDS:
                return False
        raise ValueError(f"not a boolean: {value!r}")


class IntParam(ConfigParam):
    """An integer flag, optionally bounded (bounds are inclusive).

    Accepts Python/TOML integers (not bools) and strings of decimal integers.

    Parameters
    ----------
    default
        The default value.
    minimum, maximum
        Optional inclusive bounds.
    """

    def __init__(self, default: int, minimum: int | None = None, maximum: int | None = None):
        self.minimum = minimum
        self.maximum = maximum
        if minimum is not None and maximum is not None:
            expected = f"an integer between {minimum} and {maximum}"
        elif minimum is not None:
            expected = f"an integer >= {minimum}"
        elif maximum is not None:
            expected = f"an integer <= {maximum}"
        else:
            expected = "an integer"
        super().__init__(default, expected=expected)

    def parse(self, value: object) -> int:
        """Convert ``value`` to an int within the bounds."""
        if isinstance(value, str):
            value = int(value.strip(), 10)
        elif isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"not an integer: {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{value} < {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"{value} > {self.maximum}")
        return value


class PathParam(ConfigParam):
    """A filesystem path flag, stored as a string with a leading ``~`` expanded.

    Relative paths are kept relative (to the working directory at the time of use).

    Parameters
    ----------
    default
        The default path.
    """

    expected = "a non-empty path"

    def __init__(self, default: str | os.PathLike[str]) -> None:
        super().__init__(default)

    def parse(self, value: Any) -> str:
        """Return ``value`` as a string path with ``~`` expanded."""
        if not isinstance(value, str | os.PathLike):
            raise TypeError(f"not a path: {value!r}")
        path = os.fspath(value)
        if not isinstance(path, str) or not path.strip():
            raise ValueError(f"not a path: {value!r}")
        return os.path.expanduser(path)


# --------------------------------------------------------------------------- config


class FlagInfo(NamedTuple):
    """One flag as listed by :meth:`Config.flags`: unpacks as ``(name, value, doc)``."""

    name: str
    value: Any
    doc: str


@dataclass
class _Flag:
    param: ConfigParam
    doc: str
    value: Any
    source: str


def _origin_suffix(origin: str) -> str:
    return "" if origin in (SOURCE_CODE, SOURCE_DEFAULT) else f" (from {origin})"


class Config:
    """A set of typed configuration flags, read and set as attributes.

    Flags are registered with :meth:`add`; values from the outside sources are applied by
    :meth:`load`. Reading or assigning an unknown name raises :class:`UnknownFlagError`;
    assigning a bad value raises :class:`ValueError` naming the flag.

    Examples
    --------
    >>> config = Config()
    >>> config.add("mode", "Compilation mode.", EnumParam("FAST_RUN", ["FAST_RUN", "DebugMode"]))
    >>> config.mode
    'FAST_RUN'
    >>> with config.change_flags(mode="DebugMode"):
    ...     config.mode
    'DebugMode'
    >>> config.source("mode")
    'default'
    """

    # The instance state that __init__ sets, declared for type checkers.
    _flags: dict[str, _Flag]
    _pending: dict[str, tuple[Any, str]]
    _late_flags: Callable[[], Any] | None

    def __init__(self) -> None:
        # Written to __dict__ directly: __setattr__ only accepts flag names.
        self.__dict__["_flags"] = {}
        # Values from the outside sources for flags not registered yet (a backend adds
        # its flags when the plugins load): name -> (raw value, origin).
        self.__dict__["_pending"] = {}
        # Called once when an unknown name is read, to let plugins register their flags.
        self.__dict__["_late_flags"] = None

    # -- registration and introspection

    def add(self, name: str, doc: str, param: ConfigParam) -> None:
        """Register a flag; its value starts as ``param.default`` (converted by ``param``).

        Parameters
        ----------
        name
            Flag name: letters and digits in words joined by ``_``, or by ``__`` for
            sections (``gcc__cxxflags``); it must not start with ``_`` nor shadow a
            :class:`Config` attribute.
        doc
            Documentation shown by ``opweave info``.
        param
            The flag's type and default.

        Raises
        ------
        ValueError
            If the name is invalid or already registered, or the default is invalid.
        """
        if not isinstance(name, str) or _FLAG_NAME_RE.fullmatch(name) is None:
            raise ValueError(f"invalid config flag name {name!r}")
        if name in self._flags:
            old = self._flags[name].param
            if type(old) is type(param) and old.expected == param.expected:
                return  # the same flag again (a backend's plugin registered anew): kept

            raise ValueError(f"config flag {name!r} is already registered")
        if hasattr(type(self), name):
            raise ValueError(f"config flag name {name!r} clashes with a Config attribute")
        try:
            value = param.parse(param.default)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"config flag {name!r}: invalid default {param.default!r} "
                f"(expected {param.expected})"
            ) from exc
        self._flags[name] = _Flag(param=param, doc=doc, value=value, source=SOURCE_DEFAULT)
        if name in self._pending:
            raw, origin = self._pending.pop(name)
            self._set(name, raw, origin)

    def defer_unknown_flags(self, late_flags: Any) -> None:
        """Let outside sources name flags that plugins register later.

        After this, :meth:`load` keeps values of unknown names until :meth:`add` registers
        them, and reading an unknown name first calls ``late_flags()`` (which loads the
        plugins, whose ``opweave_addoption`` hooks add their flags) once.
        :meth:`check_pending` then reports names no plugin registered.

        Parameters
        ----------
        late_flags
            A callable that makes the plugins register their flags.
        """
        self.__dict__["_late_flags"] = late_flags

    def check_pending(self) -> None:
        """Raise for an outside source's flag that nothing registered.

        Raises
        ------
        UnknownFlagError
            Naming the flag and where it was set.
        """
        for name, (_, origin) in self._pending.items():
            self._lookup(name, origin)

    def flags(self) -> list[FlagInfo]:
        """List the flags in registration order.

        Returns
        -------
        list of FlagInfo
            ``(name, value, doc)`` for each flag.
        """
        return [FlagInfo(name, flag.value, flag.doc) for name, flag in self._flags.items()]

    def __iter__(self) -> Iterator[FlagInfo]:
        """Iterate over :meth:`flags`."""
        return iter(self.flags())

    def __len__(self) -> int:
        return len(self._flags)

    def source(self, name: str) -> str:
        """Tell where the current value of a flag came from.

        Parameters
        ----------
        name
            A flag name.

        Returns
        -------
        str
            ``"default"``, the path of the config file (``pyproject.toml`` or the user
            file), ``"OPWEAVE_FLAGS"``, or ``"code"`` (assignment or :meth:`change_flags`).
        """
        return self._lookup(name, SOURCE_CODE).source

    def param(self, name: str) -> ConfigParam:
        """Return the :class:`ConfigParam` of a flag (its default and accepted values)."""
        return self._lookup(name, SOURCE_CODE).param

    # -- attribute access

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, i.e. for flag names and unknown names.
        if name.startswith("_"):
            raise AttributeError(name)
        return self._lookup(name, SOURCE_CODE).value

    def __setattr__(self, name: str, value: Any) -> None:
        self._set(name, value, SOURCE_CODE)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete opweave config flag {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._flags))

    def __repr__(self) -> str:
        items = ", ".join(f"{name}={flag.value!r}" for name, flag in self._flags.items())
        return f"Config({items})"

    def __str__(self) -> str:
        lines = [f"{name} = {flag.value!r}  ({flag.source})" for name, flag in self._flags.items()]
        return "\n".join(lines)

    # -- changing values

    def change_flags(self, *args: Mapping[str, Any], **kwargs: Any) -> ChangeFlags:
        """Set flags temporarily, as a context manager or a decorator.

        The names are checked when this is called, the values each time the change is
        applied (entering the block, or calling the decorated function), as in PyTensor:
        a decorator with a value this configuration refuses fails only where it is used.
        All values are checked before any is set; on exit the previous values (and
        sources) are restored, also when the block raises.

        Parameters
        ----------
        *args
            Mappings of flag names to values.
        **kwargs
            Flag names and values (they override ``args``).

        Returns
        -------
        ChangeFlags
            A context manager (entering it returns this config) usable as a decorator.

        Raises
        ------
        UnknownFlagError
            For an unknown name.
        ValueError
            For a bad value, when the change is applied.

        Examples
        --------
        >>> with config.change_flags(linker="py"):  # doctest: +SKIP
        ...     f = opweave.function([x], y)
        """
        changes: dict[str, Any] = {}
        for mapping in args:
            changes.update(mapping)
        changes.update(kwargs)
        for name in changes:
            self._lookup(name, SOURCE_CODE)
        return ChangeFlags(self, changes)

    def load(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
        user_config_path: str | os.PathLike[str] | None = None,
    ) -> None:
        """Apply the outside sources over the current values.

        In increasing priority: the user config file, the nearest ``pyproject.toml``'s
        ``[tool.opweave]`` table, then ``OPWEAVE_FLAGS``. Everything is checked before any
        value changes, so on error the config is left as it was.

        Parameters
        ----------
        cwd
            Directory to start the ``pyproject.toml`` search from; default: the working
            directory.
        environ
            Environment mapping; default: :data:`os.environ`.
        user_config_path
            Path of the user config file (need not exist); default:
            :func:`default_user_config_path` of ``environ``.

        Raises
        ------
        UnknownFlagError, ValueError
            For unknown flags, bad values, unreadable TOML or a malformed ``OPWEAVE_FLAGS``;
            the message names the file or ``OPWEAVE_FLAGS``.
        """
        environ = os.environ if environ is None else environ
        if user_config_path is None:
            user_config_path = default_user_config_path(environ)
        user_path = Path(user_config_path)
        raw: list[tuple[str, Any, str]] = [
            (name, value, str(user_path)) for name, value in read_user_flags(user_path)
        ]
        if cwd is None:
            try:
                cwd = Path.cwd()
            except OSError:  # the working directory was removed
                cwd = None
        pyproject = None if cwd is None else find_pyproject(cwd)
        if pyproject is not None:
            raw += [
                (name, value, str(pyproject)) for name, value in read_pyproject_flags(pyproject)
            ]
        raw += [(name, value, ENV_VAR) for name, value in parse_env_flags(environ.get(ENV_VAR, ""))]

        if self._late_flags is not None:
            for name, value, origin in raw:
                if name not in self._flags:
                    self._pending[name] = (value, origin)
            raw = [item for item in raw if item[0] in self._flags]
        updates = [
            (name, self._convert(name, value, origin), origin) for name, value, origin in raw
        ]
        for name, value, origin in updates:
            flag = self._flags[name]
            flag.value = value
            flag.source = origin

    def set_from(self, name: str, value: Any, origin: str) -> None:
        """Set a flag from an outside source, which :meth:`source` then names.

        Parameters
        ----------
        name
            A flag name.
        value
            A raw value (a string, as in an environment variable) or a Python value.
        origin
            What set it, e.g. ``"PYTENSOR_FLAGS"``.

        Raises
        ------
        UnknownFlagError
            For an unknown name (the message names ``origin``).
        ValueError
            For a value the flag refuses (the message names ``origin``).
        """
        self._set(name, value, origin)

    # -- internals

    def _lookup(self, name: str, origin: str) -> _Flag:
        try:
            return self._flags[name]
        except (KeyError, TypeError):
            pass
        late_flags = self._late_flags
        if late_flags is not None:  # let the plugins register their flags, once
            self.__dict__["_late_flags"] = None
            late_flags()
            if name in self._flags:
                return self._flags[name]
        known = sorted(self._flags)
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UnknownFlagError(
            f"unknown opweave config flag {name!r}{_origin_suffix(origin)}; "
            f"{hint}known flags: {', '.join(known)}",
            name=name,
            obj=self,
        )

    def _convert(self, name: str, value: Any, origin: str) -> Any:
        param = self._lookup(name, origin).param
        try:
            return param.parse(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"config flag {name!r}{_origin_suffix(origin)}: invalid value {value!r} "
                f"(expected {param.expected})"
            ) from exc

    def _set(self, name: str, value: Any, origin: str) -> None:
        converted = self._convert(name, value, origin)
        flag = self._flags[name]
        flag.value = converted
        flag.source = origin


class ChangeFlags(contextlib.ContextDecorator):
    """Context manager and decorator returned by :meth:`Config.change_flags`.

    It may be entered several times, also re-entrantly (e.g. a decorated recursive
    function): each exit restores what the matching entry replaced.
    """

    def __init__(self, config: Config, changes: Mapping[str, Any]) -> None:
        self._config = config
        self._changes = dict(changes)  # names checked; values converted when applied
        self._saved: list[dict[str, tuple[Any, str]]] = []

    def __enter__(self) -> Config:
        config = self._config
        converted = {
            name: config._convert(name, value, SOURCE_CODE) for name, value in self._changes.items()
        }
        flags = config._flags
        self._saved.append({name: (flags[name].value, flags[name].source) for name in converted})
        for name, value in converted.items():
            flags[name].value = value
            flags[name].source = SOURCE_CODE
        return self._config

    def __exit__(self, *exc_info: object) -> None:
        flags = self._config._flags
        for name, (value, source) in self._saved.pop().items():
            flags[name].value = value
            flags[name].source = source

    def __repr__(self) -> str:
        items = ", ".join(f"{name}={value!r}" for name, value in self._changes.items())
        return f"change_flags({items})"


# --------------------------------------------------------------------------- sources


def default_user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """Return the path of the user config file.

    Parameters
    ----------
    environ
        Environment mapping; default: :data:`os.environ`.

    Returns
    -------
    Path
        ``$XDG_CONFIG_HOME/opweave/config.toml`` if ``XDG_CONFIG_HOME`` is set to an absolute
        path, else ``$HOME/.config/opweave/config.toml`` (``HOME`` from ``environ``, or
        :meth:`pathlib.Path.home` when absent).
    """
    environ = os.environ if environ is None else environ
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(xdg):
        base = Path(xdg)
    else:
        home = environ.get("HOME")
        base = (Path(home) if home else Path.home()) / ".config"
    return base / "opweave" / "config.toml"


def find_pyproject(start: str | os.PathLike[str]) -> Path | None:
    """Return the first ``pyproject.toml`` in ``start`` or its ancestors, or ``None``."""
    directory = Path(start).resolve()
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        try:
            if candidate.is_file():
                return candidate
        except OSError:  # an unreadable directory: keep walking up
            continue
    return None


def _read_toml(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as stream:
            return tomllib.load(stream)
    except FileNotFoundError:
        return None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML: {exc}") from exc


def _flatten(table: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, f"{name}__")
        else:
            yield name, value


def read_pyproject_flags(path: str | os.PathLike[str]) -> list[tuple[str, Any]]:
    """Read the ``[tool.opweave]`` table of a ``pyproject.toml``.

    Nested tables map to ``__`` names: ``[tool.opweave.gcc] cxxflags = "-O3"`` gives
    ``("gcc__cxxflags", "-O3")``.

    Parameters
    ----------
    path
        Path of the ``pyproject.toml``.

    Returns
    -------
    list of (str, Any)
        ``(flag name, raw value)`` pairs, unchecked; empty if the file is missing or has no
        ``[tool.opweave]`` table.

    Raises
    ------
    ValueError
        If the file is not valid TOML or ``tool.opweave`` is not a table (naming the file).
    """
    path = Path(path)
    data = _read_toml(path)
    if data is None:
        return []
    tool = data.get("tool", {})
    table = tool.get("opweave") if isinstance(tool, dict) else None
    if table is None:
        return []
    if not isinstance(table, dict):
        raise ValueError(f"{path}: [tool.opweave] must be a table, not {table!r}")
    return list(_flatten(table))


def read_user_flags(path: str | os.PathLike[str]) -> list[tuple[str, Any]]:
    """Read the user config file: flags at its top level and/or under ``[opweave]``.

    Nested tables map to ``__`` names as in :func:`read_pyproject_flags`. When a flag is
    given both ways, the ``[opweave]`` table wins (it comes later in the list).

    Parameters
    ----------
    path
        Path of the user file.

    Returns
    -------
    list of (str, Any)
        ``(flag name, raw value)`` pairs, unchecked; empty if the file is missing.

    Raises
    ------
    ValueError
        If the file is not valid TOML or ``opweave`` is not a table (naming the file).
    """
    path = Path(path)
    data = _read_toml(path)
    if data is None:
        return []
    top = {key: value for key, value in data.items() if key != "opweave"}
    pairs = list(_flatten(top))
    if "opweave" in data:
        table = data["opweave"]
        if not isinstance(table, dict):
            raise ValueError(f"{path}: [opweave] must be a table, not {table!r}")
        pairs += _flatten(table)
    return pairs


def parse_env_flags(text: str, variable: str = ENV_VAR) -> list[tuple[str, str]]:
    """Parse an ``OPWEAVE_FLAGS`` value: comma-separated ``name=value`` items.

    Whitespace around items, names and values is ignored, as are empty items. Values may
    contain ``=`` but not ``,``.

    Parameters
    ----------
    text
        The variable's value, e.g. ``"linker=c, mode=FAST_RUN"``.
    variable
        The variable's name, for messages (``PYTENSOR_FLAGS`` has the same form).

    Returns
    -------
    list of (str, str)
        ``(flag name, raw value)`` pairs in order (a later repeat wins when applied).

    Raises
    ------
    ValueError
        For an item without ``=`` or with an empty name; the message names the item and
        ``variable``.
    """
    pairs: list[tuple[str, str]] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValueError(f"{variable}: malformed item {item!r} (expected name=value)")
        pairs.append((name, value.strip()))
    return pairs
