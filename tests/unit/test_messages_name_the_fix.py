"""Every message a launcher trial found stopping short of the fix ends with what to do (issue 41):
trust errors name the chmod/chown, an unknown key comes first with its closest key, `--run-as
NAME` asks for the number, watch's requirements drift says install, `check -q` keeps to the
verdict, and the two launch-context lints (PC091, PC092) carry ids and fixes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from profilec.check.check_inputs import CheckInputs
from profilec.check.configstack import ConfigStack
from profilec.check.context import LintContext
from profilec.check.lints.launch_context import workspace_under_temp_dir
from profilec.check.rules import rule_by_id
from profilec.errors import TrustError
from profilec.readers import read_trusted_bytes
from tests.audit_helpers import run, setup

ROOT = Path(__file__).resolve().parents[2]


# -- trust errors name the chmod/chown ---------------------------------------------------------


def _trust_error(path: Path) -> str:
    with pytest.raises(TrustError) as caught:
        read_trusted_bytes(str(path))
    return caught.value.one_line()


def _daemon_file(tmp_path: Path) -> tuple[Path, Path]:
    """A 0600 file in a 0755 directory: (the directory, the file)."""
    d = tmp_path / "d"
    d.mkdir(mode=0o755)
    f = d / "roots.toml"
    f.write_text("schema_version = 1\n")
    os.chmod(f, 0o600)
    return d, f


def test_trust_errors_name_the_chmod_or_chown(tmp_path: Path) -> None:
    d, f = _daemon_file(tmp_path)
    assert read_trusted_bytes(str(f))  # control: a daemon-owned file reads
    os.chmod(f, 0o660)
    assert _trust_error(f).endswith(f"is group- or world-writable (`chmod go-w {f}`)")
    os.chmod(f, 0o600)
    os.chmod(d, 0o777)
    assert _trust_error(f).endswith(
        f"is world-writable (`chmod o-w {d}`, or keep the file in a "
        "directory only its owner writes)"
    )
    os.chmod(d, 0o775)
    os.chown(d, os.getuid(), 4321)
    assert _trust_error(f).endswith(f"(`chmod g-w {d}` (or `chgrp root {d}`))")
    os.chmod(d, 0o755)
    link = d / "link.toml"
    link.symlink_to(f)
    assert _trust_error(link).endswith(f"(name the file itself (`readlink -f {link}` prints it))")


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_a_file_or_directory_another_uid_owns_names_the_chown(tmp_path: Path) -> None:
    d, f = _daemon_file(tmp_path)
    os.chown(f, 4321, 0)
    assert _trust_error(f).endswith(f"(`chown root {f}` (or `chown 0 {f}`))")
    os.chown(f, 0, 0)
    os.chown(d, 4321, 0)
    assert f"(`chown root {d}` (or `chown 0 {d}`), or keep the file" in _trust_error(f)


# -- an unknown key first, with the key meant ------------------------------------------------


def test_a_misspelled_table_reports_the_unknown_key_first_with_the_key_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    text = lay.manifest.read_text().replace("[[roots]]", "[[rots]]")
    lay.manifest.write_text(text)
    rc, _, err = run(capsys, "compile", *flags)
    assert rc == 2
    assert err == (
        f"profilec: input: {lay.manifest}: schema violation: unknown key `rots` (did you mean "
        "`roots`?) (and 1 more)\n"
    )
    lay.manifest.write_text(text.replace("[[rots]]", "[[roots]]").replace("path =", "pth ="))
    rc, _, err = run(capsys, "compile", *flags)
    assert "unknown key `roots.0.pth` (did you mean `roots.0.path`?)" in err


# -- --run-as takes a number -----------------------------------------------------------------


def test_run_as_a_name_asks_for_the_numeric_uid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    rc, _, err = run(capsys, "compile", *flags, "--run-as", "nobody")
    assert rc == 2 and err.count("\n") == 1
    assert err.endswith(
        "'nobody' is not a numeric uid (give a numeric uid, e.g. `--run-as 65534`; "
        "`id -u nobody` prints it)\n"
    )


# -- watch: a missing requirements file is installed, not recompiled --------------------------


def test_watch_on_a_missing_requirements_file_says_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    missing = tmp_path / "requirements.toml"
    rc, out, err = run(
        capsys, "watch", *flags, "--tmpdir", "/var/tmp", "--requirements", str(missing)
    )
    assert rc == 9
    message = json.loads(out)["message"]
    assert message.endswith(
        "end the session and install the compiled requirements (`profilec requirements install "
        f"--path {missing}` with the same compile flags) before the next"
    )
    assert "recompile" not in message and message in err


# -- check -q: the verdict and what fails ----------------------------------------------------


def test_check_quiet_prints_only_what_fails_and_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    args = ["check", *flags, "--tmpdir", "/var/tmp", "--no-project-config"]
    rc, full, _ = run(capsys, *args, "--fail-on", "warning")
    assert rc == 1 and "coverage:" in full and "why:" in full  # control: the whole report
    rc, quiet, err = run(capsys, "-q", *args, "--fail-on", "warning")
    assert rc == 1 and err == ""
    assert "coverage:" not in quiet and "why:" not in quiet and "input:" not in quiet
    lines = quiet.splitlines()
    assert lines[-1].startswith("FAIL: ") and lines[-1] == full.splitlines()[-1]
    assert any(line.strip().startswith("fix: ") for line in lines)
    rc, quiet, _ = run(capsys, "-q", *args)
    assert rc == 0 and quiet.splitlines() == [full.splitlines()[-1].replace("FAIL", "PASS", 1)]


# -- PC091: a workspace under the temp dir ---------------------------------------------------


def _pc091(workspace: str, tmpdir: str | None) -> list[str]:
    inp = CheckInputs(
        stack=ConfigStack(()), mode_map={}, roots=(), workspace_roots=(workspace,), tmpdir=tmpdir
    )
    ctx = LintContext(inp, {}, [], "0.171.0")
    workspace_under_temp_dir(ctx)
    return [f"{f.rule} {f.message}" for f in ctx.items]


def test_a_workspace_under_the_temp_dir_is_a_warning_with_its_fix() -> None:
    assert _pc091("/tmp/agent/ws", None) == [
        "PC091 workspace root /tmp/agent/ws is under the temp dir /tmp: agent mode writes it whole"
    ]
    assert _pc091("/srv/tmp-session/ws", "/srv/tmp-session") == [
        "PC091 workspace root /srv/tmp-session/ws is under the temp dir /srv/tmp-session: agent "
        "mode writes it whole"
    ]
    assert _pc091("/srv/agentd/work/ws", "/srv/tmp-session") == []  # control
    assert _pc091("/tmp/agent/ws", "/srv/tmp-session") == []  # the launch's temp dir is elsewhere
    r = rule_by_id("PC091")
    assert (r.name, r.severity) == ("workspace-under-temp-dir", "warning")
    assert r.fix.startswith("put the workspace root under a persistent directory outside /tmp")
    assert r.message.endswith("under the launch temp dir (--tmpdir, else $TMPDIR, else /tmp)")


# -- PC092: a config compiled for another HOME/TMPDIR ----------------------------------------


def test_check_of_a_config_compiled_for_another_home_or_tmpdir_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    home, tmp, other = (tmp_path / n for n in ("home", "tmp", "other"))
    for d in (home, tmp, other):
        d.mkdir()
    context = ["--home", str(home), "--tmpdir", str(tmp)]
    rc, toml, err = run(capsys, "compile", *flags, *context, "--format", "toml")
    assert rc == 0, err
    assert f'# profilec-launch = {{ home = "{home}", tmpdir = "{tmp}" }}' in toml.splitlines()
    config = tmp_path / "config.toml"
    config.write_text(toml)

    def pc092(*launch: str) -> list[str]:
        args = ["check", *flags, "--config", str(config), *launch, "--format", "json"]
        rc, out, err = run(capsys, *args, "--exit-zero")
        assert rc == 0, err
        return [f["message"] for f in json.loads(out)["findings"] if f["rule"] == "PC092"]

    assert pc092(*context) == []  # control: judged under the launch it was compiled for
    found = pc092("--home", str(other), "--tmpdir", str(tmp))
    assert found == [
        f"config.toml was compiled for HOME {home} (check: {other}): check judges another "
        "session than the launch runs"
    ]
    r = rule_by_id("PC092")
    assert (r.name, r.severity) == ("launch-context-differs", "warning")
    assert r.fix.startswith("pass check the --home and --tmpdir the launch gives Codex")


# -- docs/vaults.md: one owner for the vault -------------------------------------------------


def test_the_vault_box_and_text_both_give_the_vault_to_the_run_as_user() -> None:
    text = (ROOT / "docs" / "vaults.md").read_text(encoding="utf-8")
    box = [line for line in text.splitlines() if "<- the vault" in line]
    assert len(box) == 1 and "run-as user" in box[0] and ", root" not in box[0]
    assert "The **run-as user** owns all of it" in text
