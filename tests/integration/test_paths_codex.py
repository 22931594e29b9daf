"""Against the real pinned Codex: the whole path is protected (issue 13), with negative controls.

* Ancestors: a model command tries to rename a directory above the credential (and plant a file
  at the old path); with profilec's pins it fails in every mode, and the next command cannot
  read the credential under a new name. Control: the same bundle without the pins (today's
  holder-only entries) lets the rename through, the next command reads the marker, and the
  trusted side reads the planted file.
* Canonical cwd: the launch document's cwd keeps a deny under the workspace; the same profile
  run with the cwd spelled through a symlink (control) drops it.
* Trusted base: in agent-full-access a directory from the manifest's [trusted_base] is not
  writable and a fake container-engine socket (a listener this test binds; never the real
  docker.sock) cannot be connected to. Control: the same bundle without the trusted base.
* Literal names: the measured escape rule masks exactly the named file; an unescaped name
  masks a different one (control).

Scratch trees live under /var/tmp: Codex refuses a CODEX_HOME under the system temp dir.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from profilec.api import load_and_compile
from profilec.emit.launch import render_launch
from profilec.emit.overrides import override_lines
from profilec.emit.tomltext import string
from profilec.models.compiled import CompiledBundle, CompiledProfile
from tests.helpers import marker, write_manifest

pytestmark = pytest.mark.codex

MODES = ["read-only", "agent", "agent-full-access"]


@pytest.fixture
def base() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="profilec-paths-", dir="/var/tmp"))
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        for extra in (d, Path(str(d) + ".moved")):
            shutil.rmtree(extra, ignore_errors=True)


def _run(codex: Path, lines: list[str], pid: str, cwd: str, home: Path, script: str) -> str:
    args = [str(codex), "sandbox"]
    for line in lines:
        args += ["-c", line]
    args += ["-P", pid, "-C", cwd, "--", "/bin/sh", "-c", script]
    env = {
        "PATH": "/usr/bin:/bin",
        "CODEX_HOME": str(home),
        "HOME": str(home.parent),
        "TMPDIR": str(home.parent / "tmpdir"),
    }
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    return proc.stdout + proc.stderr


def _layout(base: Path, *, trusted: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The credential under the workspace (so agent mode can write above it), CODEX_HOME
    beside it: ws/data/host/auth.json <- ch/auth.json."""
    ws = base / "ws"
    host = ws / "data" / "host"
    host.mkdir(parents=True)
    (base / "tmpdir").mkdir()
    mark = marker()
    target = host / "auth.json"
    target.write_text(f'{{"OPENAI_API_KEY": "{mark}"}}\n')
    os.chmod(target, 0o600)
    ch = base / "ch"
    ch.mkdir()
    (ch / "auth.json").symlink_to(target)
    (ch / "config.toml").write_text("# private\n")
    (ch / "auth.lock").write_text("")  # the writer's lock, as `--format codex-home` creates it
    manifest = write_manifest(
        base / "roots.toml", [{"id": "codex-auth", "path": str(ch / "auth.json")}]
    )
    if trusted is not None:
        body = manifest.read_text() + "\n[trusted_base]\n"
        for k, v in trusted.items():
            body += f"{k} = [{', '.join(string(x) for x in v)}]\n"
        manifest.write_text(body)
        os.chmod(manifest, 0o600)
    return {
        "ws": ws,
        "host": host,
        "target": target,
        "ch": ch,
        "marker": mark,
        "manifest": manifest,
    }


def _compile(lay: dict[str, Any], ws: str | None = None) -> CompiledBundle:
    return load_and_compile(
        str(lay["manifest"]), workspace_roots=[ws or str(lay["ws"])], codex_home=str(lay["ch"])
    )


def _strip(bundle: CompiledBundle, reason: str) -> CompiledBundle:
    profiles = tuple(
        p.model_copy(
            update={
                "entries": tuple(
                    e for e in p.entries if all(x.reason != reason for x in e.provenance)
                )
            }
        )
        for p in bundle.profiles
    )
    return bundle.model_copy(update={"profiles": profiles})


def _rename_attack(
    codex: Path, bundle: CompiledBundle, lay: dict[str, Any], mode: str, anc: Path
) -> tuple[str, str, str]:
    """Rename `anc`, plant at the old path; then read under the new name; then what the
    trusted side reads through the link. Returns the three outputs."""
    pid = bundle.profile_for(mode).profile_id
    lines = override_lines(bundle)
    moved = Path(str(anc) + ".moved")
    new_target = Path(str(lay["target"]).replace(str(anc), str(moved), 1))
    cwd = str(lay["ws"])
    first = _run(
        codex,
        lines,
        pid,
        cwd,
        lay["ch"],
        f"mv '{anc}' '{moved}' && echo MV_OK && mkdir -p '{lay['host']}' && "
        f"echo PROFILEC-PLANTED > '{lay['target']}'",
    )
    if not lay["ws"].is_dir():
        cwd = str(lay["ch"])  # the workspace moved away with the ancestor
    second = _run(codex, lines, pid, cwd, lay["ch"], f"cat '{new_target}'")
    try:
        trusted = (lay["ch"] / "auth.json").read_text()
    except OSError as exc:
        trusted = f"unreadable: {exc.strerror}"
    return first, second, trusted


@pytest.mark.parametrize("mode", MODES)
def test_ancestor_rename_is_refused_in_every_mode(codex_bin: Path, base: Path, mode: str) -> None:
    lay = _layout(base)
    bundle = _compile(lay)
    anc = lay["ws"] / "data" if mode == "agent" else base
    first, second, trusted = _rename_attack(codex_bin, bundle, lay, mode, anc)
    assert "MV_OK" not in first, first
    expected = {"agent-full-access": "Device or resource busy"}.get(mode, "")
    assert expected in first, first
    assert lay["marker"] not in second
    assert lay["marker"] in trusted and "PLANTED" not in trusted


@pytest.mark.parametrize("mode", ["agent", "agent-full-access"])
def test_control_holder_only_entries_let_the_rename_through(
    codex_bin: Path, base: Path, mode: str
) -> None:
    lay = _layout(base)
    bundle = _strip(_compile(lay), "ancestor")
    anc = lay["ws"] / "data"  # (renaming `base` would carry CODEX_HOME away too)
    first, second, trusted = _rename_attack(codex_bin, bundle, lay, mode, anc)
    assert "MV_OK" in first, first  # tamper
    assert lay["marker"] in second, second  # leak: the credential under its new name
    assert "PROFILEC-PLANTED" in trusted  # the trusted side now reads the planted file


@pytest.mark.parametrize("mode", ["agent", "agent-full-access"])
def test_launch_cwd_is_canonical_and_a_symlinked_cwd_drops_the_deny(
    codex_bin: Path, base: Path, mode: str
) -> None:
    lay = _layout(base)
    link = base / "ws-link"
    link.symlink_to(lay["ws"])
    bundle = _compile(lay, ws=str(link))
    doc = json.loads(render_launch(bundle))
    assert doc["cwd"] == str(lay["ws"])
    pid = bundle.profile_for(mode).profile_id
    lines = override_lines(bundle)
    held = _run(codex_bin, lines, pid, doc["cwd"], lay["ch"], f"cat '{lay['target']}'")
    assert lay["marker"] not in held, held
    # The compiled profile names the canonical root, so even a launcher that passes the
    # symlinked spelling as cwd keeps the deny (measured).
    also = _run(codex_bin, lines, pid, str(link), lay["ch"], f"cat '{lay['target']}'")
    assert lay["marker"] not in also, also
    # Control, the old behaviour: workspace roots (and the workspace root's `write` entry)
    # emitted as spelled (through the symlink), that spelling as cwd, and no pins: Codex drops
    # every deny under the real location. (A canonical pin above the deny alone restores it:
    # measured, docs/paths.md.)
    unpinned = _strip(bundle, "ancestor")
    real = str(lay["ws"])

    def as_spelled(p: CompiledProfile) -> CompiledProfile:
        entries = tuple(
            e.model_copy(update={"path": str(link)}) if e.path == real else e for e in p.entries
        )
        return p.model_copy(update={"workspace_roots": (str(link),), "entries": entries})

    old = unpinned.model_copy(update={"profiles": tuple(as_spelled(p) for p in unpinned.profiles)})
    assert any(e.path == str(link) for e in old.profile_for(mode).entries)
    lost = _run(codex_bin, override_lines(old), pid, str(link), lay["ch"], f"cat '{lay['target']}'")
    assert lay["marker"] in lost, lost


@pytest.fixture
def engine_socket(base: Path) -> Iterator[Path]:
    """A fake container-engine listener (answers with a fixed line); never the real one."""
    path = base / "run" / "engine.sock"
    path.parent.mkdir()
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(path))
    srv.listen(8)
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.sendall(b"FAKE-ENGINE-HELLO\n")
            conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield path
    finally:
        stop.set()
        t.join(2)
        srv.close()


def test_full_access_cannot_write_the_trusted_base_or_reach_an_engine_socket(
    codex_bin: Path, base: Path, engine_socket: Path, request: pytest.FixtureRequest
) -> None:
    launcher = base / "launcher-bin"
    launcher.mkdir()
    # beside `base`, which holds the workspace root (read-only in every mode: issue 40)
    free = Path(tempfile.mkdtemp(prefix="profilec-paths-free-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(free, ignore_errors=True))
    lay = _layout(base, trusted={"read_only": [str(launcher)], "deny": [str(engine_socket)]})
    bundle = _compile(lay)
    connect = (
        '/usr/bin/python3 -c "import socket; s=socket.socket(socket.AF_UNIX); '
        f"s.connect('{engine_socket}'); print(s.recv(64).decode())\""
    )
    script = (
        f"touch '{launcher}/planted' && echo LAUNCHER_WRITE_OK; {connect}; "
        "touch /etc/profilec-canary-w && echo ETC_WRITE_OK; "
        f"echo x > '{free}/free.txt' && echo FREE_WRITE_OK"
    )
    mode = "agent-full-access"
    out = _run(
        codex_bin,
        override_lines(bundle),
        bundle.profile_for(mode).profile_id,
        str(lay["ws"]),
        lay["ch"],
        script,
    )
    assert "FREE_WRITE_OK" in out, out  # full access still writes everywhere else
    assert "LAUNCHER_WRITE_OK" not in out and "ETC_WRITE_OK" not in out, out
    assert "FAKE-ENGINE-HELLO" not in out and "Permission denied" in out, out
    for m in ("read-only", "agent"):
        out = _run(
            codex_bin,
            override_lines(bundle),
            bundle.profile_for(m).profile_id,
            str(lay["ws"]),
            lay["ch"],
            connect,
        )
        assert "FAKE-ENGINE-HELLO" not in out, (m, out)
    # Control: the same bundle without its trusted-base entries (the launcher dir only; the
    # control never writes /etc).
    plain = _strip(bundle, "trusted-base")
    out = _run(
        codex_bin,
        override_lines(plain),
        plain.profile_for(mode).profile_id,
        str(lay["ws"]),
        lay["ch"],
        f"touch '{launcher}/planted' && echo LAUNCHER_WRITE_OK; {connect}",
    )
    assert "LAUNCHER_WRITE_OK" in out and "FAKE-ENGINE-HELLO" in out, out


def _escape(name: str) -> str:
    """The escape measured on 0.171.0: in a key holding * ? [ ], backslash-escape each of
    backslash * ? [ ] { }; a key without them is literal as written."""
    if not any(c in name for c in "*?[]"):
        return name
    return "".join("\\" + c if c in "\\*?[]{}" else c for c in name)


@pytest.mark.parametrize(
    ("name", "decoy"),
    [
        ("auth\\*.json", "auth*.json"),
        ("a[1].json", "a1.json"),
        ("x?y", "xzy"),
        ("{a,b}*", "a*"),
        ("sp ace[1]", "sp ace1"),
        ("{a,b}", "a"),
        ("a\\b", "ab"),
        ("sp ace.json", "sp"),
    ],
)
def test_measured_escape_masks_exactly_the_named_file(
    codex_bin: Path, base: Path, name: str, decoy: str
) -> None:
    sec = base / "sec"
    sec.mkdir()
    for n in (name, decoy):
        (sec / n).write_text(f"MARK:{n}\n")
    (base / "ch").mkdir()
    (base / "tmpdir").mkdir()
    key = str(sec) + "/" + _escape(name)
    prof = '{extends=":read-only", filesystem={' + string(key) + '="deny"}}'
    lines = ['default_permissions="p"', "permissions.p=" + prof]
    script = f"cat -- '{sec}/{name}'; cat -- '{sec}/{decoy}'"
    out = _run(codex_bin, lines, "p", str(base), base / "ch", script)
    assert f"MARK:{name}\n" not in out, out
    assert f"MARK:{decoy}\n" in out, out
    if _escape(name) != name:
        # Control: the name written verbatim is read as a pattern and misses the file.
        lines[1] = (
            'permissions.p={extends=":read-only", filesystem={'
            + string(str(sec / name))
            + '="deny"}}'
        )
        out = _run(codex_bin, lines, "p", str(base), base / "ch", f"cat -- '{sec}/{name}'")
        if name not in ("x?y",):  # `?` matches itself: the verbatim key masks it (and more)
            assert f"MARK:{name}\n" in out, out


@pytest.mark.parametrize("ch", ["*", "?", "[", "]", "{", "}", "\\", " "])
def test_glob_characters_in_file_names_stay_hidden_in_every_mode(
    codex_bin: Path, base: Path, ch: str
) -> None:
    """A target and a link whose names hold `ch` (in the middle, at the start, at the end):
    the vault deny covers them, no compiled key holds a glob character, every mode hides them."""
    lay = _layout(base)
    names = [f"a{ch}b.json", f"{ch}lead", f"trail{ch}"]
    host: Path = lay["host"]
    for i, n in enumerate(names):
        (host / n).write_text(f"MARK-{i}-{lay['marker']}\n")
        (lay["ch"] / f"l{i}{n}").symlink_to(host / n)
    roots: list[dict[str, object]] = [
        {"id": f"r{i}", "path": str(lay["ch"] / f"l{i}{n}")} for i, n in enumerate(names)
    ]
    manifest = write_manifest(base / "roots2.toml", roots)
    bundle = load_and_compile(
        str(manifest), workspace_roots=[str(lay["ws"])], codex_home=str(lay["ch"])
    )
    for prof in bundle.profiles:
        for key in prof.codex_table()["filesystem"]:
            assert not any(c in key for c in "*?[]"), key
    reads = "; ".join(
        f"cat -- '{p}'" for i, n in enumerate(names) for p in (host / n, lay["ch"] / f"l{i}{n}")
    )
    for mode in MODES:
        out = _run(
            codex_bin,
            override_lines(bundle),
            bundle.profile_for(mode).profile_id,
            str(lay["ws"]),
            lay["ch"],
            reads + f"; cat '{lay['ch']}/config.toml'",
        )
        assert lay["marker"] not in out, (mode, out)
        assert "# private" in out, (mode, out)  # control: the sandbox ran and read something
