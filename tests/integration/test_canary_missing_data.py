"""A missing shipped seccomp profile is exit 7 (environment), never exit 1 ("a probe failed").

The canary used to catch the error inside each mode's worker and report the mode as failed.
The test runs `profilec canary` from a copy of the package whose `canaries/seccomp.json` is gone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.helpers import make_layout

if TYPE_CHECKING:
    from docker import DockerClient

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.docker, pytest.mark.codex]


def _copy_without_seccomp(root: Path) -> None:
    shutil.copytree(REPO / "compiler", root / "compiler", symlinks=True)
    (root / "profilec").symlink_to("compiler")
    for data in ("profiles", "schemas", "canaries"):
        shutil.copytree(REPO / data, root / data)
    (root / "canaries" / "seccomp.json").unlink()


@pytest.mark.parametrize("command", [["canary"], ["check", "--canary"]])
def test_missing_seccomp_profile_is_exit_7(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, command: list[str]
) -> None:
    root = tmp_path / "copy"
    _copy_without_seccomp(root)
    lay = make_layout(tmp_path / "l")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "profilec.cli",
            *command,
            "--roots",
            str(lay.manifest),
            "--codex-home",
            str(lay.codex_home),
        ],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), "PROFILEC_CODEX_BIN": str(codex_bin)},
        timeout=600,
        check=False,
    )
    assert proc.returncode == 7, (proc.returncode, proc.stderr[-600:])
    assert proc.stderr.count("\n") == 1
    assert "seccomp.json" in proc.stderr and "shipped data file is missing" in proc.stderr
