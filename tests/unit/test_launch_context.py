"""`check` and `explain` take the launch context (--cwd, --home, --tmpdir) and print it;
`explain` works on a foreign config (--config/--overrides, --profile) with --format json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.audit_helpers import run, setup, validate


def _foreign(tmp_path: Path) -> tuple[Path, Path, Path]:
    real = tmp_path / "real"
    (real / "d").mkdir(parents=True)
    (real / "d" / "f").write_text("x\n")
    link = tmp_path / "lnk"
    link.symlink_to(real)
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        'default_permissions = "p"\n[permissions.p]\nextends = ":workspace"\n'
        f'[permissions.p.filesystem]\n"{real}/d/f" = "deny"\n"~/sec" = "deny"\n'
    )
    return real, link, cfg


def test_explain_foreign_config_shows_the_deny_the_symlinked_cwd_drops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real, link, cfg = _foreign(tmp_path)
    argv = ["explain", f"{real}/d/f", "--config", str(cfg), "--format", "json"]
    rc, out, err = run(capsys, *argv, "--cwd", str(real))
    assert rc == 0, err
    doc = json.loads(out)
    validate("explain.schema.json", doc)
    assert doc["access"] == "deny" and doc["enforced_access"] == "deny"
    assert doc["profile_id"] == "p" and doc["source"] == str(cfg)
    rc, out, err = run(capsys, *argv, "--cwd", str(link))
    doc = json.loads(out)
    assert doc["access"] == "deny" and doc["enforced_access"] == "write"
    assert "spelled through a symlink" in doc["enforcement"]


def test_explain_home_decides_tilde_keys_and_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real, _, cfg = _foreign(tmp_path)
    home = tmp_path / "home"
    base = ["explain", f"{home}/sec", "--config", str(cfg), "--cwd", str(real)]
    rc, out, _ = run(capsys, *base, "--home", str(home), "--tmpdir", str(tmp_path))
    assert rc == 0
    assert out.split("\n")[1].startswith("access:  deny")
    assert f"launch context: cwd {real}; HOME {home}; TMPDIR {tmp_path}" in out
    rc, out, _ = run(capsys, *base, "--home", str(tmp_path / "other"))
    assert not out.split("\n")[1].startswith("access:  deny")  # /tmp: :slash_tmp write


def test_explain_overrides_and_profile_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ov = tmp_path / "ov.txt"
    ov.write_text('permissions.q={filesystem={":root"="read", "/etc/hosts"="deny"}}\n')
    rc, out, err = run(capsys, "explain", "/etc/hosts", "--overrides", str(ov), "--profile", "q")
    assert rc == 0, err
    assert "is deny under profile q" in out
    rc, _, err = run(capsys, "explain", "/etc/hosts", "--overrides", str(ov))
    assert rc == 2 and "--profile" in err


def test_check_prints_the_launch_context_and_uses_cwd(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    (tmp_path / "t").mkdir()  # a --tmpdir that does not exist is refused (test_inputs_exist)
    rc, out, err = run(capsys, "check", *flags, "--home", "/h", "--tmpdir", str(tmp_path / "t"))
    assert rc == 0, err
    assert f"launch context: cwd each workspace root in turn; HOME /h; TMPDIR {tmp_path}/t" in out
    # the credential's directory as the session cwd, spelled through a link: not PASS
    link = tmp_path / "hostcwd"
    link.symlink_to(lay.host_target.parent)
    rc, out, _ = run(capsys, "check", *flags, "--cwd", str(link))
    assert rc == 1
    assert "PC030" in out and f"launch context: cwd {link};" in out
    rc, _, err = run(capsys, "check", *flags, "--cwd", "rel/dir")
    assert rc == 2 and "--cwd" in err
