"""Compile refuses a bundle the sandbox would not start (exit 10), naming the entry and the fix.

Each class is one `enforce()` refusal measured against the real `codex sandbox`; the real-binary
side is tests/integration/test_refusal_classes_codex.py. Controls: the same layout without the
offending policy entry compiles.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from profilec.api import load_and_compile
from profilec.errors import SandboxRefusesError
from profilec.policy import default_profiles_dir
from profilec.startup import REFUSAL_CLASSES
from tests.helpers import Layout, make_layout


def _policy(tmp_path: Path, mode_file: str, extra: str) -> Path:
    pdir = tmp_path / "profiles"
    shutil.copytree(default_profiles_dir(), pdir)
    f = pdir / mode_file
    text = f.read_text(encoding="utf-8")
    if "[filesystem]\n" not in text:
        text = text.replace("\n[network]", "\n[filesystem]\n\n[network]", 1)
    f.write_text(text.replace("[filesystem]\n", "[filesystem]\n" + extra + "\n", 1), "utf-8")
    return pdir


def _compile(lay: Layout, pdir: Path | None) -> None:
    load_and_compile(
        str(lay.manifest),
        workspace_roots=[str(lay.workspace)],
        codex_home=str(lay.codex_home),
        profiles_dir=str(pdir) if pdir else None,
    )


@pytest.mark.parametrize(
    ("mode_file", "entry", "code"),
    [
        ("agent.toml", '"{ws}/control.txt" = "write"', "write-on-file"),
        (
            "read-only.toml",
            '"{ws}/sub" = "deny"\n"{ws}/sub/f" = "deny"',
            "deny-inside-denied-dir",
        ),
    ],
)
def test_compile_refuses_a_profile_the_sandbox_will_not_start(
    tmp_path: Path, mode_file: str, entry: str, code: str
) -> None:
    lay = make_layout(tmp_path / "l")
    (lay.workspace / "sub").mkdir()
    (lay.workspace / "sub" / "f").write_text("x", encoding="utf-8")
    _compile(lay, None)  # control: the reviewed policy starts
    pdir = _policy(tmp_path, mode_file, entry.format(ws=lay.workspace))
    with pytest.raises(SandboxRefusesError) as info:
        _compile(lay, pdir)
    err = info.value
    assert err.exit_code == 10
    line = err.one_line()
    assert code in line and REFUSAL_CLASSES[code].rule in line
    assert REFUSAL_CLASSES[code].fix in line
    assert "\n" not in line


def test_every_refusal_class_has_a_declared_lint_with_a_measured_range() -> None:
    from profilec.check.rules import rule_by_id

    for code, cls in REFUSAL_CLASSES.items():
        r = rule_by_id(cls.rule)
        assert r.fix == cls.fix, code
        assert r.codex_versions and "0.171.0" in r.codex_versions, code
        assert "measured" in r.why, code


def test_policy_refuses_a_scoped_table_under_an_absolute_path(tmp_path: Path) -> None:
    # so compile never emits the PC055 shape under an absolute key; a `~/...` table with a
    # pattern-holding base and a deny glob is refused too (never emitted)
    from profilec.codex.lexical import EvaluationError
    from profilec.errors import PolicyError

    lay = make_layout(tmp_path / "l")
    pdir = _policy(tmp_path, "read-only.toml", f'"{lay.workspace}/x*y" = {{ "*.pem" = "deny" }}')
    with pytest.raises(PolicyError, match="scoped tables under absolute paths are not policy"):
        _compile(lay, pdir)
    pdir = _policy(tmp_path / "t", "read-only.toml", '"~/x*y" = { "*.pem" = "deny" }')
    with pytest.raises((SandboxRefusesError, EvaluationError)):
        _compile(lay, pdir)


def _flags(lay: Layout, workspace: Path) -> list[str]:
    return [
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(workspace),
        "--codex-home",
        str(lay.codex_home),
    ]


def test_a_codex_home_inside_the_workspace_refuses_until_its_writer_lock_exists(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    # held-out difftest 4102:1; by hand on 0.166.0 and 0.171.0: the agent profile's read entry
    # on CODEX_HOME inside the writable workspace plus its deny on the missing auth.lock:
    # "bwrap: Can't create file at <home>/auth.lock: Read-only file system"
    from profilec.cli import main

    # outside /tmp: a writable root around the workspace (agent mode's /tmp) shields it
    # (4242:211, by hand on both releases), and the refusal needs the workspace alone
    var_tmp = Path(tempfile.mkdtemp(dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(var_tmp, ignore_errors=True))
    lay = make_layout(var_tmp / "l")
    lock = lay.codex_home / "auth.lock"
    lock.unlink()
    flags = _flags(lay, lay.base)
    assert main(["compile", *flags]) == 10
    err = capsys.readouterr().err
    assert f"Can't create file at {lock}: Read-only file system" in err, err
    assert f"--format codex-home --out {lay.codex_home}" in err and err.count("\n") == 1, err
    # codex-home writes the lock before any launch: the gate judges it present
    run_as = ["--run-as", str(os.geteuid())] if os.geteuid() == 0 else []
    out = ["--format", "codex-home", "--out", str(lay.codex_home), *run_as]
    assert main(["compile", *flags, *out]) == 0, capsys.readouterr().err
    assert lock.is_file()
    assert main(["compile", *flags]) == 0, capsys.readouterr().err  # the lock is there now


def test_a_carve_out_name_that_is_a_symlink_in_the_workspace_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # held-out difftest 4102:2, 4102:43; by hand on 0.166.0 and 0.171.0: "Fatal error: cannot
    # enforce sandbox read-only path <ws>/.git because it crosses writable symlink <ws>/.git"
    from profilec.cli import main

    lay = make_layout(tmp_path / "l")
    (lay.workspace / "real").mkdir()
    (lay.workspace / ".git").mkdir()
    assert main(["compile", *_flags(lay, lay.workspace)]) == 0  # control: a real directory
    (lay.workspace / ".git").rmdir()
    (lay.workspace / ".git").symlink_to("real")
    capsys.readouterr()
    assert main(["compile", *_flags(lay, lay.workspace)]) == 10
    err = capsys.readouterr().err
    assert f"crosses writable symlink {lay.workspace}/.git" in err, err
    assert f"replace the symlink {lay.workspace}/.git with a real directory" in err, err
