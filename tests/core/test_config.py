"""Tests of the configuration machinery and the standard flags.

Every test passes its own working directory, environment mapping and user config path,
so the real home directory and environment are never read.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any

import pytest

from opweave.configdefaults import build_config as build_core_config
from opweave.configdefaults import platform_tag
from opweave.configuration import (
    BoolParam,
    Config,
    EnumParam,
    IntParam,
    PathParam,
    StrParam,
    UnknownFlagError,
    default_user_config_path,
    find_pyproject,
    parse_env_flags,
)
from opweave_c.options import add_c_options


def build_config(**kwargs: Any) -> Config:
    """A config with the core's flags and those opweave-c adds (``opweave_addoption``),
    as the process-wide one has them once the plugins are loaded."""
    environ = kwargs.get("environ")
    return build_core_config(options=[lambda c: add_c_options(c, environ=environ)], **kwargs)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """An environment with a fake, empty home directory."""
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fake working directory two levels below an empty project directory."""
    cwd = tmp_path / "proj" / "src" / "pkg"
    cwd.mkdir(parents=True)
    return cwd


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def user_file(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".config" / "opweave" / "config.toml"


# --------------------------------------------------------------------------- defaults


def test_defaults(project: Path, env: dict[str, str]) -> None:
    config = build_config(cwd=project, environ=env)
    assert config.linker == "auto"
    assert config.mode == "FAST_RUN"
    assert config.device == "cpu"
    assert config.floatX == "float64"
    assert config.cxx == "cc"
    assert config.gcc__cxxflags == ""
    assert config.check_input is True
    assert config.allow_gc is True
    assert config.optimizer_including == ""
    assert config.optimizer_excluding == ""
    assert config.cast_policy == "custom"
    assert config.traceback__limit == 8
    tag = f"{platform.machine()}-py{sys.version_info.major}.{sys.version_info.minor}"
    assert platform_tag() == tag
    assert config.compiledir == str(Path(env["HOME"]) / ".cache" / "opweave" / f"compiledir-{tag}")
    assert all(config.source(name) == "default" for name, _, _ in config.flags())


def test_environment_dependent_defaults(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    env = {**env, "CC": "clang-17", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    config = build_config(cwd=project, environ=env)
    assert config.cxx == "clang-17"
    assert config.compiledir == str(tmp_path / "cache" / "opweave" / f"compiledir-{platform_tag()}")
    assert config.source("cxx") == "default"


def test_flags_listing_and_repr(project: Path, env: dict[str, str]) -> None:
    config = build_config(cwd=project, environ=env)
    listing = config.flags()
    names = [name for name, _, _ in listing]
    assert names[:2] == ["linker", "mode"]
    assert "traceback__limit" in names
    assert all(doc for _, _, doc in listing)
    assert list(config) == listing
    assert len(config) == len(listing)
    assert "mode='FAST_RUN'" in repr(config)
    assert "mode = 'FAST_RUN'  (default)" in str(config)
    assert "gcc__cxxflags" in dir(config)


# --------------------------------------------------------------------------- precedence


def test_precedence(project: Path, env: dict[str, str]) -> None:
    user = write(
        user_file(env),
        'linker = "user"\nmode = "FAST_COMPILE"\nfloatX = "float32"\ncast_policy = "custom"\n',
    )
    pyproject = write(
        project.parent.parent / "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.opweave]\nlinker = "proj"\nmode = "DebugMode"\n'
        'floatX = "float16"\n',
    )
    env = {**env, "OPWEAVE_FLAGS": "linker=envlinker, mode=FAST_RUN"}
    config = build_config(cwd=project, environ=env)

    assert (config.cast_policy, config.source("cast_policy")) == ("custom", str(user))
    assert (config.floatX, config.source("floatX")) == ("float16", str(pyproject))
    assert (config.mode, config.source("mode")) == ("FAST_RUN", "OPWEAVE_FLAGS")
    assert (config.linker, config.source("linker")) == ("envlinker", "OPWEAVE_FLAGS")
    assert config.source("device") == "default"

    config.linker = "assigned"
    assert (config.linker, config.source("linker")) == ("assigned", "code")
    with config.change_flags(linker="temp", floatX="float64") as same:
        assert same is config
        assert (config.linker, config.source("linker")) == ("temp", "code")
        assert (config.floatX, config.source("floatX")) == ("float64", "code")
    assert (config.linker, config.source("linker")) == ("assigned", "code")
    assert (config.floatX, config.source("floatX")) == ("float16", str(pyproject))


def test_nearest_pyproject_wins_even_without_table(project: Path, env: dict[str, str]) -> None:
    write(project.parent.parent / "pyproject.toml", '[tool.opweave]\nmode = "DebugMode"\n')
    nearer = write(project.parent / "pyproject.toml", '[project]\nname = "inner"\n')
    assert find_pyproject(project) == nearer
    assert build_config(cwd=project, environ=env).mode == "FAST_RUN"


def test_user_file_under_opweave_table_and_xdg(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    env = {**env, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    path = default_user_config_path(env)
    assert path == tmp_path / "xdg" / "opweave" / "config.toml"
    write(path, 'device = "cuda"\n[opweave]\nmode = "DebugMode"\n[opweave.gcc]\ncxxflags = "-O2"\n')
    config = build_config(cwd=project, environ=env)
    assert (config.device, config.mode, config.gcc__cxxflags) == ("cuda", "DebugMode", "-O2")
    assert config.source("mode") == str(path)


def test_default_user_config_path_uses_home(env: dict[str, str]) -> None:
    assert default_user_config_path(env) == user_file(env)


def test_explicit_user_config_path(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "elsewhere.toml", "allow_gc = false\n")
    config = build_config(cwd=project, environ=env, user_config_path=path)
    assert config.allow_gc is False
    assert config.source("allow_gc") == str(path)


def test_nested_toml_table_maps_to_double_underscore(project: Path, env: dict[str, str]) -> None:
    write(
        project / "pyproject.toml",
        '[tool.opweave]\ncheck_input = "no"\n\n[tool.opweave.gcc]\ncxxflags = "-O3 -march=native"\n'
        "\n[tool.opweave.traceback]\nlimit = -1\n",
    )
    config = build_config(cwd=project, environ=env)
    assert config.gcc__cxxflags == "-O3 -march=native"
    assert config.traceback__limit == -1
    assert config.check_input is False


def test_toml_native_types(project: Path, env: dict[str, str]) -> None:
    write(project / "pyproject.toml", "[tool.opweave]\nallow_gc = false\ntraceback__limit = 3\n")
    config = build_config(cwd=project, environ=env)
    assert config.allow_gc is False
    assert config.traceback__limit == 3


# --------------------------------------------------------------------------- OPWEAVE_FLAGS


def test_env_flags_parsing(project: Path, env: dict[str, str]) -> None:
    assert parse_env_flags(" linker = c ,, mode=DebugMode ,") == [
        ("linker", "c"),
        ("mode", "DebugMode"),
    ]
    assert parse_env_flags("") == []
    env = {**env, "OPWEAVE_FLAGS": "gcc__cxxflags=-DX=1,compiledir=~/cd,check_input=YES"}
    config = build_config(cwd=project, environ=env)
    assert config.gcc__cxxflags == "-DX=1"
    assert config.compiledir == str(Path("~/cd").expanduser())
    assert config.check_input is True
    assert config.source("compiledir") == "OPWEAVE_FLAGS"


@pytest.mark.parametrize("item", ["linker", "=c", " mode "])
def test_malformed_env_item(project: Path, env: dict[str, str], item: str) -> None:
    env = {**env, "OPWEAVE_FLAGS": f"floatX=float32,{item}"}
    with pytest.raises(ValueError, match=rf"OPWEAVE_FLAGS.*malformed item '{item.strip()}'"):
        build_config(cwd=project, environ=env)


# --------------------------------------------------------------------------- unknown flags


def test_unknown_flag_from_assignment_and_read(project: Path, env: dict[str, str]) -> None:
    config = build_config(cwd=project, environ=env)
    with pytest.raises(AttributeError, match=r"unknown opweave config flag 'lnker'.*'linker'"):
        config.lnker = "c"
    with pytest.raises(AttributeError, match=r"unknown opweave config flag 'lnker'"):
        _ = config.lnker
    with pytest.raises(AttributeError, match="'lnker'"):
        config.source("lnker")
    assert not hasattr(config, "lnker")
    assert config.linker == "auto"


def test_unknown_flag_from_change_flags(project: Path, env: dict[str, str]) -> None:
    config = build_config(cwd=project, environ=env)
    with pytest.raises(AttributeError, match=r"unknown opweave config flag 'lnker'"):
        config.change_flags(mode="DebugMode", lnker="c")
    assert config.mode == "FAST_RUN"


def test_unknown_flag_from_env(project: Path, env: dict[str, str]) -> None:
    env = {**env, "OPWEAVE_FLAGS": "lnker=c"}
    with pytest.raises(UnknownFlagError, match=r"'lnker' \(from OPWEAVE_FLAGS\)"):
        build_config(cwd=project, environ=env)


def test_unknown_flag_from_pyproject(project: Path, env: dict[str, str]) -> None:
    path = write(project.parent / "pyproject.toml", '[tool.opweave.gcc]\ncflags = "-O1"\n')
    with pytest.raises(AttributeError, match="'gcc__cflags'") as info:
        build_config(cwd=project, environ=env)
    assert str(path) in str(info.value)


def test_unknown_flag_from_user_file(project: Path, env: dict[str, str]) -> None:
    path = write(user_file(env), "[opweave]\nfloat_x = 'float32'\n")
    with pytest.raises(AttributeError, match="'float_x'") as info:
        build_config(cwd=project, environ=env)
    assert str(path) in str(info.value)


def test_unknown_flag_error_is_also_value_error() -> None:
    assert issubclass(UnknownFlagError, AttributeError)
    assert issubclass(UnknownFlagError, ValueError)


# --------------------------------------------------------------------------- bad values


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("mode", "FAST RUN", r"FAST_RUN, FAST_COMPILE, DebugMode or the name of a mode"),
        ("floatX", "float128", r"one of: float64, float32, float16"),
        ("cast_policy", "numpy", r"one of: numpy\+floatX, custom"),
        ("check_input", "maybe", r"true/false"),
        ("allow_gc", 2, r"true/false"),
        ("traceback__limit", "-2", r"an integer >= -1"),
        ("traceback__limit", "eight", r"an integer"),
        ("traceback__limit", 1.5, r"an integer"),
        ("traceback__limit", True, r"an integer"),
        ("device", "gpu", r"cpu, cuda or cuda<N>"),
        ("linker", "9c", r"linker name"),
        ("linker", 3, r"linker name"),
        ("compiledir", "", r"path"),
    ],
)
def test_bad_value_assignment(
    project: Path, env: dict[str, str], name: str, value: object, expected: str
) -> None:
    config = build_config(cwd=project, environ=env)
    before = getattr(config, name)
    with pytest.raises(ValueError, match=rf"config flag '{name}': invalid value .*{expected}"):
        setattr(config, name, value)
    assert getattr(config, name) == before
    assert config.source(name) == "default"


def test_bad_value_example_message(project: Path, env: dict[str, str]) -> None:
    config = build_config(cwd=project, environ=env)
    with pytest.raises(ValueError) as info:
        config.mode = "FAST-RUN"
    assert str(info.value) == (
        "config flag 'mode': invalid value 'FAST-RUN' "
        "(expected FAST_RUN, FAST_COMPILE, DebugMode or the name of a mode an installed plugin "
        "provides (letters, digits and underscores, not starting with a digit))"
    )


def test_bad_value_from_env(project: Path, env: dict[str, str]) -> None:
    env = {**env, "OPWEAVE_FLAGS": "check_input=perhaps"}
    with pytest.raises(ValueError, match=r"'check_input' \(from OPWEAVE_FLAGS\).*'perhaps'"):
        build_config(cwd=project, environ=env)


def test_bad_value_from_pyproject(project: Path, env: dict[str, str]) -> None:
    path = write(project / "pyproject.toml", "[tool.opweave]\ntraceback__limit = -5\n")
    with pytest.raises(ValueError, match=r"'traceback__limit'.*>= -1") as info:
        build_config(cwd=project, environ=env)
    assert str(path) in str(info.value)


def test_bad_value_from_change_flags(project: Path, env: dict[str, str]) -> None:
    config = build_config(cwd=project, environ=env)
    change = config.change_flags(linker="py", floatX="float8")  # checked when applied

    @change
    def decorated() -> None:
        raise AssertionError("never runs")

    for apply in (change.__enter__, decorated):
        with pytest.raises(ValueError, match=r"config flag 'floatX'.*'float8'"):
            apply()
        assert config.linker == "auto"  # nothing was set
    with pytest.raises(UnknownFlagError):
        config.change_flags(no_such_flag=1)


def test_invalid_toml_names_file(project: Path, env: dict[str, str]) -> None:
    path = write(project / "pyproject.toml", "[tool.opweave\nmode = 1\n")
    with pytest.raises(ValueError, match="invalid TOML") as info:
        build_config(cwd=project, environ=env)
    assert str(path) in str(info.value)


def test_load_is_all_or_nothing(project: Path, env: dict[str, str]) -> None:
    config = build_config(cwd=project, environ=env)
    write(project / "pyproject.toml", '[tool.opweave]\nmode = "DebugMode"\n')
    with pytest.raises(ValueError, match="OPWEAVE_FLAGS"):
        config.load(cwd=project, environ={**env, "OPWEAVE_FLAGS": "floatX=float8"})
    assert (config.mode, config.source("mode")) == ("FAST_RUN", "default")


# --------------------------------------------------------------------------- change_flags


def test_change_flags_restores_on_exception(project: Path, env: dict[str, str]) -> None:
    config = build_config(cwd=project, environ={**env, "OPWEAVE_FLAGS": "linker=c"})
    with pytest.raises(RuntimeError, match="boom"):
        with config.change_flags(linker="py", allow_gc="false"):
            assert (config.linker, config.allow_gc) == ("py", False)
            raise RuntimeError("boom")
    assert (config.linker, config.source("linker")) == ("c", "OPWEAVE_FLAGS")
    assert (config.allow_gc, config.source("allow_gc")) == (True, "default")


def test_change_flags_nested_and_restores_assignment_inside(
    project: Path, env: dict[str, str]
) -> None:
    config = build_config(cwd=project, environ=env)
    with config.change_flags(mode="DebugMode"):
        with config.change_flags({"mode": "FAST_COMPILE"}, floatX="float32"):
            assert (config.mode, config.floatX) == ("FAST_COMPILE", "float32")
        assert (config.mode, config.floatX) == ("DebugMode", "float64")
        config.mode = "FAST_COMPILE"
    assert config.mode == "FAST_RUN"


def test_change_flags_as_decorator(project: Path, env: dict[str, str]) -> None:
    config = build_config(cwd=project, environ=env)
    seen: list[tuple[str, int]] = []

    @config.change_flags(floatX="float32")
    def depth_first(n: int) -> None:
        seen.append((config.floatX, n))
        if n:
            depth_first(n - 1)
        assert config.floatX == "float32"

    depth_first(2)
    assert seen == [("float32", 2), ("float32", 1), ("float32", 0)]
    assert config.floatX == "float64"


# --------------------------------------------------------------------------- params


def test_params_directly() -> None:
    config = Config()
    config.add("flag", "A bool.", BoolParam(False))
    config.add("size", "An int.", IntParam(1, minimum=0, maximum=4))
    config.add("color", "An enum.", EnumParam("red", ["red", "blue"]))
    config.add("where", "A path.", PathParam("~/x"))
    config.add("name", "A string.", StrParam("n"))
    assert config.where == str(Path("~/x").expanduser())
    for text, expected in [("TRUE", True), ("No", False), ("1", True), (0, False)]:
        config.flag = text
        assert config.flag is expected
    config.size = " 4 "
    assert config.size == 4
    with pytest.raises(ValueError, match=r"'size'.*between 0 and 4"):
        config.size = 5
    with pytest.raises(ValueError, match=r"'color'.*one of: red, blue"):
        config.color = "RED"
    assert config.param("size").default == 1


def test_add_rejects_bad_registrations() -> None:
    config = Config()
    config.add("mode", "Mode.", EnumParam("a", ["a", "b"]))
    with pytest.raises(ValueError, match="already registered"):
        config.add("mode", "Again.", EnumParam("a", ["a"]))
    with pytest.raises(ValueError, match="clashes"):
        config.add("flags", "Shadows a method.", StrParam(""))
    with pytest.raises(ValueError, match="invalid config flag name"):
        config.add("_private", "Bad name.", StrParam(""))
    with pytest.raises(ValueError, match=r"'bad'.*invalid default"):
        config.add("bad", "Bad default.", EnumParam("c", ["a", "b"]))
    with pytest.raises(AttributeError, match="cannot delete"):
        del config.mode


# --------------------------------------------------------------------------- backend flags


def test_a_backend_flag_set_before_the_backend_loads_applies_when_it_does(
    project: Path, env: dict[str, str]
) -> None:
    env = {**env, "OPWEAVE_FLAGS": "cxx=clang-18,mode=DebugMode"}
    made: list[Config] = []
    loads: list[int] = []

    def load_plugins() -> None:
        loads.append(1)
        add_c_options(made[0], environ=env)

    config = build_core_config(cwd=project, environ=env, late_flags=load_plugins)
    made.append(config)
    assert config.mode == "DebugMode" and loads == []
    assert config.cxx == "clang-18"  # reading it loads the plugins, once
    assert config.source("cxx") == "OPWEAVE_FLAGS"
    assert config.gcc__cxxflags == "" and loads == [1]
    config.check_pending()


def test_a_flag_no_plugin_registers_is_reported_once_they_loaded(
    project: Path, env: dict[str, str]
) -> None:
    env = {**env, "OPWEAVE_FLAGS": "cxxx=clang"}
    config = build_core_config(cwd=project, environ=env, late_flags=lambda: None)
    with pytest.raises(UnknownFlagError, match=r"'cxxx' \(from OPWEAVE_FLAGS\)"):
        config.check_pending()


def test_a_backend_registering_its_flag_again_keeps_it(project: Path, env: dict[str, str]) -> None:
    config = build_config(cwd=project, environ=env)
    config.cxx = "gcc-13"
    add_c_options(config, environ={"CC": "other"})
    assert config.cxx == "gcc-13"
