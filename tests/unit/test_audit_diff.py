"""`profilec diff`: semantic widening/narrowing per mode, widening first, exit 1 on widening."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st

from profilec.audit.diff import diff_sides, side_from_config
from profilec.codex.resolve import PLACEHOLDER_CWD, EvalContext, resolve
from profilec.trustedbase import under_temp_dir
from tests.audit_helpers import run, setup, validate
from tests.helpers import write_manifest

MODES = {"agent": "p"}


def _config(path: Path, profile: dict[str, Any]) -> Path:
    doc = {"default_permissions": "p", "permissions": {"p": profile}}
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path


def _mode_map(tmp_path: Path) -> Path:
    p = tmp_path / "modes.json"
    p.write_text(json.dumps(MODES), encoding="utf-8")
    return p


def _diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: dict[str, Any], new: dict[str, Any]
) -> tuple[int, str, dict[str, Any]]:
    a = _config(tmp_path / "old.toml", old)
    b = _config(tmp_path / "new.toml", new)
    mm = _mode_map(tmp_path)
    rc, out, err = run(capsys, "diff", str(a), str(b), "--mode-map", str(mm))
    rc2, js, _ = run(capsys, "diff", str(a), str(b), "--mode-map", str(mm), "--format", "json")
    assert rc == rc2, err
    doc = json.loads(js)
    validate("diff.schema.json", doc)
    return rc, out, doc


def test_a_removed_deny_widens_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = {"extends": ":read-only", "filesystem": {"/srv/secret": "deny"}}
    new = {"extends": ":read-only", "filesystem": {}}
    rc, out, doc = _diff(tmp_path, capsys, old, new)
    assert rc == 1
    assert "  ! [agent] access /srv/secret: deny -> read" in out
    assert doc["widening"] == 1 and doc["changes"][0]["direction"] == "widening"


def test_read_to_write_and_network_widen_and_are_listed_before_narrowing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = {"extends": ":read-only", "filesystem": {"/data": "read", "/logs": "write"}}
    new = {
        "extends": ":read-only",
        "filesystem": {"/data": "write", "/logs": "read"},
        "network": {"enabled": True},
    }
    rc, out, doc = _diff(tmp_path, capsys, old, new)
    assert rc == 1
    directions = [c["direction"] for c in doc["changes"]]
    assert directions == sorted(directions, key=["widening", "narrowing", "neutral"].index)
    whats = {(c["what"], c.get("path"), c["direction"]) for c in doc["changes"]}
    assert ("network", None, "widening") in whats
    assert ("access", "/data", "widening") in whats
    assert ("access", "/logs", "narrowing") in whats
    assert out.index("WIDENING") < out.index("narrowing")


def test_extends_changed_is_classified_by_what_it_grants(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, doc = _diff(tmp_path, capsys, {"extends": ":read-only"}, {"extends": ":workspace"})
    assert rc == 1
    assert any(c["what"] == "extends" and c["direction"] == "widening" for c in doc["changes"])
    rc, _, doc = _diff(tmp_path, capsys, {"extends": ":workspace"}, {"extends": ":read-only"})
    assert rc == 0 and doc["widening"] == 0 and doc["narrowing"] >= 2


def test_a_textual_change_with_no_effect_is_not_widening(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A new `read` entry under a tree `:root` already reads changes the text, not the access.
    old = {"extends": ":read-only", "filesystem": {}}
    new = {"extends": ":read-only", "filesystem": {"/etc": "read"}}
    rc, out, doc = _diff(tmp_path, capsys, old, new)
    assert rc == 0 and doc["changes"] == [] and "no changes" in out


def test_bundles_and_lock_files_diff_by_their_compiled_profiles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    # Policy: agent-full-access without network, then with it (the widening its meaning allows;
    # agent with network is refused at load). Manifest: a second root -> a new deny (narrowing).
    profiles = tmp_path / "profiles"
    shutil.copytree("profiles", profiles)
    full = profiles / "agent-full-access.toml"
    full_text = full.read_text(encoding="utf-8")
    full.write_text(full_text.replace("enabled = true", "enabled = false"), encoding="utf-8")
    flags = [*flags, "--profiles", str(profiles)]
    old = tmp_path / "old.lock"
    assert run(capsys, "lock", *flags, "--out", str(old))[0] == 0
    same = tmp_path / "same.json"
    assert run(capsys, "compile", *flags, "--format", "bundle", "--out", str(same))[0] == 0
    rc, out, _ = run(capsys, "diff", str(old), str(same))
    assert rc == 0 and "no changes" in out
    full.write_text(full_text, encoding="utf-8")
    (lay.base / "other-vault").mkdir()
    other = lay.base / "other-vault" / "other.json"
    other.write_text("{}\n", encoding="utf-8")
    write_manifest(
        lay.manifest,
        [
            {"id": "codex-auth", "path": str(lay.link), "backend": "codex"},
            {"id": "other", "path": str(other)},
        ],
    )
    new = tmp_path / "new.json"
    rc, _, err = run(
        capsys,
        "compile",
        *flags,
        "--format",
        "bundle",
        "--out",
        str(new),
    )
    assert rc == 0, err
    rc, js, _ = run(capsys, "diff", str(old), str(new), "--format", "json")
    assert rc == 1
    changes = json.loads(js)["changes"]
    assert changes[0] == {
        "mode": "agent-full-access",
        "what": "network",
        "direction": "widening",
        "path": None,
        "old": "disabled",
        "new": "enabled",
        "detail": "disabled -> enabled",
    }
    narrowing = {(c["mode"], c["path"]) for c in changes if c["direction"] == "narrowing"}
    assert narrowing == {
        (m, p)
        for m in ("read-only", "agent", "agent-full-access")
        for p in (str(other), str(other.parent))  # the new root's target and its vault
    } | {
        # The other policy directory is a trusted-side input: read-only where a mode writes it
        # (unless it is a scratch copy under the temp dir, which is left out).
        (m, str(profiles))
        for m in ("agent", "agent-full-access")
        if not under_temp_dir(str(profiles.resolve()))
    }
    assert any(c["what"] == "root" and "'other' added" in c["detail"] for c in changes)


def test_unreadable_input_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, err = run(capsys, "diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert rc == 2 and err.count("\n") == 1 and err.startswith("profilec: input:")


# -- property: the probe set is complete --------------------------------------------------------

_PATHS = ["/a", "/a/b", "/a/b/c", "/a/x", "/q", "/q/r"]
_tables = st.dictionaries(
    st.sampled_from([*_PATHS, ":root"]), st.sampled_from(["read", "write", "deny"]), max_size=5
)
_RANK = {None: 0, "deny": 0, "read": 1, "write": 2}
_CTX = EvalContext(cwd=PLACEHOLDER_CWD)


@settings(max_examples=300, deadline=None)
@given(_tables, _tables, st.sampled_from([*_PATHS, "/a/b/c/d", "/z", "/a/b/zz", "/q/r/s/t"]))
def test_every_access_difference_at_any_path_is_reported_with_its_direction(
    a: dict[str, str], b: dict[str, str], query: str
) -> None:
    old = {"permissions": {"p": {"filesystem": a}}}
    new = {"permissions": {"p": {"filesystem": b}}}
    report = diff_sides(side_from_config(old, MODES, "old"), side_from_config(new, MODES, "new"))
    ra = _RANK[resolve(old["permissions"], "p", _CTX).decide(query).access]
    rb = _RANK[resolve(new["permissions"], "p", _CTX).decide(query).access]
    if rb > ra:
        assert report.widening > 0
    if rb < ra:
        assert report.narrowing > 0
    back = diff_sides(side_from_config(new, MODES, "new"), side_from_config(old, MODES, "old"))
    assert (back.widening, back.narrowing) == (report.narrowing, report.widening)


@pytest.mark.parametrize(
    ("fmt", "ext"), [("overrides", "txt"), ("acp-json", "json"), ("toml", "toml")]
)
def test_compiled_launcher_outputs_diff_semantically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, ext: str
) -> None:
    _, flags = setup(tmp_path / "l")
    profiles = tmp_path / "profiles"
    shutil.copytree("profiles", profiles)
    old = tmp_path / f"old.{ext}"
    assert (
        run(
            capsys,
            "compile",
            *flags,
            "--profiles",
            str(profiles),
            "--format",
            fmt,
            "--out",
            str(old),
        )[0]
        == 0
    )
    ro = profiles / "read-only.toml"
    text = ro.read_text(encoding="utf-8")
    new = tmp_path / f"new.{ext}"
    # Widened to :workspace (or any write), the policy is refused: read-only writes nothing.
    ro.write_text(text.replace('extends = ":read-only"', 'extends = ":workspace"'), "utf-8")
    rc, _, err = run(
        capsys, "compile", *flags, "--profiles", str(profiles), "--format", fmt, "--out", str(new)
    )
    assert rc == 2 and "mode 'read-only' grants more than it means" in err, err
    ro.write_text(text, encoding="utf-8")
    # Widened where the mode allows it (agent writes the whole host), it compiles.
    ag = profiles / "agent.toml"
    atext = ag.read_text(encoding="utf-8")
    ag.write_text(atext.replace("[filesystem]", '[filesystem]\n":root" = "write"'), "utf-8")
    assert (
        run(
            capsys,
            "compile",
            *flags,
            "--profiles",
            str(profiles),
            "--format",
            fmt,
            "--out",
            str(new),
        )[0]
        == 0
    )
    ws = flags[flags.index("--workspace-root") + 1]
    rc, out, err = run(capsys, "diff", str(old), str(new), "--workspace-root", ws)
    assert rc == 1, err
    assert "! [agent] access " in out and ": read -> write" in out
    assert "[read-only]" not in out
