"""The bundle: deterministic bytes and hash, provenance for every key, mount plan, schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profilec.bundle.document import content_hash
from tests.audit_helpers import plan_layout, run, setup, validate


def test_same_inputs_give_the_same_bytes_and_hash_and_the_schema_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    rc1, out1, _ = run(capsys, "compile", *flags, "--format", "bundle")
    rc2, out2, _ = run(capsys, "compile", *flags, "--format", "bundle")
    assert rc1 == rc2 == 0
    assert out1 == out2
    doc = json.loads(out1)
    validate("bundle.schema.json", doc)
    assert doc["content_hash"] == content_hash(doc)
    assert doc["codex_version_range"] == ">=0.171.0,<0.172.0"
    assert doc["mount_plan"] is None
    assert lay.marker not in out1
    _, toml_text, _ = run(capsys, "compile", *flags, "--format", "toml")
    _, overrides, _ = run(capsys, "compile", *flags, "--format", "overrides")
    assert doc["launcher"]["config_toml"] == toml_text
    assert doc["launcher"]["config_overrides"] == overrides.split("\n")[:-1]


def test_a_changed_member_changes_the_hash() -> None:
    doc = {"schema_version": 1, "a": [1, 2]}
    assert content_hash(doc) != content_hash({**doc, "a": [2, 1]})
    assert content_hash({**doc, "content_hash": "x"}) == content_hash(doc)


def test_every_key_of_every_compiled_profile_has_provenance_with_its_source_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    _, out, _ = run(capsys, "compile", *flags, "--format", "bundle")
    doc = json.loads(out)
    manifest_lines = lay.manifest.read_text(encoding="utf-8").split("\n")
    id_line = next(i for i, s in enumerate(manifest_lines, 1) if s.startswith("id ="))
    by_mode = {m["mode"]: m["records"] for m in doc["provenance"]["modes"]}
    assert set(doc["provenance"]["inputs"]) >= {"roots-manifest", "policy/agent.toml"}
    for prof in doc["compiled"]["profiles"]:
        keys = {r["key"] for r in by_mode[prof["mode"]]}
        for entry in prof["entries"]:
            assert entry["path"] in keys
        for key in prof["policy_filesystem"]:
            assert any(k == key or k.startswith(key + "/") for k in keys)
        recs = by_mode[prof["mode"]]
        lock = [r for r in recs if r["value"] == "deny" and r["reason"] == "writer-lock"]
        assert [r["key"] for r in lock] == [str(lay.codex_home / "auth.lock")]
        assert lock[0]["origin"] == "launch-layout"
        deny = [
            r
            for r in recs
            if r["value"] == "deny" and r["reason"] not in ("writer-lock", "trusted-base")
        ]
        assert deny and all(r["root_id"] == "codex-auth" for r in deny)
        assert {r["reason"] for r in deny} == {"vault"}
        assert all(r["file"] == "roots-manifest" and r["line"] == id_line for r in deny)
        # Trusted-base entries name the reviewed policy line that declared them.
        tb_lines = (Path("profiles") / "trusted-base.toml").read_text(encoding="utf-8").split("\n")
        for r in recs:
            if r["reason"] == "trusted-base" and r["detail"].startswith("policy: "):
                declared = r["detail"].removeprefix("policy: ")
                assert r["file"] == "trusted-base.toml"
                assert f'"{declared}"' in tb_lines[r["line"] - 1]
        ext = next(r for r in by_mode[prof["mode"]] if r["key"] == "extends")
        policy_file = (Path("profiles") / ext["file"]).read_text(encoding="utf-8").split("\n")
        assert policy_file[ext["line"] - 1].startswith("extends")
        assert any(r["key"] == "network.enabled" for r in by_mode[prof["mode"]])


def test_a_plan_layout_puts_the_mount_plan_in_the_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    layout = plan_layout(lay)
    rc, _, err = run(
        capsys, "lock", *flags, "--plan-layout", str(layout), "--out", str(tmp_path / "p.lock")
    )
    assert rc == 0, err
    lock = json.loads((tmp_path / "p.lock").read_text(encoding="utf-8"))
    validate("lock.schema.json", lock)
    plan = lock["bundle"]["mount_plan"]
    assert plan is not None
    validate("mount-plan.schema.json", plan)
    assert lock["plan_layout"] == str(layout)


def test_a_hand_edited_bundle_is_refused_by_its_readers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    _, out, _ = run(capsys, "compile", *flags, "--format", "bundle")
    doc = json.loads(out)
    doc["compiled"]["profiles"][0]["network_enabled"] = True
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc), encoding="utf-8")
    rc, _, err = run(capsys, "explain", "/etc/hosts", "--mode", "agent", "--bundle", str(edited))
    assert rc == 2
    assert "content hash does not match" in err and "Traceback" not in err
