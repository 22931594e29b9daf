"""`profilec lock` and `check --lock`: a clean recompile passes; drift is exit 9 with a diff."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.audit_helpers import run, setup, validate


def _lock(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str]) -> Path:
    # Where no mode writes (a lock under the writable /tmp fails check --lock: PC050).
    lock = Path(flags[flags.index("--codex-home") + 1]) / "profilec.lock"
    rc, _, err = run(capsys, "lock", *flags, "--out", str(lock))
    assert rc == 0, err
    return lock


def test_lock_is_deterministic_and_an_unchanged_recompile_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    lock = _lock(tmp_path, capsys, flags)
    first = lock.read_bytes()
    _lock(tmp_path, capsys, flags)
    assert lock.read_bytes() == first
    validate("lock.schema.json", json.loads(first))
    rc, out, err = run(capsys, "check", *flags, "--lock", str(lock))
    assert rc == 0, err
    assert "PASS" in out


def test_a_retargeted_link_is_drift_exit_9_naming_the_chain_and_the_widening(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    lock = _lock(tmp_path, capsys, flags)
    # The middle link now points at another directory holding another auth.json.
    (lay.base / "host2").mkdir()
    (lay.base / "host2" / "auth.json").write_text("{}\n", encoding="utf-8")
    (lay.base / "hostlink").unlink()
    (lay.base / "hostlink").symlink_to("host2")
    rc, _, err = run(capsys, "check", *flags, "--lock", str(lock))
    assert rc == 9
    assert "link chain retargeted" in err
    assert f"target moved {lay.host_target}" in err
    # The old target is no longer denied: shown first, marked as widening.
    widening = err.index("WIDENING")
    assert err.index(f"! [agent] access {lay.host_target}: deny -> read") > widening
    assert "compiled.roots[0].target" in err
    last = [x for x in err.split("\n") if x][-1]
    assert last.startswith("profilec: lock-drift: ") and "Traceback" not in err


def test_an_edited_policy_is_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, flags = setup(tmp_path / "l")
    profiles = tmp_path / "profiles"
    shutil.copytree("profiles", profiles)
    flags = [*flags, "--profiles", str(profiles)]
    full = profiles / "agent-full-access.toml"
    text = full.read_text(encoding="utf-8")
    full.write_text(text.replace("enabled = true", "enabled = false"), encoding="utf-8")
    lock = _lock(tmp_path, capsys, flags)
    full.write_text(text, encoding="utf-8")  # network back on: a widening the mode allows
    rc, _, err = run(capsys, "check", *flags, "--lock", str(lock))
    assert rc == 9
    assert "! [agent-full-access] network: disabled -> enabled" in err


def test_a_moved_root_is_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lay, flags = setup(tmp_path / "l")
    lock = _lock(tmp_path, capsys, flags)
    text = lay.manifest.read_text(encoding="utf-8")
    lay.manifest.write_text(text.replace(str(lay.link), str(lay.host_target)), encoding="utf-8")
    rc, _, err = run(capsys, "check", *flags, "--lock", str(lock))
    assert rc == 9
    assert "declared path" in err


def test_a_missing_or_foreign_lock_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    rc, _, err = run(capsys, "check", *flags, "--lock", str(tmp_path / "nope.lock"))
    assert rc == 2 and "does not exist" in err
    bogus = tmp_path / "bogus.lock"
    bogus.write_text('{"kind": "something"}', encoding="utf-8")
    rc, _, err = run(capsys, "check", *flags, "--lock", str(bogus))
    assert rc == 2 and "not a profilec lock" in err


def test_a_session_config_change_is_drift_and_diff_lists_the_same_members(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the session config changed: `check --lock` is drift, and `diff` of the lock against
    the recompiled bundle names the same changed members (it once said "no changes")."""
    _, flags = setup(tmp_path / "l")
    session = tmp_path / "session.json"
    session.write_text(json.dumps({"model": "gpt-5"}), encoding="utf-8")
    lock = _lock(tmp_path, capsys, [*flags, "--session-config", str(session)])
    session.write_text(
        json.dumps({"model": "gpt-5", "model_reasoning_effort": "high"}), encoding="utf-8"
    )
    flags = [*flags, "--session-config", str(session)]
    rc, _, err = run(capsys, "check", *flags, "--lock", str(lock))
    assert rc == 9, err
    member = "[*] member compiled.session_config.model_reasoning_effort: bundle member changed"
    assert member in err
    new = tmp_path / "new.json"
    assert run(capsys, "compile", *flags, "--format", "bundle", "--out", str(new))[0] == 0
    rc, out, _ = run(capsys, "diff", str(lock), str(new))
    assert rc == 0  # neutral: the allow-list admits only reviewed session keys
    assert member in out and "no changes" not in out
    drift = [x.strip() for x in err.split("\n") if "] member " in x]
    listed = [x.strip() for x in out.split("\n") if "] member " in x]
    assert drift == listed and drift
    rc, js, _ = run(capsys, "diff", str(lock), str(new), "--format", "json")
    report = json.loads(js)
    validate("diff.schema.json", report)
    assert {c["path"] for c in report["changes"] if c["what"] == "member"} == {
        "compiled.session_config.model_reasoning_effort"
    }
