"""The library API's contract (docs/embedding.md): `api.__all__` pinned, the signatures of
`load_and_compile` and `make_inputs` equal to `InputOptions`, and it to the one declaration of
the compile flags (compiler/flags.py), and every argument error a ProfilecError naming its
parameter. The static side is tests/typecheck/api_types.py (mypy)."""

from __future__ import annotations

import collections.abc
import inspect
import os
import typing
from pathlib import Path
from typing import Any

import pytest

from profilec import api, library
from profilec.compiled import Compiled
from profilec.flags import FLAGS
from tests.helpers import make_layout

REPO = Path(__file__).resolve().parents[2]

#: The supported names; changing this list is changing the contract (CHANGELOG, docs).
PINNED = [
    "CanaryMismatchError",
    "CheckFailedError",
    "CompiledBundle",
    "EnvironmentMissingError",
    "InputError",
    "InputOptions",
    "Inputs",
    "LayoutError",
    "LockDriftError",
    "OutputError",
    "PolicyError",
    "ProfilecError",
    "RootChainError",
    "SandboxRefusesError",
    "SessionConfig",
    "StrPath",
    "TrustError",
    "UnsafeRootError",
    "UsageError",
    "WatchHandle",
    "compile_inputs",
    "install_requirements",
    "launch_document",
    "load_and_compile",
    "make_inputs",
    "override_lines",
    "render",
    "run_session",
    "start_watch",
    "verify_lock",
    "verify_requirements",
    "write_codex_home",
    "write_lock",
]

#: Library parameters no CLI flag has: the session config as data (the CLI reads a file).
LIBRARY_ONLY = {"session_config": api.SessionConfig | None}

#: A compile flag's library type, by its kind (flags.Kind).
LIBRARY_TYPE = {
    "file": api.StrPath | None,
    "dir": api.StrPath | None,
    "path": api.StrPath | None,
    "paths": collections.abc.Sequence[api.StrPath],
    "uid": int | None,
}

OPTION_FUNCTIONS = [api.load_and_compile, api.make_inputs]


def declared() -> dict[str, Any]:
    return typing.get_type_hints(api.InputOptions)


def test_all_is_the_pinned_list_and_every_name_exists() -> None:
    assert list(api.__all__) == PINNED
    assert len(set(api.__all__)) == len(api.__all__)
    for name in api.__all__:
        assert hasattr(api, name), name


@pytest.mark.parametrize("fn", OPTION_FUNCTIONS, ids=lambda f: f.__name__)
def test_the_signature_is_input_options(fn: Any) -> None:
    """Names, order, kinds, types and defaults: a new option added to InputOptions and not
    to a signature (or the other way round) fails here."""
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    first, *options = sig.parameters.values()
    assert first.name == "roots_path" and first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert hints["roots_path"] == api.StrPath
    assert [p.name for p in options] == list(declared())
    for p in options:
        assert p.kind is inspect.Parameter.KEYWORD_ONLY, p.name
        assert hints[p.name] == declared()[p.name], p.name
        assert p.default == (() if p.name == "workspace_roots" else None), p.name
    assert not api.InputOptions.__required_keys__


def test_load_and_compile_passes_every_option_to_make_inputs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}

    def fake_make(roots_path: Any, **kwargs: Any) -> str:
        seen.update(kwargs, roots_path=roots_path)
        return "inputs"

    monkeypatch.setattr(library, "make_inputs", fake_make)
    bundle: Any = "bundle"  # the compile step's bundle, as the test sees it
    monkeypatch.setattr(library, "compile_step", lambda inputs: Compiled(inputs, bundle))
    sent = {name: object() for name in declared()}
    untyped: Any = api.load_and_compile  # the options are objects here, not their types
    assert untyped("/r", **sent) == "bundle"
    assert seen == {"roots_path": "/r", **sent}


def test_input_options_are_the_compile_flags_in_library_types() -> None:
    """Each compile flag the library takes is one InputOptions key, by its `library` keyword,
    in declaration order and in its kind's type; nothing else but the session config as data.
    A flag added to compiler/flags.py and not here (or the other way round) fails."""
    library = {
        f.library: LIBRARY_TYPE[f.kind] for f in FLAGS if f.library not in (None, "roots_path")
    }
    options = {k: v for k, v in declared().items() if k not in LIBRARY_ONLY}
    assert list(options) == list(library)
    assert options == library
    assert {k: declared()[k] for k in LIBRARY_ONLY} == LIBRARY_ONLY
    assert FLAGS[0].library == "roots_path"  # the positional parameter
    assert [f.name for f in FLAGS if f.library is None] == ["plan_layout"]  # the lock's only


def test_every_library_option_reaches_its_input() -> None:
    """make_inputs hands each option to its flag's field of `Inputs.flags` (none dropped)."""
    paths = {"profiles_dir": "/p", "codex_home": "/c", "session_config_path": "/s"}
    paths |= {"tmpdir": "/t", "home": "/h", "vouched_mcp_path": "/v"}
    make: Any = api.make_inputs  # the options are a dict here
    inp = make("/r", workspace_roots=["/w"], run_as=7, **paths)
    for f in FLAGS:
        if f.library is None:
            continue
        want = {"roots_path": "/r", "workspace_roots": ("/w",), "run_as": 7, **paths}
        value = getattr(inp.flags, f.name)
        assert (str(value) if isinstance(value, Path) else value) == want[f.library], f.name


def test_the_documented_signature_is_the_real_one() -> None:
    doc = (REPO / "docs" / "embedding.md").read_text(encoding="utf-8")
    block = doc.split("def load_and_compile(\n", 1)[1].split(") -> CompiledBundle", 1)[0]
    got = [ln.split("  #")[0].strip() for ln in block.splitlines() if ln.strip() != "*,"]
    want = []
    for p in inspect.signature(api.load_and_compile).parameters.values():
        default = "" if p.default is inspect.Parameter.empty else f" = {p.default!r}"
        want.append(f"{p.name}: {p.annotation}{default},")
    assert got == want


# -- argument errors ---------------------------------------------------------------------------


def test_a_misspelt_keyword_never_passes() -> None:
    """Refused as a UsageError naming it (mypy refuses it first: tests/typecheck)."""
    for fn in OPTION_FUNCTIONS:
        with pytest.raises(api.UsageError) as err:
            fn("/r", workspace_root=["/w"])  # type: ignore[call-arg]
        assert err.value.where == "workspace_root"
        assert err.value.hint == "did you mean workspace_roots?"
        assert "make_inputs() takes no keyword argument 'workspace_root'" in str(err.value)
        with pytest.raises(api.UsageError) as err:
            fn("/r", hom="/h")  # type: ignore[call-arg]
        assert err.value.where == "hom"
        opts: dict[str, Any] = {"codex_hom": "/c"}
        with pytest.raises(api.UsageError) as err:
            fn("/r", **opts)
        assert (err.value.where, err.value.hint) == ("codex_hom", "did you mean codex_home?")


def test_run_as_of_a_wrong_type_names_run_as() -> None:
    for bad, shown in (("65534", "str '65534'"), (True, "bool True"), (6.5, "float 6.5")):
        with pytest.raises(api.UsageError) as err:
            api.load_and_compile("/r", run_as=bad)  # type: ignore[arg-type]
        assert err.value.where == "run_as"
        assert f"run_as: expected an int uid, got {shown}" in str(err.value)
        assert err.value.exit_code == 2
    with pytest.raises(api.UsageError, match="run_as: a uid is 0 or more, got -1"):
        api.make_inputs("/r", run_as=-1)


#: Every path parameter (from the declaration: its type names StrPath) and the call that puts
#: `value` there; the rest of the arguments are valid.
PATH_OPTIONS = [
    name
    for name, hint in typing.get_type_hints(api.InputOptions).items()
    if hint in (api.StrPath, api.StrPath | None)
]


def test_path_options_are_the_expected_ones() -> None:
    assert PATH_OPTIONS == [
        "profiles_dir",
        "codex_home",
        "session_config_path",
        "tmpdir",
        "home",
        "vouched_mcp_path",
    ]


def path_calls() -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = [("roots_path", lambda v: api.make_inputs(v))]
    calls += [(n, lambda v, n=n: api.make_inputs("/r", **{n: v})) for n in PATH_OPTIONS]
    calls.append(("workspace_roots[1]", lambda v: api.make_inputs("/r", workspace_roots=["/w", v])))
    return calls


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("relative/roots.toml", "must be absolute"),
        (Path("relative"), "must be absolute"),
        ("", "is empty"),
        ("/a/../b", "traversal segment"),
        ("/a/b/", "trailing slash"),
        ("/a\x00b", "NUL byte"),
        (b"/a", "expected a str or os.PathLike[str] path, got bytes"),
        (3, "expected a str or os.PathLike[str] path, got int 3"),
    ],
)
def test_a_bad_path_names_its_parameter(bad: Any, says: str) -> None:
    for name, call in path_calls():
        with pytest.raises(api.UsageError) as err:
            call(bad)
        assert err.value.where == name
        assert f"profilec: usage: {name}: " in str(err.value) and says in str(err.value), name


def test_workspace_roots_must_be_a_sequence_of_paths() -> None:
    for bad in ("/w", Path("/w"), b"/w", {"/w"}, 3):
        with pytest.raises(api.UsageError, match="workspace_roots: expected a sequence") as err:
            api.make_inputs("/r", workspace_roots=bad)  # type: ignore[arg-type]
        assert err.value.where == "workspace_roots"


def test_session_config_of_a_wrong_type_names_it() -> None:
    with pytest.raises(api.UsageError, match="session_config: expected a mapping") as err:
        api.make_inputs("/r", session_config=Path("/s.json"))  # type: ignore[arg-type]
    assert err.value.hint is not None and "session_config_path" in err.value.hint
    with pytest.raises(api.InputError, match="not valid UTF-8"):
        api.make_inputs("/r", session_config="\ud800")


def test_other_functions_check_their_arguments(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    inp = api.make_inputs(lay.manifest, workspace_roots=[lay.workspace], codex_home=lay.codex_home)
    bundle = api.compile_inputs(inp)
    cases: list[tuple[str, Any]] = [
        ("inputs", lambda: api.compile_inputs("inputs")),  # type: ignore[arg-type]
        ("bundle", lambda: api.render({}, "toml")),  # type: ignore[arg-type]
        ("fmt", lambda: api.render(bundle, None)),  # type: ignore[arg-type]
        ("fmt", lambda: api.render(bundle, "yaml")),
        ("bundle", lambda: api.override_lines(None)),  # type: ignore[arg-type]
        ("directory", lambda: api.write_codex_home(bundle, "out")),
        ("inputs", lambda: api.launch_document(bundle, inputs=bundle)),  # type: ignore[arg-type]
        ("path", lambda: api.write_lock("a.lock", inp)),
        ("inputs", lambda: api.write_lock(tmp_path / "a.lock", None)),  # type: ignore[arg-type]
        ("path", lambda: api.verify_lock(b"/a.lock", inp)),  # type: ignore[arg-type]
        ("on_drift", lambda: api.start_watch(bundle, None)),  # type: ignore[arg-type]
        ("interval", lambda: api.start_watch(bundle, print, interval="1")),  # type: ignore[arg-type]
        ("interval", lambda: api.start_watch(bundle, print, interval=2)),
    ]
    for name, call in cases:
        with pytest.raises(api.UsageError) as err:
            call()
        assert err.value.where == name, (name, err.value)
    assert not (tmp_path / "a.lock").exists()


# -- Path and str compile to the same bytes ----------------------------------------------------


def test_path_and_str_give_byte_identical_output(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    tmp = lay.base / "tmp"
    home = lay.base / "home"
    for d in (tmp, home):
        d.mkdir()
    session = lay.base / "session.json"
    session.write_text('{"model": "gpt-test"}', encoding="utf-8")
    mcp = lay.base / "mcp.toml"
    mcp.write_text(
        'schema_version = 2\ncodex = "/usr/bin/codex"\n'
        '[servers.bridge]\ncommand = "/usr/bin/true"\ncwd = "/srv/agentd/mcp"\n'
    )
    os.chmod(mcp, 0o600)
    profiles = REPO / "profiles"
    paths: dict[str, Path] = {
        "profiles_dir": profiles,
        "codex_home": lay.codex_home,
        "session_config_path": session,
        "tmpdir": tmp,
        "home": home,
        "vouched_mcp_path": mcp,
    }
    assert sorted(paths) == sorted(PATH_OPTIONS)  # every path parameter is exercised
    make: Any = api.make_inputs  # the options are a dict here, each checked at run time
    as_path = make(lay.manifest, workspace_roots=[lay.workspace], **paths)
    as_str = make(
        str(lay.manifest),
        workspace_roots=[str(lay.workspace)],
        **{k: str(v) for k, v in paths.items()},
    )
    a, b = api.compile_inputs(as_path), api.compile_inputs(as_str)
    for fmt in ("toml", "overrides", "acp-json", "session-config", "bundle", "launch"):
        assert api.render(a, fmt).encode() == api.render(b, fmt).encode(), fmt
    assert api.launch_document(a, inputs=as_path) == api.launch_document(b, inputs=as_str)
    lock_a, lock_b = lay.base / "a.lock", lay.base / "b.lock"
    assert api.write_lock(lock_a, as_path) == api.write_lock(str(lock_b), as_str)
    assert lock_a.read_bytes() == lock_b.read_bytes()
    assert api.verify_lock(lock_a, as_path) is None
    out_a, out_b = tmp_path / "ha", tmp_path / "hb"
    assert api.write_codex_home(a, out_a) == str(out_a / "config.toml")
    api.write_codex_home(b, str(out_b))
    assert (out_a / "config.toml").read_bytes() == (out_b / "config.toml").read_bytes()
