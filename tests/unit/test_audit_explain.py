"""`profilec explain`: the effective access, the winner, what it beat and by which rule."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from profilec.audit.explain import explain
from profilec.bundle.load import CompileInputs, compile_document
from profilec.check.build import from_bundle
from profilec.check.checker import run_check
from tests.audit_helpers import run, setup, validate


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    rc, out, err = run(capsys, "explain", *argv, "--format", "json")
    assert rc == 0, err
    doc = json.loads(out)
    validate("explain.schema.json", doc)
    assert isinstance(doc, dict)
    return doc


def test_a_path_that_is_no_root_is_explained_by_the_inherited_root_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    doc = _json(capsys, "/etc/hosts", "--mode", "agent", *flags)
    assert doc["access"] == "read"
    winner = doc["winner"]
    assert isinstance(winner, dict)
    assert winner["path"] == "/" and winner["key"] == ":root"
    assert winner["origin"] == "codex-builtin" and winner["file"] == "agent.toml"
    lines = Path("profiles/agent.toml").read_text(encoding="utf-8").split("\n")
    assert lines[int(winner["line"]) - 1].startswith("extends")
    assert doc["chain"] == [] and doc["roots"] == []


def test_the_link_is_decided_at_its_target_with_the_chain_and_the_beaten_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    doc = _json(capsys, str(lay.link), "--mode", "agent", *flags)
    assert doc["access"] == "deny" and doc["lexical_access"] == "read"
    assert doc["real_path"] == str(lay.host_target)
    chain = doc["chain"]
    assert isinstance(chain, list) and len(chain) == 2
    assert chain[0]["link"] == str(lay.link) and chain[-1]["reaches"] == str(lay.host_target)
    winner = doc["winner"]
    assert isinstance(winner, dict)
    assert winner["access"] == "deny" and winner["root_id"] == "codex-auth"
    assert winner["origin"] == "roots-manifest" and winner["file"] == "roots-manifest"
    beaten = doc["beaten"]
    assert isinstance(beaten, list)
    by_path = {b["path"]: b for b in beaten}
    # The deny is on the target's vault; the inherited `:root` loses on specificity.
    assert winner["path"] == str(lay.host_target.parent)
    assert str(lay.host_target.parent) not in by_path
    assert by_path["/"]["rule"] == "lost: more specific"
    assert doc["roots"] == ["codex-auth"]


def test_equal_path_rule_is_named_and_the_policy_line_is_given(tmp_path: Path) -> None:
    from profilec.codex.resolve import EQUAL_PATH_RULE

    lay, _ = setup(tmp_path / "l")
    profiles = tmp_path / "profiles"
    shutil.copytree("profiles", profiles)
    agent = profiles / "agent.toml"
    text = agent.read_text(encoding="utf-8")
    slash_tmp = '":slash_tmp" = "write"\n'
    assert slash_tmp in text
    agent.write_text(text.replace(slash_tmp, slash_tmp + '"/tmp" = "read"\n'), encoding="utf-8")
    line = text.split("\n").index(slash_tmp.rstrip("\n")) + 2
    bundle, doc = compile_document(
        CompileInputs(
            roots=str(lay.manifest), profiles=str(profiles), workspace_roots=(str(lay.workspace),)
        )
    )
    x = explain(bundle, "/tmp/some/file", "agent", provenance=doc["provenance"])
    # `:slash_tmp = write` and `"/tmp" = "read"` (both policy) sit at the same path.
    assert x.access == "write" and x.winner is not None and x.winner.key == ":slash_tmp"
    assert (x.winner.origin, x.winner.file) == ("policy", "agent.toml")
    assert "deny > write > read" in (x.winner.rule or "")
    lost = {b.key: b for b in x.beaten}
    assert lost["/tmp"].rule == f"lost: {EQUAL_PATH_RULE}"
    assert (lost["/tmp"].origin, lost["/tmp"].file, lost["/tmp"].line) == (
        "policy",
        "agent.toml",
        line,
    )
    assert lost[":root"].rule == "lost: more specific"
    # Sandbox carve-outs are attributed to Codex itself.
    x2 = explain(bundle, str(lay.workspace / ".git" / "x"), "agent", provenance=doc["provenance"])
    assert x2.access == "read" and x2.winner is not None
    assert x2.winner.origin == "codex-sandbox"


def test_explain_agrees_with_every_cell_of_the_coverage_matrix(tmp_path: Path) -> None:
    lay, _ = setup(tmp_path / "l")
    bundle, doc = compile_document(
        CompileInputs(
            roots=str(lay.manifest),
            workspace_roots=(str(lay.workspace),),
            codex_home=str(lay.codex_home),
        )
    )
    report = run_check(from_bundle(bundle, bundle.mode_profiles))
    assert report.cells
    for cell in report.cells:
        x = explain(bundle, cell.spelling, cell.mode, provenance=doc["provenance"])
        assert (x.access, x.real_path) == (cell.access, cell.real_path), cell


def test_modes_differ_as_the_policy_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    f = str(lay.workspace / "control.txt")
    assert _json(capsys, f, "--mode", "read-only", *flags)["access"] == "read"
    assert _json(capsys, f, "--mode", "agent", *flags)["access"] == "write"
    full = _json(capsys, "/opt/profilec-anything", "--mode", "agent-full-access", *flags)
    assert full["access"] == "write" and full["network_enabled"] is True
    # The trusted base stays read-only even in full access, and explain says why: / itself is
    # read-only there (top-level directories are written one by one), so /usr needs no entry.
    usr = _json(capsys, "/usr/bin/env", "--mode", "agent-full-access", *flags)
    assert usr["access"] == "read"
    winner = usr["winner"]
    assert isinstance(winner, dict)
    assert winner["key"] == ":root" and "root-split" in winner["detail"]
    top = _json(capsys, "/profilec-new-top-level-name", "--mode", "agent-full-access", *flags)
    assert top["access"] == "read"


def test_a_bundle_file_gives_the_same_answer_as_a_fresh_compile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    bundle = tmp_path / "b.json"
    assert run(capsys, "compile", *flags, "--format", "bundle", "--out", str(bundle))[0] == 0
    live = _json(capsys, str(lay.link), "--mode", "read-only", *flags)
    offline = _json(capsys, str(lay.link), "--mode", "read-only", "--bundle", str(bundle))
    assert live == offline


def test_text_output_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lay, flags = setup(tmp_path / "l")
    rc, out, _ = run(capsys, "explain", str(lay.host_target), "--mode", "agent", *flags)
    assert rc == 0
    assert out.split("\n")[1].startswith("access:  deny")
    assert "winner:  deny" in out and "beaten:  read" in out and "rule: lost: more specific" in out
    rc, _, err = run(capsys, "explain", "/etc", "--mode", "nope", *flags)
    assert rc == 2 and "unknown --mode" in err
    rc, _, err = run(capsys, "explain", "etc/hosts", "--mode", "agent", *flags)
    assert rc == 2 and "must be absolute" in err


def test_a_pinned_ancestor_is_explained_with_the_root_that_caused_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, flags = setup(tmp_path / "l")
    # tmp_path lies under /tmp (writable in agent mode): its own directory is pinned.
    doc = _json(capsys, str(tmp_path), "--mode", "agent", *flags)
    assert doc["access"] == "write"
    text = json.dumps(doc)
    assert "ancestor" in text and "pinned below writable root /tmp" in text


def test_the_vault_and_the_writer_lock_say_why_they_are_denied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay, flags = setup(tmp_path / "l")
    rc, out, _ = run(capsys, "explain", str(lay.link), "--mode", "read-only", *flags)
    assert rc == 0 and "(vault; " in out and "denied whole" in out
    lock = str(lay.codex_home / "auth.lock")
    doc = _json(capsys, lock, "--mode", "agent", *flags)
    winner = doc["winner"]
    assert isinstance(winner, dict) and winner["access"] == "deny"
    assert "stall every save" in str(winner["detail"])


@pytest.mark.parametrize("mode", ["read-only", "agent", "agent-full-access"])
def test_explain_names_the_layers_that_deny_a_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    lay, flags = setup(tmp_path / "l")
    vault = str(lay.host_target.parent)
    # The credential (through its link): the managed requirements first, then the profile.
    doc = _json(capsys, str(lay.link), "--mode", mode, *flags)
    layers = doc["enforced_by"]
    assert isinstance(layers, list)
    assert [(d["layer"], d["entry"]) for d in layers] == [
        ("managed-requirements", vault),
        ("permission-profile", f"{vault} = deny"),
    ]
    assert "whatever mode, cwd, client" in layers[0]["scope"]
    # A path no layer denies says so, in JSON (empty) and in text.
    doc = _json(capsys, "/etc/hosts", "--mode", mode, *flags)
    assert doc["enforced_by"] == []
    rc, out, err = run(capsys, "explain", "/etc/hosts", "--mode", mode, *flags)
    assert rc == 0, err
    assert "enforced by: no layer denies it" in out.split("\n")
