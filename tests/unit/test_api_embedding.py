"""The supported library API (`profilec.api.__all__`, docs/embedding.md): session config as
data, rendering, lock, in-process watch and typed errors."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from profilec import api
from profilec.errors import ProfilecError
from tests.helpers import make_layout

REPO = Path(__file__).resolve().parents[2]
AGENT = {
    "model": "gpt-test",
    "sandbox_mode": "danger-full-access",
    "mcp_servers": {"x": {"command": "sh"}},
}


def test_every_exported_name_exists_and_is_documented() -> None:
    doc = (REPO / "docs" / "embedding.md").read_text(encoding="utf-8")
    for name in api.__all__:
        assert hasattr(api, name), name
        assert f"`{name}" in doc, f"docs/embedding.md does not document {name}"
    for name in api.__all__:
        obj = getattr(api, name)
        if isinstance(obj, type) and issubclass(obj, ProfilecError):
            assert f"{name}` | {obj.exit_code}" in doc, name  # the exit-class table


def test_session_config_as_data_equals_the_file(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    f = tmp_path / "session.json"
    f.write_text(json.dumps(AGENT), encoding="utf-8")
    common: dict[str, Any] = {
        "workspace_roots": [str(lay.workspace)],
        "codex_home": str(lay.codex_home),
    }
    from_file = api.load_and_compile(str(lay.manifest), session_config_path=str(f), **common)
    for data in (AGENT, json.dumps(AGENT), json.dumps(AGENT).encode()):
        b = api.load_and_compile(str(lay.manifest), session_config=data, **common)
        assert b.session_config == from_file.session_config == {"model": "gpt-test"}
        assert api.render(b, "toml") == api.render(from_file, "toml")
        assert set(b.stripped_session_keys) == {"sandbox_mode", "mcp_servers"}
    with pytest.raises(api.UsageError, match="path or as data"):
        api.make_inputs(str(lay.manifest), session_config_path=str(f), session_config=AGENT)
    with pytest.raises(api.InputError, match="not valid JSON") as bad:
        api.load_and_compile(str(lay.manifest), session_config="{", **common)
    assert bad.value.exit_code == 2 and "<session config data>" in str(bad.value)
    with pytest.raises(api.InputError, match="not JSON data"):
        api.load_and_compile(str(lay.manifest), session_config={"a": object()}, **common)
    with pytest.raises(api.UsageError):
        api.load_and_compile(str(lay.manifest), session_config=3, **common)  # type: ignore[arg-type]


def test_render_launch_lock_and_typed_errors(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    inp = api.make_inputs(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    bundle = api.compile_inputs(inp)
    lines = api.override_lines(bundle)
    assert api.render(bundle, "overrides") == "".join(x + "\n" for x in lines)
    with pytest.raises(api.UsageError, match="unknown format"):
        api.render(bundle, "yaml")
    doc = api.launch_document(bundle, inputs=inp)
    assert doc["watch"]["argv"][1:9] == [
        "-P",
        "-m",
        "profilec",
        "watch",
        "--requirements",
        "/etc/codex/requirements.toml",
        "--roots",
        str(lay.manifest),
    ]
    out = tmp_path / "home-out"
    assert api.write_codex_home(bundle, str(out)) == str(out / "config.toml")
    lock = lay.base / "profilec.lock"
    digest = api.write_lock(str(lock), inp)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    assert (
        api.verify_lock(
            str(lock),
            api.make_inputs(
                str(lay.manifest),
                workspace_roots=[str(lay.workspace)],
                codex_home=str(lay.codex_home),
            ),
        )
        is None
    )
    drift = api.verify_lock(
        str(lock),
        api.make_inputs(
            str(lay.manifest),
            workspace_roots=[str(lay.workspace)],
            codex_home=str(lay.codex_home),
            session_config={"model": "other"},
        ),
    )
    assert drift is not None and isinstance(drift.error, api.LockDriftError)
    assert drift.error.exit_code == 9 and drift.report
    with pytest.raises(api.TrustError) as trust:
        os.chmod(lay.manifest, 0o666)
        api.load_and_compile(str(lay.manifest), codex_home=str(lay.codex_home))
    assert trust.value.exit_code == 3 and "\n" not in str(trust.value)


def test_start_watch_reports_a_retargeted_link_and_stops(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    bundle = api.load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    seen = threading.Event()
    found: list[dict[str, object]] = []

    def on_drift(d: object) -> None:
        found.append(d.document())  # type: ignore[attr-defined]
        seen.set()

    handle = api.start_watch(bundle, on_drift, interval=0.05)
    assert handle.watched > 0 and handle.drift is None
    link = lay.codex_home / "auth.json"
    link.unlink()
    link.symlink_to(lay.base / "elsewhere.json")
    assert seen.wait(10), "no drift reported"
    assert found[0]["kind"] in ("link-retargeted", "link-replaced")
    assert found[0]["exit_code"] == 9 and handle.drift is not None
    handle.stop()
    assert not handle.thread.is_alive()
    # A chain that already differs when watching starts: a typed error at once.
    with pytest.raises(api.LockDriftError):
        api.start_watch(bundle, on_drift)
    link.unlink()
    link.symlink_to(lay.host_target)
    other = api.load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    quiet = api.start_watch(other, on_drift, interval=0.05)
    quiet.stop()
    assert not quiet.thread.is_alive() and quiet.drift is None
    with pytest.raises(api.UsageError):
        api.start_watch(other, on_drift, interval=5)


def test_the_api_installs_verifies_and_watches_the_requirements(tmp_path: Path) -> None:
    """`install_requirements` / `verify_requirements` are `profilec requirements install` /
    `verify` as calls (a file under tmp_path: never the host's /etc/codex), and `start_watch`
    with `requirements` refuses a less strict file at the start and reports an edit."""
    lay = make_layout(tmp_path / "l")
    opts: api.InputOptions = {
        "workspace_roots": [str(lay.workspace)],
        "codex_home": str(lay.codex_home),
    }
    inputs = api.make_inputs(str(lay.manifest), **opts)
    path = tmp_path / "etc-codex" / "requirements.toml"
    assert api.verify_requirements(inputs, path) == ["no managed requirements file"]
    assert api.install_requirements(inputs, path) is True
    assert api.install_requirements(inputs, path) is False  # already current
    assert api.verify_requirements(inputs, path) == []
    assert f'# compiled from manifest "{lay.manifest}"' in path.read_text().split("\n")[1]
    # Another daemon's manifest: refused, nothing written (exit 6).
    other = make_layout(tmp_path / "o")
    before = path.read_text()
    with pytest.raises(api.OutputError) as err:
        api.install_requirements(api.make_inputs(str(other.manifest)), path)
    assert err.value.exit_code == 6 and "another manifest" in str(err.value)
    assert path.read_text() == before
    with pytest.raises(api.UsageError):
        api.verify_requirements(inputs, "relative/requirements.toml")
    # The in-process watch watches the file: an edit is drift.
    bundle = api.compile_inputs(inputs)
    seen = threading.Event()
    found: list[dict[str, object]] = []

    def on_drift(d: object) -> None:
        found.append(d.document())  # type: ignore[attr-defined]
        seen.set()

    handle = api.start_watch(bundle, on_drift, interval=0.05, requirements=path)
    quiet = api.start_watch(bundle, on_drift, interval=0.05)  # control: without requirements
    quiet.stop()
    assert handle.watched == quiet.watched + 1  # the requirements file is the one more path
    path.write_text(before + "\n# edited\n")
    assert seen.wait(10), "no drift reported"
    assert (found[0]["role"], found[0]["path"]) == ("requirements", str(path)), found[0]
    handle.stop()
    # A less strict file when watching starts: a typed error at once.
    path.write_text(before.replace("[mcp_servers]", "[permissions.extra]\n\n[mcp_servers]"))
    with pytest.raises(api.LockDriftError) as stale:
        api.start_watch(bundle, on_drift, requirements=path)
    assert "[permissions.extra] defines a permission profile" in str(stale.value)


def test_launch_document_is_what_compile_format_launch_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from profilec.cli import main

    lay = make_layout(tmp_path / "l")
    tmp = tmp_path / "t"
    tmp.mkdir()
    session = tmp_path / "session.json"
    session.write_text(json.dumps(AGENT), encoding="utf-8")
    flags = [
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
        "--tmpdir",
        str(tmp),
        *(["--run-as", "0"] if os.geteuid() == 0 else []),
    ]
    assert main(["compile", *flags, "--session-config", str(session), "--format", "launch"]) == 0
    cli = json.loads(capsys.readouterr().out)
    inp = api.make_inputs(
        str(lay.manifest),
        workspace_roots=[str(lay.workspace)],
        codex_home=str(lay.codex_home),
        tmpdir=str(tmp),
        session_config=AGENT,
        run_as=0 if os.geteuid() == 0 else None,
    )
    assert api.launch_document(api.compile_inputs(inp), inputs=inp) == cli
