"""The e2e harnesses' one requirements binding (compiler/e2e/layout.py `requirements_prefix`):
Codex inside the prefix reads the compiled file at /etc/codex/requirements.toml, and a run
leaves the host's file system as it found it: no /etc/codex is created on the host."""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path

import pytest

from profilec.e2e.layout import requirements_prefix

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="binding /etc/codex in a private mount namespace needs root"
)


def _etc_state() -> tuple[bool, tuple[str, ...]]:
    return os.path.lexists("/etc/codex"), tuple(sorted(os.listdir("/etc")))


def test_the_binding_shows_the_file_inside_and_leaves_the_host_as_it_was(
    tmp_path: Path,
) -> None:
    before = _etc_state()
    text = "# a marker only this run writes\nallowed_sandbox_modes = ['read-only']\n"
    probe = "cat /etc/codex/requirements.toml; stat -c '%U %a' /etc; getent hosts localhost"
    argv = [*requirements_prefix(text, str(tmp_path)), "/bin/sh", "-c", probe]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[:2] == text.splitlines()
    assert out[2] == "root 755"  # /etc inside keeps its owner and mode
    assert "localhost" in out[3]  # and what lies in it (mounts below it included)
    assert _etc_state() == before


def test_without_the_directory_on_the_host_its_mount_point_lives_in_a_tmpfs_overlay(
    tmp_path: Path,
) -> None:
    """/etc/codex may exist on a host (another run made it); a directory no host has takes the
    overlay path every time."""
    target = f"/etc/profilec-test-{secrets.token_hex(4)}"
    prefix = requirements_prefix("x = 1\n", str(tmp_path), target)
    assert f"mount -t tmpfs -o mode=0700 tmpfs {tmp_path}/etc-overlay" in prefix[6]
    probe = f"cat {target}/requirements.toml; stat -c '%U %a' /etc; getent hosts localhost"
    proc = subprocess.run(
        [*prefix, "/bin/sh", "-c", probe], capture_output=True, text=True, timeout=30, check=False
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0] == "x = 1" and out[1] == "root 755" and "localhost" in out[2]
    assert not os.path.lexists(target)  # the host never had it
