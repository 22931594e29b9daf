"""The trusted base as data: the reviewed policy file, the manifest section, edge resolution."""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from profilec.api import load_and_compile
from profilec.emit.launch import render_launch
from profilec.errors import InputError, PolicyError
from profilec.flags import CompileFlags
from profilec.inputs import Inputs
from profilec.policy import default_profiles_dir, load_policy
from profilec.trustedbase import resolve_trusted_base
from tests.helpers import make_layout


@pytest.fixture
def sock(tmp_path: Path) -> Iterator[Path]:
    """A listening unix socket standing in for a container engine (never the real one)."""
    path = tmp_path / "run" / "engine.sock"
    path.parent.mkdir()
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.listen(1)
    try:
        yield path
    finally:
        s.close()


def test_shipped_trusted_base_names_the_issue_list() -> None:
    tb = load_policy().trusted_base
    assert tb is not None
    for must in ("/etc", "/usr"):
        assert must in tb.read_only
    for must in ("/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock"):
        assert must in tb.deny
    assert "python-site-packages" in tb.discover
    assert "full access" in tb.rationale.replace("-", " ") or "agent-full-access" in tb.rationale


def test_profiles_dir_without_trusted_base_is_a_policy_error(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    shutil.copytree(default_profiles_dir(), profiles)
    (profiles / "trusted-base.toml").unlink()
    with pytest.raises(PolicyError, match=r"trusted-base\.toml"):
        load_policy(str(profiles))


def test_trusted_base_rejects_slash(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    shutil.copytree(default_profiles_dir(), profiles)
    text = (profiles / "trusted-base.toml").read_text()
    (profiles / "trusted-base.toml").write_text(text.replace('"/etc",', '"/", "/etc",'))
    with pytest.raises(PolicyError, match="trusted-base path /"):
        load_policy(str(profiles))


def test_resolution_canonicalizes_skips_missing_and_keeps_sockets(
    tmp_path: Path, sock: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import profilec.trustedbase

    # pytest's base temp dir is 0700; reachability has its own test below.
    monkeypatch.setattr(profilec.trustedbase, "_topmost_closed", lambda path: None)
    real = tmp_path / "usr-real"
    real.mkdir()
    (tmp_path / "usr-link").symlink_to(real)
    policy = SimpleNamespace(
        read_only=[str(tmp_path / "usr-link"), str(tmp_path / "absent")],
        deny=[str(sock), str(tmp_path / "run" / "podman.sock")],
        discover=[],
    )
    got = resolve_trusted_base(policy, None)
    assert [(g.path, g.access, g.kind) for g in got] == [
        (str(sock), "deny", "socket"),
        (str(real), "read", "dir"),
    ]
    assert got[1].declared == str(tmp_path / "usr-link")


def test_manifest_paths_must_exist_and_read_only_must_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "codex").write_text("#!/bin/sh\n")
    ok = SimpleNamespace(read_only=[str(tmp_path / "bin")], deny=[])
    assert resolve_trusted_base(None, ok)[0].source == "manifest"
    with pytest.raises(InputError, match="does not exist"):
        resolve_trusted_base(None, SimpleNamespace(read_only=[], deny=[str(tmp_path / "x")]))
    with pytest.raises(InputError, match="not a directory"):
        resolve_trusted_base(
            None, SimpleNamespace(read_only=[str(tmp_path / "bin" / "codex")], deny=[])
        )


def test_manifest_trusted_base_section_is_validated(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    text = lay.manifest.read_text()
    extra = '\n[trusted_base]\nread_only = ["/opt"]\ndeny = ["/run/x.sock"]\n'
    lay.manifest.write_text(text + extra)
    os.chmod(lay.manifest, 0o600)
    m = Inputs(CompileFlags.from_text(roots=str(lay.manifest))).manifest()
    assert m.trusted_base is not None and m.trusted_base.read_only == ["/opt"]
    lay.manifest.write_text(text + '\n[trusted_base]\nread_only = ["relative"]\n')
    with pytest.raises(InputError, match="schema violation"):
        Inputs(CompileFlags.from_text(roots=str(lay.manifest))).manifest()


def test_launch_gives_the_canonical_cwd(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    (tmp_path / "wslink").symlink_to(lay.workspace)
    bundle = load_and_compile(
        str(lay.manifest),
        workspace_roots=[str(tmp_path / "wslink")],
        codex_home=str(lay.codex_home),
    )
    doc = json.loads(render_launch(bundle))
    assert doc["cwd"] == str(lay.workspace)
    assert doc["workspace_roots"] == [str(lay.workspace)]
    for p in bundle.profiles:
        assert p.workspace_roots == (str(lay.workspace),)
    assert bundle.layout.workspace_roots == (str(lay.workspace),)


def test_policy_paths_only_root_can_reach_are_covered_at_the_closed_directory() -> None:
    """A sandbox run as root reaches them (the containerd socket under the 0700 /run/docker),
    but Codex 0.171.0 run as another user refuses to start over an entry it cannot stat
    (`failed to inspect synthetic bubblewrap mount target`): the entry goes on the shallowest
    directory others cannot search, which anyone can stat. The manifest's paths stay as named."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="profilec-tb-", dir="/var/tmp"))
    try:
        os.chmod(base, 0o755)
        (base / "open").mkdir(mode=0o755)
        (base / "closed").mkdir(mode=0o700)
        (base / "closed" / "inner").mkdir()
        (base / "closed" / "inner" / "engine.sock").write_text("")
        policy = SimpleNamespace(
            read_only=[str(base / "open"), str(base / "closed" / "inner")],
            deny=[str(base / "closed" / "inner" / "engine.sock")],
            discover=[],
        )
        got = resolve_trusted_base(policy, None)
        assert [(g.path, g.access, g.kind) for g in got] == [
            (str(base / "closed"), "deny", "dir"),  # denied wins over read-only
            (str(base / "open"), "read", "dir"),
        ]
        assert got[0].declared == str(base / "closed" / "inner" / "engine.sock")
        manifest = SimpleNamespace(read_only=[str(base / "closed" / "inner")], deny=[])
        assert [g.path for g in resolve_trusted_base(None, manifest)] == [
            str(base / "closed" / "inner")
        ]
    finally:
        shutil.rmtree(base)
