"""Real Codex saves inside the rendered outer plan (real bwrap), and the inner sandbox in it.

Inside `profilec plan --format bwrap` (vault directory bound read-write, trusted parent as uid
65534): `codex login --with-api-key` and a real token refresh (`codex app-server`
`account/read {"refreshToken": true}` against a loopback token endpoint) both persist through
the CODEX_HOME link, and `codex sandbox` under the compiled profile runs and cannot read the
credential. Negative controls: the old single-file bind makes both saves fail (`Read-only file
system`), and as root inside the plan the inner bwrap cannot start (`setting up uid map`).
Fake keys and random markers only. CODEX_HOME sits under /var/tmp: Codex refuses to create its
helper under the system temp dir. One more layout puts it under /tmp: the plan then moves TMPDIR
into the state dir and the inner sandbox runs a command (with TMPDIR=/tmp nothing runs:
`bwrap: execvp codex-linux-sandbox`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from profilec.cli import main
from profilec.models.mounts import PlanLayout
from profilec.mounts.layout import layout_toml
from tests.helpers import make_layout, marker
from tests.integration.conftest import missing
from tests.integration.refresh_driver import seed_chatgpt_auth

pytestmark = [pytest.mark.bwrap, pytest.mark.codex]

HERE = Path(__file__).resolve().parent


@dataclass
class Planned:
    base: Path
    home: Path
    vault: Path
    target: Path
    link: Path
    ws: Path
    argv: list[str]
    codex: str
    overrides: list[str]
    mark: str


@pytest.fixture
def planned(codex_bin: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[Planned]:
    yield from _planned(codex_bin, capsys, "/var/tmp")


@pytest.fixture
def planned_under_tmp(codex_bin: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[Planned]:
    """The same layout under /tmp: CODEX_HOME (agent_home) lies under the temp dir."""
    yield from _planned(codex_bin, capsys, "/tmp")


def _planned(codex_bin: Path, capsys: pytest.CaptureFixture[str], parent: str) -> Iterator[Planned]:
    if shutil.which("bwrap") is None:
        missing("bwrap is not installed (apt-get install -y bubblewrap; see .ci/tools.sh)")
    base = Path(tempfile.mkdtemp(dir=parent, prefix="profilec-vault-"))
    try:
        os.chmod(base, 0o755)
        lay = make_layout(base / "l", relative_link=True)
        daemon = lay.base / "daemon"
        daemon.mkdir()
        codex_dir = str(codex_bin.resolve().parent)
        layout = PlanLayout.model_validate(
            {
                "schema_version": 1,
                "daemon_root": str(daemon),
                "agent_home": str(lay.codex_home),
                "workspace_roots": [str(lay.workspace)],
                "state_dir": str(daemon / "state" / "c1"),
                "backends": ["codex"],
                "readonly_paths": ["/bin", "/etc", "/lib", "/lib64", "/sbin", "/usr", codex_dir],
                "env": {"PATH": "/usr/bin:/bin"},
            },
            strict=False,
        )
        layout_file = lay.base / "layout.toml"
        layout_file.write_text(layout_toml(layout), encoding="utf-8")
        os.chmod(layout_file, 0o600)
        out = lay.base / "plan.bwrap.json"
        assert (
            main(
                [
                    "plan",
                    "--roots",
                    str(lay.manifest),
                    "--layout",
                    str(layout_file),
                    "--format",
                    "bwrap",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        plan_json = lay.base / "plan.json"
        assert (
            main(
                [
                    "plan",
                    "--roots",
                    str(lay.manifest),
                    "--layout",
                    str(layout_file),
                    "--format",
                    "json",
                    "--out",
                    str(plan_json),
                ]
            )
            == 0
        )
        # The launcher creates the plan's directories (bwrap: owned by the launcher's uid,
        # which the plan's user namespace maps run_as to).
        for d in json.loads(plan_json.read_text(encoding="utf-8"))["directories"]:
            os.makedirs(d["path"], mode=int(d["mode"], 8), exist_ok=True)
        argv = json.loads(out.read_text(encoding="utf-8"))["argv"]
        tmpdir = argv[argv.index("TMPDIR") + 1]
        extra = [] if tmpdir == "/tmp" else ["--tmpdir", tmpdir]  # as plan's warning says
        capsys.readouterr()
        assert (
            main(
                [
                    "compile",
                    "--roots",
                    str(lay.manifest),
                    "--workspace-root",
                    str(lay.workspace),
                    "--codex-home",
                    str(lay.codex_home),
                    *extra,
                    "--format",
                    "overrides",
                ]
            )
            == 0
        )
        overrides = [x for x in capsys.readouterr().out.split("\n") if x]
        shutil.copy(HERE / "refresh_driver.py", lay.workspace / "refresh_driver.py")
        yield Planned(
            base=lay.base,
            home=lay.codex_home,
            vault=lay.host_target.parent,
            target=lay.host_target,
            link=lay.link,
            ws=lay.workspace,
            argv=argv,
            codex=str(codex_bin.resolve()),
            overrides=overrides,
            mark=lay.marker,
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run(argv: list[str], *cmd: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*argv, *cmd], input=stdin, capture_output=True, text=True, timeout=120)


def _single_file_bind(p: Planned) -> list[str]:
    """The plan as profilec rendered it before vaults: the credential file bound alone."""
    argv = list(p.argv)
    i = argv.index(str(p.vault))
    assert argv[i - 1 : i + 2] == ["--bind", str(p.vault), str(p.vault)]
    argv[i : i + 2] = [str(p.target), str(p.target)]
    return argv


def _login(p: Planned, argv: list[str], key: str) -> subprocess.CompletedProcess[str]:
    return _run(argv, p.codex, "login", "--with-api-key", stdin=key + "\n")


def _refresh(p: Planned, argv: list[str], new: str) -> subprocess.CompletedProcess[str]:
    p.target.write_text(seed_chatgpt_auth("OLD" + marker()), encoding="utf-8")
    return _run(argv, "python3", str(p.ws / "refresh_driver.py"), p.codex, new)


def test_login_and_refresh_persist_inside_the_vault_plan(planned: Planned) -> None:
    p = planned
    key = "sk-" + marker()
    inode = os.lstat(p.target).st_ino
    done = _login(p, p.argv, key)
    assert done.returncode == 0, done.stderr
    assert key in p.target.read_text(encoding="utf-8")  # persisted through the link
    assert os.lstat(p.target).st_ino != inode  # by a rename, as the catalog says
    assert p.link.is_symlink()
    assert (p.vault / "auth.json.lock").exists() and (p.home / "auth.lock").exists()

    new = marker()
    done = _refresh(p, p.argv, new)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert json.loads(done.stdout.split("\n")[0])["token_endpoint_hits"] >= 1
    assert "rt-" + new in p.target.read_text(encoding="utf-8")
    assert not list(p.vault.glob(".auth-*"))  # the temp file was renamed, not left behind


def test_single_file_bind_makes_both_saves_fail_negative_control(planned: Planned) -> None:
    p = planned
    argv = _single_file_bind(p)
    before = p.target.read_text(encoding="utf-8")
    done = _login(p, argv, "sk-" + marker())
    assert done.returncode != 0
    assert "Read-only file system" in done.stderr
    assert p.target.read_text(encoding="utf-8") == before

    new = marker()
    done = _refresh(p, argv, new)
    assert json.loads(done.stdout.split("\n")[0])["token_endpoint_hits"] >= 1
    assert "rt-" + new not in p.target.read_text(encoding="utf-8")  # the new token is lost


def _inner(p: Planned, argv: list[str]) -> subprocess.CompletedProcess[str]:
    script = (
        f"cat {p.link}; cat {p.target}; ls {p.vault}; cat {p.ws / 'control.txt'}; echo INNER-RAN"
    )
    flags = [x for line in p.overrides for x in ("-c", line)]
    return _run(
        argv,
        p.codex,
        "sandbox",
        "-P",
        "profilec-agent",
        *flags,
        "-C",
        str(p.ws),
        "--",
        "sh",
        "-c",
        script,
    )


def test_inner_codex_sandbox_runs_and_denies_inside_the_plan(planned: Planned) -> None:
    done = _inner(planned, planned.argv)
    assert "INNER-RAN" in done.stdout, done.stderr
    assert "control-ok" in done.stdout  # the workspace stays readable
    assert planned.mark not in done.stdout + done.stderr
    assert "Permission denied" in done.stderr


def test_inner_sandbox_fails_as_root_inside_the_plan_negative_control(planned: Planned) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to start the plan with uid 0 inside")
    argv = [a for a in planned.argv]
    i = argv.index("--uid")
    del argv[i : i + 4]  # no --uid/--gid: bwrap keeps the caller's uid 0 inside
    argv.remove("--unshare-user")
    done = _inner(planned, argv)
    assert "INNER-RAN" not in done.stdout
    assert "setting up uid map: Operation not permitted" in done.stderr
    assert planned.mark not in done.stdout + done.stderr


def test_plan_moves_tmpdir_off_the_temp_dir_and_model_commands_run(
    planned_under_tmp: Planned,
) -> None:
    """CODEX_HOME under /tmp: the plan sets TMPDIR to <state_dir>/tmp (Codex refuses to make
    its sandbox helper under the temp dir) and the inner sandbox runs a command; the same plan
    with TMPDIR=/tmp is the negative control (the helper is missing, nothing runs)."""
    p = planned_under_tmp
    tmpdir = p.argv[p.argv.index("TMPDIR") + 1]
    assert tmpdir != "/tmp" and tmpdir.endswith("/tmp") and "/state/" in tmpdir
    done = _inner(p, p.argv)
    assert "INNER-RAN" in done.stdout, done.stderr
    assert "control-ok" in done.stdout and "Permission denied" in done.stderr
    assert p.mark not in done.stdout + done.stderr
    bad = list(p.argv)
    bad[bad.index("TMPDIR") + 1] = "/tmp"
    done = _inner(p, bad)
    assert "INNER-RAN" not in done.stdout
    assert "execvp codex-linux-sandbox" in done.stderr, done.stderr
    assert p.mark not in done.stdout + done.stderr
