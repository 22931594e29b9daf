"""`compile --format launch` is complete: per entry the command, HOME/TMPDIR/CODEX_HOME, the ACP
mode id allow-list, the writer's lock among the files and the managed requirements to run
under; blocked modes say what enforces them. Deterministic and valid against the schema."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from profilec.cli import main
from profilec.codex.vocabulary import REQUIREMENTS_FILE
from profilec.emit.codex_home import ensure_writer_lock
from profilec.emit.launch import profilec_argv
from profilec.emit.requirements import digest, render_requirements
from profilec.library import load_and_compile
from profilec.models.launch import LaunchDocument
from tests.helpers import Layout, make_layout

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "schemas" / "launch.schema.json").read_text(encoding="utf-8"))
PROFILES = str(REPO / "profiles")
IDS = {
    "read-only": "permission-profile:profilec-read-only",
    "agent": "permission-profile:profilec-agent",
    "agent-full-access": "permission-profile:profilec-agent-full-access",
}


def _flags(lay: Layout, *, dirs: bool) -> list[str]:
    flags = [
        "--roots",
        str(lay.manifest),
        "--profiles",
        PROFILES,
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]
    if dirs:
        flags += ["--tmpdir", str(lay.base / "tmp"), "--home", str(lay.base / "home")]
    # A root compile of a launch names the uid Codex runs as (here root: the layout is ours).
    return flags + (["--run-as", "0"] if os.geteuid() == 0 else [])


def _layout(tmp_path: Path) -> Layout:
    lay = make_layout(tmp_path / "l")
    (lay.base / "tmp").mkdir()
    (lay.base / "home").mkdir()
    return lay


def _compile(lay: Layout, capsys: pytest.CaptureFixture[str], *, dirs: bool) -> tuple[str, Any]:
    rc = main(["compile", *_flags(lay, dirs=dirs), "--format", "launch"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    LaunchDocument.model_validate(doc)
    return out, doc


def _entries(doc: Any) -> list[Any]:
    return [*doc["adapters"], *doc["codex"]]


def _by(doc: Any) -> dict[tuple[str, str], Any]:
    return {(a["package"], a["codex_version"]): a for a in doc["adapters"]}


TS_171 = ("@agentclientprotocol/codex-acp", "0.171.0")
TS_166 = ("@agentclientprotocol/codex-acp", "0.166.0")
ZED = ("@zed-industries/codex-acp", "embedded")


def test_the_document_is_deterministic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lay = _layout(tmp_path)
    first, _ = _compile(lay, capsys, dirs=True)
    second, _ = _compile(lay, capsys, dirs=True)
    assert first == second


def test_every_entry_sets_home_tmpdir_and_codex_home(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = _layout(tmp_path)
    _, doc = _compile(lay, capsys, dirs=True)
    assert len(doc["adapters"]) == 3 and len(doc["codex"]) == 2
    for e in _entries(doc):
        env = e["env"]
        assert env["HOME"] == str(lay.base / "home")
        assert env["TMPDIR"] == str(lay.base / "tmp")
        assert env["CODEX_HOME"] == str(lay.codex_home)
        assert "HOME" not in e["launcher_supplies"] and "TMPDIR" not in e["launcher_supplies"]


def test_without_home_and_tmpdir_the_launcher_is_told_what_to_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = _layout(tmp_path)
    _, doc = _compile(lay, capsys, dirs=False)
    for e in _entries(doc):
        assert "HOME" not in e["env"] and "TMPDIR" not in e["env"]
        assert "--home DIR" in e["launcher_supplies"]["HOME"]
        assert "--tmpdir DIR" in e["launcher_supplies"]["TMPDIR"]
        assert e["env"]["CODEX_HOME"] == str(lay.codex_home)


def test_each_entry_has_the_command_that_starts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = _layout(tmp_path)
    _, doc = _compile(lay, capsys, dirs=True)
    by = _by(doc)
    for key in (TS_171, TS_166):
        a = by[key]
        assert a["command"] == ["${NODE}", "${ADAPTER_SCRIPT}", *a["args"]]
        assert "dist/index.js" in a["launcher_supplies"]["ADAPTER_SCRIPT"]
        assert "node >= 20" in a["launcher_supplies"]["NODE"]
    zed = by[ZED]
    assert zed["args"] and zed["command"] == ["${ADAPTER_BINARY}", *zed["args"]]
    assert "bin/codex-acp" in zed["launcher_supplies"]["ADAPTER_BINARY"]
    server, exe = doc["codex"]
    assert server["command"] == ["${codex}", *server["args"]]
    assert server["command"][1] == "app-server"
    assert exe["command"] == ["${codex}", *exe["args"]] and exe["command"][1] == "exec"
    # Every ${NAME} token of every command is a key the launcher is told to supply.
    for e in _entries(doc):
        tokens = [a[2:-1] for a in e["command"] if a.startswith("${") and a.endswith("}")]
        assert tokens and set(tokens) <= set(e["launcher_supplies"]), e["command"]


def test_the_mode_id_map_and_the_allow_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = _layout(tmp_path)
    _, doc = _compile(lay, capsys, dirs=True)
    for e in _entries(doc):
        assert e["mode_ids"] == IDS
    by = _by(doc)
    for key in (TS_171, TS_166):
        assert by[key]["forward_mode_ids"] == sorted(IDS.values())
        assert (
            "forward a mode switch (session/set_mode or session/set_config_option"
            in (by[key]["statement"])
        )
    # The zed build offers no permission-profile mode (docs/e2e-acp.md): forward none.
    assert by[ZED]["forward_mode_ids"] == []
    assert "forward no mode switch (session/set_mode or" in by[ZED]["statement"]
    # Every recipe names the environment: GIT_DIR turns the parent's git off (check PC052).
    for e in [a for a in doc["adapters"] if a["holds"]] + doc["codex"]:
        assert e["env"]["GIT_DIR"] == "/dev/null/profilec-parent-git-off", e["env"]
        assert e["statement"].startswith("start it with env as given (GIT_DIR=/dev/null/"), e
        assert "--launch-env" in e["statement"]
    for a in doc["adapters"]:
        assert not set(a["forward_mode_ids"]) & set(a["blocked_modes"])
        # Both ACP requests that switch a mode (codex-acp 2.6.0 takes both), in every entry.
        assert a["mode_methods"] == [
            {"method": "session/set_mode", "match": {}, "id_param": "modeId"},
            {
                "method": "session/set_config_option",
                "match": {"configId": "mode"},
                "id_param": "value",
            },
        ]


def test_blocked_modes_say_what_enforces_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = _layout(tmp_path)
    _, doc = _compile(lay, capsys, dirs=True)
    by = _by(doc)
    for key in (TS_171, TS_166):
        a = by[key]
        assert a["blocked_modes"] == ["agent", "agent-full-access", "workspace-write"]
        # Measured on 0.171.0 and 0.166.0: under the managed requirements a built-in mode runs
        # the default profile.
        assert a["enforced_by"] == "managed-requirements"
        assert doc["default_profile_id"] == "profilec-agent"
        assert "cannot run a turn: Codex refuses its approval policy" in a["statement"]
    zed = by[ZED]
    assert zed["blocked_modes"] == ["auto", "full-access"]
    # The embedded core was not measured under the requirements: only the launcher stops them.
    assert zed["enforced_by"] == "launcher"
    assert "nothing but the launcher" in zed["statement"]


def test_files_create_the_writer_lock_empty_before_the_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = _layout(tmp_path)
    _, doc = _compile(lay, capsys, dirs=True)
    want = {
        "path": str(lay.codex_home / "auth.lock"),
        "mode": "0600",
        "content": "",
        "if_exists": "keep",
    }
    for e in _entries(doc):
        locks = [f for f in e["files"] if f["path"].endswith("/auth.lock")]
        assert locks == [want], e.get("package", e.get("launcher"))
    # The codex-home method also writes the config, which is replaced every launch.
    ts = _by(doc)[TS_171]
    assert [f["path"] for f in ts["files"]] == [
        str(lay.codex_home / "config.toml"),
        str(lay.codex_home / "auth.lock"),
    ]
    assert "if_exists" not in ts["files"][0]
    # Followed as written (the harness does the same): the lock exists, empty, 0600, and an
    # existing one is left alone (Codex may hold it).
    (lay.codex_home / "auth.lock").unlink()
    ensure_writer_lock(os.path.dirname(want["path"]))
    st = os.stat(want["path"])
    assert st.st_size == 0 and st.st_mode & 0o777 == 0o600
    ino = st.st_ino
    ensure_writer_lock(os.path.dirname(want["path"]))
    assert os.stat(want["path"]).st_ino == ino


def test_each_entry_names_the_managed_requirements(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay = _layout(tmp_path)
    _, doc = _compile(lay, capsys, dirs=True)
    rc = main(["compile", *_flags(lay, dirs=True), "--format", "requirements"])
    text, err = capsys.readouterr()
    assert rc == 0, err
    bundle = load_and_compile(
        str(lay.manifest),
        profiles_dir=PROFILES,
        workspace_roots=[str(lay.workspace)],
        codex_home=str(lay.codex_home),
        tmpdir=str(lay.base / "tmp"),
        home=str(lay.base / "home"),
    )
    assert text == render_requirements(bundle)
    prefix, env = profilec_argv()
    want_argv = [*prefix, "requirements", "install", *_flags(lay, dirs=True)]
    for e in _entries(doc):
        req = e["requirements"]
        assert req["path"] == REQUIREMENTS_FILE == "/etc/codex/requirements.toml"
        assert req["digest"] == digest(text)
        assert req["digest"].startswith("sha256:") and len(req["digest"]) == 7 + 64
        assert req["install_argv"] == want_argv
        assert req["install_env"] == env
    # install_argv takes the same flags as watch.argv, in the same order.
    assert doc["watch"]["argv"][5:7] == ["--requirements", REQUIREMENTS_FILE]
    assert doc["watch"]["argv"][7:] == want_argv[6:]


def test_the_digest_follows_the_vaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Negative control: a different manifest (another vault) gives another digest."""
    a = _layout(tmp_path / "a")
    b = _layout(tmp_path / "b")
    _, doc_a = _compile(a, capsys, dirs=True)
    _, doc_b = _compile(b, capsys, dirs=True)
    assert (
        doc_a["codex"][0]["requirements"]["digest"] != doc_b["codex"][0]["requirements"]["digest"]
    )


def test_a_build_where_nothing_holds_sets_nothing(tmp_path: Path) -> None:
    from profilec.emit.launch import render_launch_with
    from profilec.models.launch import AdapterCatalog

    lay = _layout(tmp_path)
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    entry = {
        "package": "@zed-industries/codex-acp",
        "version": "0.16.0",
        "codex_version": "embedded",
        "codex_source": "embedded",
        "launch_method": "none",
        "reason": "r",
        "evidence": "e",
    }
    catalog = AdapterCatalog.model_validate({"schema_version": 1, "adapters": [entry]})
    doc = json.loads(render_launch_with(bundle, catalog))
    jsonschema.validate(doc, SCHEMA)
    (a,) = doc["adapters"]
    assert (a["command"], a["env"], a["files"], a["forward_mode_ids"]) == ([], {}, [], [])
    assert a["holds"] is False and "do not launch" in a["statement"]


@pytest.mark.parametrize("field", ["command", "mode_ids", "requirements", "enforced_by"])
def test_the_schema_requires_each_new_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str
) -> None:
    """Negative control: a document without the field (the old shape) does not validate."""
    lay = _layout(tmp_path)
    _, doc = _compile(lay, capsys, dirs=True)
    del doc["adapters"][0][field]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)
