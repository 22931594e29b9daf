"""Issue 22 item 3: compile never emits a writable root the launch user cannot start Codex over.

A fake probe stands for the host (which directory is on a read-only file system or not
writable for the launch uid); tests/integration/test_full_access_starts.py measures the same
decisions with the real binary.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest

from profilec.codex.vocabulary import CARVE_OUTS
from profilec.compile import compile_bundle
from profilec.errors import SandboxRefusesError
from profilec.launchprobe import LaunchProbe
from profilec.models.compiled import CompiledBundle
from profilec.models.roots import LaunchLayout, RootSpec
from profilec.policy import load_policy
from profilec.roots import resolve_root
from profilec.trustedbase import resolve_trusted_base
from tests.helpers import Layout, make_layout

MODES = ("read-only", "agent", "agent-full-access")


class FakeProbe:
    """`blocked`: path -> reason; `children`: path -> its subdirectories."""

    def __init__(self, blocked: dict[str, str], children: dict[str, tuple[str, ...]]) -> None:
        self.blocked = blocked
        self.children = children
        self.asked: list[str] = []

    def blocker(self, path: str, names: Sequence[str]) -> str | None:
        self.asked.append(path)
        return self.blocked.get(path)

    def subdirs(self, path: str) -> tuple[str, ...]:
        return self.children.get(path, ())


def _compile(
    tmp_path: Path, probe: FakeProbe, tops: tuple[str, ...] = ("/opt", "/srv", "/var")
) -> tuple[Layout, CompiledBundle]:
    lay = make_layout(tmp_path / "l")
    root = resolve_root(RootSpec(id="r", path=str(lay.link)))
    policy = load_policy()
    trusted = tuple(resolve_trusted_base(policy.trusted_base, None))
    layout = LaunchLayout(workspace_roots=(str(lay.workspace),))
    bundle = compile_bundle(
        (root,), policy, layout, trusted_base=trusted, root_dirs=tops, probe=probe
    )
    return lay, bundle


def _fs(bundle: CompiledBundle, mode: str) -> dict[str, str]:
    return {e.path: e.access for e in bundle.profile_for(mode).entries}


def test_a_blocked_top_level_directory_is_no_writable_root_but_its_startable_subdirs_are(
    tmp_path: Path,
) -> None:
    probe = FakeProbe(
        {"/opt": "is on a read-only file system, where Codex creates .git", "/opt/ro": "read-only"},
        {"/opt": ("/opt/.git", "/opt/ok", "/opt/ro")},
    )
    lay, bundle = _compile(tmp_path, probe)
    full = _fs(bundle, "agent-full-access")
    assert "/opt" not in full  # stays read-only under `:root` = read
    assert full["/opt/ok"] == "write"
    assert "/opt/ro" not in full and "/opt/.git" not in full
    assert full["/srv"] == "write" and full["/var"] == "write"
    split = [e for e in bundle.profile_for("agent-full-access").entries if e.path == "/opt/ok"]
    assert "read-only file system" in (split[0].provenance[0].detail or "")
    for mode in MODES:  # the credential deny is always applied
        assert _fs(bundle, mode)[str(lay.host_target.parent)] == "deny"


def test_the_same_top_level_directories_unblocked_stay_writable(tmp_path: Path) -> None:
    """Control: with nothing blocked the split is yesterday's."""
    _, bundle = _compile(tmp_path, FakeProbe({}, {"/opt": ("/opt/ok",)}))
    full = _fs(bundle, "agent-full-access")
    assert full["/opt"] == "write" and "/opt/ok" not in full


def test_a_blocked_pin_becomes_a_read_entry_and_the_proof_holds(tmp_path: Path) -> None:
    """A pinned ancestor owned by root, launched as uid 65534: `read`, not `write`."""
    pins = _fs(_compile(tmp_path / "a", FakeProbe({}, {}))[1], "agent")
    pinned = sorted(p for p, a in pins.items() if a == "write" and p.startswith(str(tmp_path)))
    assert pinned, pins  # the layout under /tmp (writable in agent mode) is pinned
    blocked = pinned[0]
    probe = FakeProbe({blocked.replace("/a/", "/b/", 1): "is not writable for uid 65534"}, {})
    lay, bundle = _compile(tmp_path / "b", probe)
    fs = _fs(bundle, "agent")
    target = blocked.replace("/a/", "/b/", 1)
    assert fs[target] == "read", fs
    assert not any(
        p.startswith(target + "/") and a == "write" and p != str(lay.workspace)
        for p, a in fs.items()
    ), fs
    assert fs[str(lay.host_target.parent)] == "deny"
    assert fs.get(str(lay.workspace), "write") == "write"


def test_a_blocked_workspace_tmp_root_is_refused_with_the_reason(tmp_path: Path) -> None:
    probe = FakeProbe(
        {"/tmp": "is on a read-only file system, where Codex creates .git, .agents"}, {}
    )
    with pytest.raises(SandboxRefusesError) as err:
        _compile(tmp_path, probe)
    line = err.value.one_line()
    assert "writable root /tmp" in line and "read-only file system" in line
    assert "would not start" in line and "\n" not in line
    assert err.value.exit_code == 10


# ---------------------------------------------------------------------------------------------
# LaunchProbe on a real scratch directory (lstat/statvfs only)


def test_probe_root_owned_dir_blocks_uid_65534_not_root(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs a root-owned directory")
    d = tmp_path / "d"
    d.mkdir(mode=0o755)
    os.chmod(d, 0o755)
    why = LaunchProbe(65534, (65534,)).blocker(str(d), CARVE_OUTS)
    assert why is not None and "not writable for uid 65534" in why and ".git" in why
    assert LaunchProbe(0, (0,)).blocker(str(d), CARVE_OUTS) is None
    os.chmod(d, 0o1777)
    assert LaunchProbe(65534, (65534,)).blocker(str(d), CARVE_OUTS) is None


def test_probe_names_already_there_do_not_count(tmp_path: Path) -> None:
    """A running Codex session creates the missing carve-out names in its writable roots and
    removes them when it ends (measured on 0.171.0; CI failed on exactly this: a root session
    beside the uid 65534 compile left /check/.git for a moment, compile took /check for a
    writable root, and bwrap could not create /check/.git at launch). Present names are no
    promise: a directory the launch user cannot create them in blocks all the same."""
    d = tmp_path / "d"
    d.mkdir()
    for n in CARVE_OUTS:
        (d / n).mkdir()
    os.chmod(d, 0o555)
    try:
        why = LaunchProbe(65534, (65534,)).blocker(str(d), CARVE_OUTS)
        assert why is not None and "not writable for uid 65534" in why, why
        assert ".git, .agents, .codex, .aws" in why, why
        if os.getuid() == 0:
            assert LaunchProbe(0, (0,)).blocker(str(d), CARVE_OUTS) is None
    finally:
        os.chmod(d, 0o755)


def test_probe_read_only_file_system_blocks_even_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.statvfs

    def ro(path: str) -> object:
        st = real(path)
        return SimpleNamespace(f_flag=st.f_flag | os.ST_RDONLY)

    monkeypatch.setattr(os, "statvfs", ro)
    why = LaunchProbe(0, (0,)).blocker(str(tmp_path), CARVE_OUTS)
    assert why is not None and why.startswith("is on a read-only file system")


def test_probe_a_missing_directory_is_not_its_business(tmp_path: Path) -> None:
    assert LaunchProbe(65534, (65534,)).blocker(str(tmp_path / "nope"), CARVE_OUTS) is None


def test_probe_subdirs_are_real_enterable_directories(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "f").write_text("")
    (tmp_path / "link").symlink_to("a")
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    os.chmod(closed, 0o700)
    own = LaunchProbe(os.getuid())
    assert own.subdirs(str(tmp_path)) == (str(tmp_path / "a"), str(closed))
    if os.getuid() == 0:
        assert LaunchProbe(65534, (65534,)).subdirs(str(tmp_path)) == (str(tmp_path / "a"),)
