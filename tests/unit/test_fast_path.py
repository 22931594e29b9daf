"""The `compile` fast path (compiler/cli/fast.py + compiler/lite.py) is the full path, faster.

* the lite twins have the models' fields, defaults and derived methods;
* the lite validators accept only what the strict models accept, with equal values
  (hypothesis over mutated documents), and do accept the shipped policy and real manifests;
* `main` (fast path first) and `main_full` (typer alone) give identical stdout, stderr, written
  files and exit codes for every --format and every error class; the fast path is shown to
  actually run for the plain cases and to step aside for the others;
* EffectiveProfile.winner agrees with decide().
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from profilec import lite, models
from profilec.cli import fast, main, main_full
from profilec.evaluate import EffectiveProfile, Entry
from profilec.policy import default_profiles_dir
from tests.helpers import make_layout, write_manifest

TWINS = [
    "RootSpec",
    "RootsManifest",
    "NetworkPolicy",
    "ModeProfilePolicy",
    "ModeMapEntry",
    "ModeMap",
    "LaunchLayout",
    "Hop",
    "ResolvedRoot",
    "ResolvedHome",
    "Provenance",
    "CompiledEntry",
    "CompiledProfile",
    "Finding",
    "CompiledBundle",
]


@pytest.mark.parametrize("name", TWINS)
def test_twin_has_the_models_fields_defaults_and_methods(name: str) -> None:
    model: type[BaseModel] = getattr(models, name)
    twin = getattr(lite, name)
    fields = {f.name: f for f in dataclasses.fields(twin)}
    assert list(fields) == list(model.model_fields)
    for fname, info in model.model_fields.items():
        f = fields[fname]
        if info.is_required():
            assert f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        elif info.default_factory is not None:
            assert f.default_factory is not dataclasses.MISSING
        else:
            assert f.default == info.default, fname
    own = {k for k, v in vars(model).items() if isinstance(v, property) or callable(v)}
    own = {k for k in own if not k.startswith("_") and k not in ("model_config",)}
    assert own <= set(dir(twin)), own - set(dir(twin))


# ---------------------------------------------------------------------------------------------
# Validators: sound (never accept what the models reject) and complete enough to fire


def _policy_docs() -> list[tuple[str, dict[str, Any]]]:
    pdir = Path(default_profiles_dir())
    docs = [("map", tomllib.loads((pdir / "modes.toml").read_text()))]
    for mode in ("read-only", "agent", "agent-full-access"):
        docs.append(("base", tomllib.loads((pdir / f"{mode}.toml").read_text())))
    return docs


MANIFEST: dict[str, Any] = {
    "schema_version": 1,
    "roots": [
        {"id": "codex-auth", "path": "/h/.codex/auth.json", "backend": "codex"},
        {"id": "b", "path": "/x", "description": "d", "allow_missing": True},
    ],
}
CHECKS: dict[str, tuple[Any, type[BaseModel]]] = {
    "manifest": (lite.manifest_doc, models.RootsManifest),
    "map": (lite.mode_map_doc, models.ModeMap),
    "base": (lite.policy_doc, models.ModeProfilePolicy),
}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, BaseModel):
        return {k: _plain(getattr(value, k)) for k in type(value).model_fields}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _agree(kind: str, doc: Any) -> bool:
    """True when lite accepted `doc`; asserts the model accepts it with the same values."""
    check, model = CHECKS[kind]
    try:
        twin = check(doc)
    except lite.NotLite:
        return False
    try:
        validated = model.model_validate(doc)
    except ValidationError as exc:  # pragma: no cover - this is the failure being guarded
        raise AssertionError(f"lite accepted what {model.__name__} rejects: {exc}") from None
    assert _plain(twin) == _plain(validated)
    return True


def test_validators_accept_the_shipped_policy_and_a_real_manifest() -> None:
    assert _agree("manifest", MANIFEST)
    for kind, doc in _policy_docs():
        assert _agree(kind, doc), kind


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 70),
    st.sampled_from(["", "a", "A", "-a", "a" * 64, "/x", "x", "read", "none", "all", "1.toml"]),
    st.sampled_from([":read-only", ":workspace", ":danger-full-access", "a.toml", "A.toml"]),
    st.lists(st.integers(0, 1), max_size=2),
    st.dictionaries(st.sampled_from(["enabled", "x", "."]), st.booleans(), max_size=2),
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(doc: Any, path: tuple[Any, ...], op: str, junk: Any) -> Any:
    if not path:
        return junk if op == "set" else doc
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        out = dict(doc)
        if not rest and op == "del":
            del out[head]
        elif not rest and op == "add":
            out[head] = doc[head]
            out["zz-extra"] = junk
        else:
            out[head] = _mutate(doc[head], rest, op, junk)
        return out
    out_list = list(doc)
    if not rest and op == "del":
        del out_list[head]
    else:
        out_list[head] = _mutate(doc[head], rest, op, junk)
    return out_list


@settings(max_examples=400, deadline=None)
@given(
    which=st.integers(0, 3),
    data=st.data(),
    op=st.sampled_from(["set", "del", "add"]),
    junk=JUNK,
)
def test_lite_never_accepts_what_the_models_reject(
    which: int, data: st.DataObject, op: str, junk: Any
) -> None:
    kind, doc = ("manifest", MANIFEST) if which == 0 else _policy_docs()[which - 1]
    path = data.draw(st.sampled_from(_paths(doc)))
    _agree(kind, _mutate(doc, path, op, junk))


# ---------------------------------------------------------------------------------------------
# The CLI: identical results, fast path or not


def _outcome(
    entry: Any, args: list[str], out: Path | None, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str, dict[str, bytes]]:
    if out is not None and out.exists():
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    rc = entry(args)
    cap = capsys.readouterr()
    files: dict[str, bytes] = {}
    if out is not None and out.is_file():
        files[out.name] = out.read_bytes()
    elif out is not None and out.is_dir():
        files = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    return rc, cap.out, cap.err, files


def _case(name: str, tmp: Path) -> tuple[list[str], Path | None, bool]:
    """(args after `compile`, --out path or None, whether the fast path must take it)."""
    lay = make_layout(tmp / "l", hop_dir=True)
    m, ws, home = str(lay.manifest), str(lay.workspace), str(lay.codex_home)
    out = tmp / "out"
    plain = ["--roots", m, "--workspace-root", ws, "--codex-home", home]
    session = tmp / "session.json"
    session.write_text('{"model": "m", "sandbox_mode": "danger-full-access", "z": {"a": 1}}')
    bad = tmp / "bad.toml"
    profiles = tmp / "profiles"
    shutil.copytree(default_profiles_dir(), profiles)
    cases: dict[str, tuple[list[str], Path | None, bool]] = {
        # every --format, stdout and --out
        **{
            f"fmt-{f}": ([*plain, "--format", f], None, True)
            for f in ("toml", "overrides", "acp-json", "session-config")
        },
        **{
            f"fmt-{f}-out": ([*plain, f"--format={f}", "--out", str(out)], out, True)
            for f in ("toml", "overrides", "acp-json", "session-config")
        },
        "fmt-bundle": ([*plain, "--format", "bundle"], None, False),
        "fmt-codex-home": ([*plain, "--format", "codex-home", "--out", str(out)], out, False),
        "default-format": (["--roots", m], None, True),
        "session": ([*plain, "--session-config", str(session), "--format", "acp-json"], None, True),
        "session-config": (
            [*plain, "--session-config", str(session), "--format", "session-config"],
            None,
            True,
        ),
        "profiles-copy": ([*plain, "--profiles", str(profiles)], None, True),
        "two-workspaces": ([*plain, "--workspace-root", "/srv/other"], None, True),
        "tmpdir": ([*plain, "--tmpdir", "/var/tmp", "--format", "overrides"], None, True),
        # usage errors (typer's own messages)
        "unknown-format": ([*plain, "--format", "yaml"], None, False),
        "codex-home-no-out": ([*plain, "--format", "codex-home"], None, False),
        "no-roots": (["--workspace-root", ws], None, False),
        "unknown-option": ([*plain, "--bogus", "1"], None, False),
        "missing-value": ([*plain, "--format"], None, False),
        "roots-is-dir": (["--roots", str(tmp)], None, False),
        "repeated-single": ([*plain, "--format", "toml", "--format", "overrides"], None, False),
        "dotted-path": (["--roots", m.replace("/roots.toml", "/./roots.toml")], None, False),
        "help": (["--help"], None, False),
        # input, policy, trust, chain, unsafe, output errors
        "relative-workspace": ([*plain, "--workspace-root", "ws"], None, False),
        "malformed": (["--roots", str(bad)], None, False),
        "schema": (["--roots", str(tmp / "schema.toml")], None, False),
        "untrusted": (["--roots", str(tmp / "untrusted.toml")], None, False),
        "dangling": (["--roots", str(tmp / "dangling.toml")], None, False),
        "unsafe": (["--roots", str(tmp / "unsafe.toml"), "--workspace-root", ws], None, False),
        "bad-policy": ([*plain, "--profiles", str(tmp / "badprofiles")], None, False),
        "no-out-dir": ([*plain, "--out", str(tmp / "nodir" / "x.toml")], None, True),
        "missing-session": ([*plain, "--session-config", str(tmp / "none.json")], None, False),
        "vouched-mcp": ([*plain, "--vouched-mcp", str(tmp / "mcp.toml"), "--format", "acp-json"],
                        None, True),
        "untrusted-mcp": ([*plain, "--vouched-mcp", str(tmp / "mcp-open.toml")], None, False),
    }
    for fname, mode in (("mcp.toml", 0o644), ("mcp-open.toml", 0o666)):
        (tmp / fname).write_text('schema_version = 1\n[servers.b]\ncommand = "/bin/true"\n'
                                 'credential = "c"\n')
        os.chmod(tmp / fname, mode)
    bad.write_text("schema_version = \n")
    os.chmod(bad, 0o600)
    write_manifest(tmp / "schema.toml", [{"id": "A", "path": "/x"}])
    write_manifest(tmp / "untrusted.toml", [{"id": "a", "path": "/x"}], mode=0o646)
    (tmp / "dangle").symlink_to(tmp / "nothing")
    write_manifest(tmp / "dangling.toml", [{"id": "a", "path": str(tmp / "dangle")}])
    (lay.workspace / "auth.json").write_text("x")
    write_manifest(tmp / "unsafe.toml", [{"id": "a", "path": str(lay.workspace / "auth.json")}])
    shutil.copytree(default_profiles_dir(), tmp / "badprofiles")
    agent = tmp / "badprofiles" / "agent.toml"
    agent.write_text(agent.read_text() + '\n[filesystem.":nonsense"]\n"." = "read"\n')
    return cases[name]


CASES = [
    *(f"fmt-{f}" for f in ("toml", "overrides", "acp-json", "session-config")),
    *(f"fmt-{f}-out" for f in ("toml", "overrides", "acp-json", "session-config")),
    "fmt-bundle",
    "fmt-codex-home",
    "default-format",
    "session",
    "session-config",
    "profiles-copy",
    "two-workspaces",
    "unknown-format",
    "codex-home-no-out",
    "no-roots",
    "unknown-option",
    "missing-value",
    "roots-is-dir",
    "repeated-single",
    "dotted-path",
    "help",
    "relative-workspace",
    "malformed",
    "schema",
    "untrusted",
    "dangling",
    "unsafe",
    "bad-policy",
    "no-out-dir",
    "missing-session",
    "vouched-mcp",
    "untrusted-mcp",
]


@pytest.mark.parametrize("name", CASES)
def test_fast_and_full_paths_give_identical_results(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, out, fast_takes_it = _case(name, tmp_path)
    assert (fast.prepare(args) is not None) == fast_takes_it
    capsys.readouterr()
    full = _outcome(main_full, ["compile", *args], out, capsys)
    quick = _outcome(main, ["compile", *args], out, capsys)
    assert quick == full
    if name.startswith("fmt-") or name in ("session", "default-format"):
        assert full[0] == 0 and (full[1] or full[3])


def test_exit_codes_cover_every_error_class(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The equivalence above spans usage (2), input (2), trust (3), chain (4), unsafe (5) and
    output (6) errors, so a fast path that only handled success would be caught."""
    codes = {}
    for name in ("unknown-option", "schema", "untrusted", "dangling", "unsafe", "no-out-dir"):
        sub = tmp_path / name
        sub.mkdir()
        args, _, _ = _case(name, sub)
        codes[name] = main(["compile", *args])
    capsys.readouterr()
    assert codes == {
        "unknown-option": 2,
        "schema": 2,
        "untrusted": 3,
        "dangling": 4,
        "unsafe": 5,
        "no-out-dir": 6,
    }


@given(st.text(alphabet="/.a", max_size=12))
def test_pathlib_form_check_matches_pathlib(value: str) -> None:
    if fast.as_pathlib_prints(value):
        assert str(PurePosixPath(value)) == value


def test_a_fast_path_that_differs_is_caught(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Negative control: a lite twin rendering one byte differently fails the comparison."""
    args, out, _ = _case("fmt-overrides", tmp_path)
    full = _outcome(main_full, ["compile", *args], out, capsys)
    original = lite.codex_table

    def skewed(profile: Any) -> dict[str, Any]:
        table = original(profile)
        table["description"] += " "
        return table

    monkeypatch.setattr(lite.CompiledProfile, "codex_table", skewed)
    assert _outcome(main, ["compile", *args], out, capsys) != full


# ---------------------------------------------------------------------------------------------
# winner() == decide()


ENTRY_PATHS = ["/", "/a", "/a/b", "/a/b/c", "/d", "/a/b/c/e"]


@settings(max_examples=300, deadline=None)
@given(
    entries=st.lists(
        st.tuples(
            st.sampled_from([*ENTRY_PATHS, "/a/*", "/**/c"]),
            st.sampled_from(["read", "write", "deny"]),
            st.sampled_from(["s1", "s2"]),
        ),
        max_size=8,
    ),
    query=st.sampled_from([*ENTRY_PATHS, "/a/b/x", "/z", "/a/b/c/e/f"]),
)
def test_winner_agrees_with_decide(entries: list[tuple[str, str, str]], query: str) -> None:
    es = tuple(
        Entry("glob" if "*" in p else "path", p, a, s)  # type: ignore[arg-type]
        for p, a, s in entries
    )
    eff = EffectiveProfile("p", False, es, False, (), ())
    d = eff.decide(query)
    assert eff.winner(query) == (d.access, d.winner)


# ---------------------------------------------------------------------------------------------
# tomltext shortcuts (regex tests instead of per-character loops) keep the exact output


@given(st.text(max_size=12))
def test_bare_key_and_plain_string_shortcuts_match_the_character_rules(name: str) -> None:
    from profilec.emit.tomltext import _ESCAPES, key, string

    bare = bool(name) and all(c.isascii() and (c.isalnum() or c in "-_") for c in name)
    assert (key(name) == name) == bare
    slow = ['"']
    for ch in name:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            slow.append(esc)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            slow.append(f"\\u{ord(ch):04X}")
        else:
            slow.append(ch)
    assert string(name) == "".join([*slow, '"'])
