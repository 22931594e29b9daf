"""A mode's base profile grants no more than the mode's ACP meaning (compiler/policy.py):
`read-only` writes nothing and has no network, `agent` has no network, `agent-full-access`
may do both. A profiles/ that widens a mode is refused at load, one line naming the file,
the mode and the key, rather than compiling under the mode's old description."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from profilec.errors import PolicyError
from profilec.policy import load_policy
from tests.helpers import make_layout

REPO = Path(__file__).resolve().parents[2]


def _profiles(tmp_path: Path, name: str, old: str, new: str) -> Path:
    pdir = tmp_path / "profiles"
    shutil.copytree(REPO / "profiles", pdir)
    f = pdir / name
    text = f.read_text(encoding="utf-8")
    assert old in text
    f.write_text(text.replace(old, new), encoding="utf-8")
    return pdir


def test_the_shipped_profiles_load(tmp_path: Path) -> None:
    policy = load_policy(str(REPO / "profiles"))  # negative control
    assert set(policy.bases) == {"read-only", "agent", "agent-full-access"}
    assert load_policy(str(_profiles(tmp_path, "read-only.toml", "\n", "\n")))


@pytest.mark.parametrize(
    ("name", "old", "new", "key"),
    [
        (
            "read-only.toml",
            "[network]",
            '[filesystem]\n":root" = "write"\n\n[network]',
            "filesystem ':root' = 'write'",
        ),
        ("read-only.toml", "enabled = false", "enabled = true", "network.enabled = true"),
        (
            "read-only.toml",
            "[network]",
            '[filesystem]\n":workspace_roots" = { "." = "read", "src" = "write" }\n\n[network]',
            "filesystem ':workspace_roots'.'src' = 'write'",
        ),
        (
            "read-only.toml",
            'extends = ":read-only"',
            'extends = ":workspace"',
            "extends = ':workspace'",
        ),
        (
            "read-only.toml",
            'extends = ":read-only"',
            'extends = ":read-only"\nwrite_workspace_roots = true',
            "write_workspace_roots = true",
        ),
        ("agent.toml", "enabled = false", "enabled = true", "network.enabled = true"),
    ],
)
def test_a_wider_mode_is_refused_naming_file_mode_and_key(
    tmp_path: Path, name: str, old: str, new: str, key: str
) -> None:
    pdir = _profiles(tmp_path, name, old, new)
    with pytest.raises(PolicyError) as exc:
        load_policy(str(pdir))
    line = exc.value.one_line()
    mode = name.removesuffix(".toml")
    assert exc.value.exit_code == 2 and "\n" not in line
    assert line.startswith(f"profilec: policy: {pdir / name}: mode {mode!r} grants more")
    assert line.endswith(f": {key} (a wider policy belongs to a wider mode)"), line


def test_agent_may_write_and_full_access_may_do_both(tmp_path: Path) -> None:
    pdir = _profiles(tmp_path, "agent.toml", '":tmpdir" = "write"', '":root" = "write"')
    assert load_policy(str(pdir)).bases["agent"].filesystem[":root"] == "write"


def test_compile_exits_2_with_one_line(tmp_path: Path) -> None:
    lay = make_layout(tmp_path / "l")
    pdir = _profiles(tmp_path, "read-only.toml", "enabled = false", "enabled = true")
    flags = ["--roots", str(lay.manifest), "--workspace-root", str(lay.workspace)]
    proc = subprocess.run(
        [sys.executable, "-m", "profilec.cli", "compile", *flags, "--profiles", str(pdir)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("profilec: policy:")]
    assert len(errors) == 1 and "network.enabled = true" in errors[0], proc.stderr
