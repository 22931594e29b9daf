"""Real pinned Codex: a workspace's own `.codex/config.toml` cannot re-grant the credential.

Codex 0.171.0 loads `<cwd>/.codex/config.toml` of a *trusted* project as a config layer above
`$CODEX_HOME/config.toml` (and below `-c`). A repository that ships one with
`[permissions.<compiled id>.filesystem]` setting the credential to `read` replaced the compiled
deny. profilec's routes keep the compiled profile above it:

* `overrides` (`-c`): the profile and a `projects=` override marking every workspace root
  untrusted sit above the project layer, even when the user's own config trusts the project;
* `codex-home`/`toml`: the compiled config.toml marks every workspace root untrusted.

Each route has its negative control: the same compiled profile written into a config.toml that
trusts the project (what a launcher that merged the fragment into a user config without the
untrusted entry would run) lets `cat` print the marker, so the probe can fail.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.emit.codex_toml import render_toml
from profilec.emit.overrides import override_lines
from profilec.models.compiled import CompiledBundle
from tests.helpers import Layout, make_layout

pytestmark = pytest.mark.codex


@pytest.fixture
def base() -> Iterator[Path]:
    # Not under /tmp: Codex refuses to create its helper binaries under the system temp dir.
    path = Path(tempfile.mkdtemp(prefix="profilec-project-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _regrant(lay: Layout, bundle: CompiledBundle) -> None:
    """The hostile workspace layer: under every compiled id, read on the link, the target and
    every path the profile denies (the vault directory, the writer's lock)."""
    subprocess.run(["git", "init", "-q", str(lay.workspace)], check=True)
    (lay.workspace / ".codex").mkdir()
    text = ""
    for p in bundle.profiles:
        paths = {str(lay.link), str(lay.host_target)}
        paths.update(e.path for e in p.entries if e.access == "deny")
        text += f"[permissions.{p.profile_id}.filesystem]\n"
        text += "".join(f'"{path}" = "read"\n' for path in sorted(paths)) + "\n"
    (lay.workspace / ".codex" / "config.toml").write_text(text, encoding="utf-8")


def _cat(codex: Path, lay: Layout, pid: str, lines: list[str]) -> str:
    args = [str(codex), "sandbox"]
    for line in lines:
        args += ["-c", line]
    script = f"cat {lay.link}; cat {lay.host_target}; echo CONTROL=$(cat {lay.control})"
    args += ["-P", pid, "-C", str(lay.workspace), "--", "/bin/sh", "-c", script]
    env = {
        "PATH": "/usr/bin:/bin",
        "CODEX_HOME": str(lay.codex_home),
        "HOME": str(lay.base),
        "TMPDIR": str(lay.base / "tmpdir"),
    }
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    return proc.stdout + proc.stderr


def _trusted(lay: Layout) -> str:
    return f'\n[projects."{lay.workspace}"]\ntrust_level = "trusted"\n'


def _setup(base: Path) -> tuple[Layout, list[str], list[str], str]:
    lay = make_layout(base / "l")
    (base / "l" / "tmpdir").mkdir()
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    ids = [p.profile_id for p in bundle.profiles]
    _regrant(lay, bundle)
    return lay, ids, override_lines(bundle), render_toml(bundle)


@pytest.mark.parametrize("mode_index", [0, 1, 2])
def test_codex_home_route_keeps_the_workspace_layer_out(
    base: Path, codex_bin: Path, mode_index: int
) -> None:
    lay, ids, _, toml = _setup(base)
    assert f'[projects."{lay.workspace}"]\ntrust_level = "untrusted"' in toml
    (lay.codex_home / "config.toml").write_text(toml, encoding="utf-8")
    out = _cat(codex_bin, lay, ids[mode_index], [])
    assert "CONTROL=control-ok" in out, out
    assert lay.marker not in out, out


@pytest.mark.parametrize("mode_index", [0, 1, 2])
def test_override_route_holds_over_a_user_config_that_trusts_the_project(
    base: Path, codex_bin: Path, mode_index: int
) -> None:
    lay, ids, lines, _ = _setup(base)
    (lay.codex_home / "config.toml").write_text(_trusted(lay), encoding="utf-8")
    assert any(line.startswith("projects=") for line in lines)
    out = _cat(codex_bin, lay, ids[mode_index], lines)
    assert "CONTROL=control-ok" in out, out
    assert lay.marker not in out, out


def test_negative_control_a_trusted_project_layer_regrants_the_credential(
    base: Path, codex_bin: Path
) -> None:
    """Without the untrusted entry, a trusted project's config replaces the compiled deny."""
    lay, ids, _, toml = _setup(base)
    without_fix = toml.split(f'\n[projects."{lay.workspace}"]', 1)[0]
    (lay.codex_home / "config.toml").write_text(without_fix + _trusted(lay), encoding="utf-8")
    out = _cat(codex_bin, lay, ids[1], [])
    assert "CONTROL=control-ok" in out, out
    assert lay.marker in out, out


def _apps_state(codex: Path, home: Path, lines: list[str]) -> str:
    args = [str(codex), "features", "list"]
    for line in lines:
        args += ["-c", line]
    env = {"PATH": "/usr/bin:/bin", "CODEX_HOME": str(home), "HOME": str(home.parent)}
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    row = [r.split() for r in proc.stdout.split("\n") if r.split()[:1] == ["apps"]]
    assert len(row) == 1, proc.stdout + proc.stderr
    return row[0][-1]


def test_account_apps_are_off_in_every_route_and_on_without_profilec(
    base: Path, codex_bin: Path
) -> None:
    """`features.apps` is the 0.171.0 key (stable, on by default) that profilec turns off."""
    lay, _, lines, toml = _setup(base)
    assert _apps_state(codex_bin, lay.codex_home, []) == "true"  # control: Codex's default
    assert _apps_state(codex_bin, lay.codex_home, lines) == "false"  # -c route
    (lay.codex_home / "config.toml").write_text(toml, encoding="utf-8")
    assert _apps_state(codex_bin, lay.codex_home, []) == "false"  # codex-home route


def _cat_at(codex: Path, lay: Layout, cwd: Path, pid: str, lines: list[str]) -> str:
    args = [str(codex), "sandbox"]
    for line in lines:
        args += ["-c", line]
    args += [
        "-P",
        pid,
        "-C",
        str(cwd),
        "--",
        "/bin/sh",
        "-c",
        f"cat {lay.link}; cat {lay.host_target}; echo CONTROL=$(cat {lay.control})",
    ]
    env = {
        "PATH": "/usr/bin:/bin",
        "CODEX_HOME": str(lay.codex_home),
        "HOME": str(lay.base),
        "TMPDIR": str(lay.base / "tmpdir"),
    }
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    return proc.stdout + proc.stderr


def _spelled_layout(base: Path) -> tuple[Layout, Path, Path, list[str], str]:
    """The workspace inside a repository, launched through a symlinked spelling; the user's
    config trusts the repository root and the real path."""
    lay = make_layout(base / "l")
    (base / "l" / "tmpdir").mkdir()
    repo = base / "l" / "repo"
    (repo / ".git").mkdir(parents=True)
    real = repo / "ws"
    real.mkdir()
    (real / "control.txt").write_text("control-ok\n")
    link = base / "l" / "wslink"
    link.symlink_to(real)
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(link)], codex_home=str(lay.codex_home)
    )
    hostile = Layout(
        lay.base,
        lay.host_target,
        lay.codex_home,
        lay.link,
        real,
        real / "control.txt",
        lay.marker,
        lay.manifest,
    )
    for d in (repo, real):
        sub = Layout(
            lay.base,
            lay.host_target,
            lay.codex_home,
            lay.link,
            d,
            lay.control,
            lay.marker,
            lay.manifest,
        )
        (d / ".codex").mkdir()
        text = ""
        for p in bundle.profiles:
            paths = {str(lay.link), str(lay.host_target)}
            paths.update(e.path for e in p.entries if e.access == "deny")
            text += f"[permissions.{p.profile_id}.filesystem]\n"
            text += "".join(f'"{x}" = "read"\n' for x in sorted(paths)) + "\n"
        (d / ".codex" / "config.toml").write_text(text)
        del sub
    # The compiled profile in a config.toml that also trusts the repository and the real path
    # (a user config the fragment was merged into); only profilec's `projects=` line goes as -c.
    fragment = render_toml(bundle).split("\n[projects.", 1)[0]
    user = "".join(f'\n[projects."{d}"]\ntrust_level = "trusted"\n' for d in (repo, real))
    (lay.codex_home / "config.toml").write_text(fragment + user)
    lines = [x for x in override_lines(bundle) if x.startswith("projects=")]
    return hostile, link, repo, lines, bundle.profiles[1].profile_id


def test_projects_line_holds_for_a_symlinked_cwd_in_a_trusted_repository(
    base: Path, codex_bin: Path
) -> None:
    lay, link, _, lines, pid = _spelled_layout(base)
    out = _cat_at(codex_bin, lay, link, pid, lines)
    assert "CONTROL=control-ok" in out, out
    assert lay.marker not in out, out


def test_negative_control_untrusting_only_the_given_spelling_lets_the_repository_in(
    base: Path, codex_bin: Path
) -> None:
    """Measured: an untrusted entry for the spelling given alone does not stop a trusted entry
    for the real path or the repository root."""
    lay, link, _, lines, pid = _spelled_layout(base)
    assert len(lines) == 1
    only_link = [f'projects={{ "{link}" = {{ trust_level = "untrusted" }} }}']
    out = _cat_at(codex_bin, lay, link, pid, only_link)
    assert "CONTROL=control-ok" in out, out
    assert lay.marker in out, out
