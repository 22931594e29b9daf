"""Against the real pinned Codex: the emitted overrides deny the link and target in every mode.

For each ACP mode, `codex sandbox -P <id>` with profilec's `-c` lines runs `cat` on the private
CODEX_HOME/auth.json link, on every hop spelling and on the target (the marker must be absent),
a control `cat` of an unprotected file (must print it: a sandbox that fails to start cannot
pass), and the mode's semantics: agent writes the workspace, read-only cannot; full access
writes outside the workspace and /dev/null works. Tampering with the link, the target's
directory and the private config must fail in every mode. A session cwd outside the workspace
(CODEX_HOME, the vault's parent) is never writable, with a :workspace control that leaks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.e2e.roads import as_workspace
from profilec.emit.overrides import override_lines
from profilec.models.compiled import CompiledBundle
from tests.helpers import make_layout

pytestmark = pytest.mark.codex


def _sandbox(codex: Path, lines: list[str], pid: str, cwd: Path, home: Path, script: str) -> str:
    args = [str(codex), "sandbox"]
    for line in lines:
        args += ["-c", line]
    args += ["-P", pid, "-C", str(cwd), "--", "/bin/sh", "-c", script]
    env = {
        "PATH": "/usr/bin:/bin",
        "CODEX_HOME": str(home),
        "HOME": str(home.parent),
        "TMPDIR": str(home.parent / "tmpdir"),
    }
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("mode", ["read-only", "agent", "agent-full-access"])
def test_emitted_overrides_deny_link_hops_and_target(
    tmp_path: Path, codex_bin: Path, mode: str
) -> None:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    (tmp_path / "l" / "tmpdir").mkdir()
    config = lay.codex_home / "config.toml"
    config.write_text("# private config\n")
    # Outside every workspace, temp dir and holder dir (not under /tmp, which agent may write).
    outside = Path(tempfile.mkdtemp(prefix="profilec-outside-", dir="/var/tmp"))
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    lines = override_lines(bundle)
    pid = bundle.profile_for(mode).profile_id
    hop = tmp_path / "l" / "hostlink" / "auth.json"
    before = (os.readlink(lay.link), lay.host_target.read_bytes())
    script = "; ".join(
        [
            f"cat {lay.link}",
            f"cat {hop}",
            f"cat {lay.host_target}",
            f"echo CONTROL=$(cat {lay.control})",
            f"echo w > {lay.workspace}/w.txt && echo WS_WRITE_OK",
            f"echo o > {outside}/o.txt && echo OUT_WRITE_OK",
            "echo n > /dev/null && echo DEVNULL_OK",
            f"ln -sfn {lay.control} {lay.link} && echo RELINK_OK",
            f"mv {lay.host_target.parent} {tmp_path}/l/moved && echo MOVE_OK",
            f"echo 'x=1' >> {config} && echo CONFIG_OK",
            f"cat {lay.link}",
        ]
    )
    try:
        out = _sandbox(codex_bin, lines, pid, lay.workspace, lay.codex_home, script)
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    assert lay.marker not in out, out
    assert "CONTROL=control-ok" in out, out
    assert "DEVNULL_OK" in out, out
    assert ("WS_WRITE_OK" in out) == (mode != "read-only"), out
    assert ("OUT_WRITE_OK" in out) == (mode == "agent-full-access"), out
    for tamper in ("RELINK_OK", "MOVE_OK", "CONFIG_OK"):
        assert tamper not in out, (tamper, out)
    assert (os.readlink(lay.link), lay.host_target.read_bytes()) == before
    assert config.read_text() == "# private config\n"


def test_builtin_workspace_leaks_so_the_test_can_fail(tmp_path: Path, codex_bin: Path) -> None:
    """The same probe under Codex's own :workspace prints the marker: the check is live."""
    lay = make_layout(tmp_path / "l")
    (tmp_path / "l" / "tmpdir").mkdir()
    out = _sandbox(codex_bin, [], ":workspace", lay.workspace, lay.codex_home, f"cat {lay.link}")
    assert lay.marker in out


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "control-workspace"])
@pytest.mark.parametrize("where", ["codex-home", "vault-parent"])
@pytest.mark.parametrize("mode", ["agent", "agent-full-access"])
def test_a_session_cwd_outside_the_workspace_is_not_writable(
    codex_bin: Path, mode: str, where: str, compiled: bool
) -> None:
    """The client picks the session cwd. With it at CODEX_HOME or at the directory holding the
    vault, the compiled writing modes (:read-only plus explicit writes) keep it read-only and
    the credential unreadable, and the workspace stays writable. The control, the same bundle
    under :workspace as profilec emitted it before, must leak first: its cwd is writable.

    The layout lies under /var/tmp, outside /tmp, which agent writes anyway. The vault's parent
    also holds a hop link, so it carries a `read` entry in both modes (full access writes every
    other directory of the host, by design): the cwd's write beats exactly that entry."""
    base = Path(tempfile.mkdtemp(prefix="profilec-cwd-", dir="/var/tmp"))
    try:
        lay = make_layout(base / "l", hop_dir=True)
        (base / "l" / "tmpdir").mkdir()
        bundle = load_and_compile(
            str(lay.manifest),
            workspace_roots=[str(lay.workspace)],
            codex_home=str(lay.codex_home),
        )
        if not compiled:
            bundle = as_workspace(bundle, mode)
        assert (bundle.profile_for(mode).extends == ":read-only") == compiled
        vault = lay.host_target.parent
        cwd = lay.codex_home if where == "codex-home" else vault.parent
        tag = os.urandom(6).hex()
        script = "; ".join(
            [
                f"touch ./cwd-{tag} && echo CWD_WRITE_OK",
                f"cat {lay.host_target}",
                f"cat ./{vault.name}/{lay.host_target.name}",
                f"cat {lay.link}",
                f"echo CONTROL=$(cat {lay.control})",
                f"echo w > {lay.workspace}/w.txt && echo WS_WRITE_OK",
            ]
        )
        pid = bundle.profile_for(mode).profile_id
        out = _sandbox(codex_bin, override_lines(bundle), pid, cwd, lay.codex_home, script)
        created = (cwd / f"cwd-{tag}").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert "CONTROL=control-ok" in out, out  # the sandbox started
    assert "WS_WRITE_OK" in out, out
    if compiled:
        assert "CWD_WRITE_OK" not in out and not created, out
        assert "Read-only file system" in out, out
        assert lay.marker not in out, out
    else:
        assert "CWD_WRITE_OK" in out and created, out  # the control leaks


def _without_root_split(bundle: CompiledBundle, mode: str) -> CompiledBundle:
    """Yesterday's full access: the same bundle with `:root` = write left as the policy says."""
    profiles = tuple(
        p.model_copy(
            update={
                "entries": tuple(
                    e for e in p.entries if not any(v.reason == "root-split" for v in e.provenance)
                )
            }
        )
        if p.mode == mode
        else p
        for p in bundle.profiles
    )
    return bundle.model_copy(update={"profiles": profiles})


@pytest.mark.parametrize("split", [True, False], ids=["compiled", "control-root-write"])
def test_full_access_cannot_replace_a_top_level_name(
    tmp_path: Path, codex_bin: Path, split: bool
) -> None:
    """A top-level symlink (like /lib64 -> usr/lib64 on a merged-/usr host) stays in place in
    full access. The probe plants its own harmless link in / (never the real /lib64) and tries
    to re-point it and to create a new top-level name; as root only, since for another uid `/`
    is not writable anyway. The control (`:root` = write, yesterday's output) must succeed."""
    if os.getuid() != 0:
        pytest.skip("needs uid 0: for any other user / is read-only by its mode bits already")
    lay = make_layout(tmp_path / "l")
    (tmp_path / "l" / "tmpdir").mkdir()
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    if not split:
        bundle = _without_root_split(bundle, "agent-full-access")
    pid = bundle.profile_for("agent-full-access").profile_id
    tag = os.urandom(6).hex()
    link, new = f"/profilec-probe-{tag}", f"/profilec-probe-{tag}-new"
    os.symlink("usr/lib", link)
    outside = Path(tempfile.mkdtemp(prefix="profilec-outside-", dir="/var/tmp"))
    script = "; ".join(
        [
            f"ln -sfn /tmp {link} && echo RELINK_TOP_OK",
            f"touch {new} && echo NEW_TOP_OK",
            f"echo o > {outside}/o.txt && echo OUT_WRITE_OK",
            "echo n > /dev/null && echo DEVNULL_OK",
            f"echo w > {lay.workspace}/w.txt && echo WS_WRITE_OK",
            f"cat {lay.link}",
        ]
    )
    try:
        out = _sandbox(
            codex_bin, override_lines(bundle), pid, lay.workspace, lay.codex_home, script
        )
        after = os.readlink(link)
    finally:
        os.unlink(link)
        if os.path.lexists(new):
            os.unlink(new)
        shutil.rmtree(outside, ignore_errors=True)
    assert lay.marker not in out, out
    for ok in ("OUT_WRITE_OK", "DEVNULL_OK", "WS_WRITE_OK"):
        assert ok in out, (ok, out)  # full access still writes outside the workspace
    if split:
        assert "RELINK_TOP_OK" not in out and "NEW_TOP_OK" not in out, out
        assert "Read-only file system" in out, out
        assert after == "usr/lib"
    else:
        assert "RELINK_TOP_OK" in out and "NEW_TOP_OK" in out, out
        assert after == "/tmp"


@pytest.mark.parametrize("covered", [True, False], ids=["compiled", "control-entry-removed"])
def test_a_socket_only_root_can_reach_is_denied_at_its_closed_directory(
    tmp_path: Path, codex_bin: Path, covered: bool
) -> None:
    """Like /run/docker/containerd/containerd.sock under the 0700 /run/docker: a sandbox run as
    root connects to it unless the closed directory is denied (measured: the control connects).
    """
    if os.getuid() != 0:
        pytest.skip("needs uid 0: for any other user the closed directory already stops it")
    import socket

    from profilec.policy import default_profiles_dir

    closed = Path(tempfile.mkdtemp(prefix="profilec-closed-", dir="/var/tmp"))
    os.chmod(closed, 0o700)
    (closed / "engine").mkdir()
    sock_path = closed / "engine" / "engine.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(sock_path))
    listener.listen(4)
    pdir = tmp_path / "profiles"
    shutil.copytree(default_profiles_dir(), pdir)
    tb = pdir / "trusted-base.toml"
    tb.write_text(tb.read_text().replace("deny = [\n", f'deny = [\n  "{sock_path}",\n'))
    try:
        lay = make_layout(tmp_path / "l")
        (tmp_path / "l" / "tmpdir").mkdir()
        bundle = load_and_compile(
            str(lay.manifest),
            workspace_roots=[str(lay.workspace)],
            codex_home=str(lay.codex_home),
            profiles_dir=str(pdir),
        )
        full = bundle.profile_for("agent-full-access")
        assert dict((e.path, e.access) for e in full.entries)[str(closed)] == "deny"
        if not covered:
            kept = tuple(e for e in full.entries if e.path != str(closed))
            bundle = bundle.model_copy(
                update={
                    "profiles": tuple(
                        p.model_copy(update={"entries": kept}) if p is full else p
                        for p in bundle.profiles
                    )
                }
            )
        probe = (
            "import socket; s = socket.socket(socket.AF_UNIX)\n"
            f"try:\n    s.connect({str(sock_path)!r}); print('CONNECTED')\n"
            "except OSError as e:\n    print('REFUSED', e)\n"
        )
        script = f'/usr/bin/python3 -c "{probe}"; echo w > {lay.workspace}/w && echo WS_OK'
        out = _sandbox(
            codex_bin,
            override_lines(bundle),
            full.profile_id,
            lay.workspace,
            lay.codex_home,
            script,
        )
    finally:
        listener.close()
        shutil.rmtree(closed, ignore_errors=True)
    assert "WS_OK" in out, out
    assert ("CONNECTED" in out) == (not covered), out
