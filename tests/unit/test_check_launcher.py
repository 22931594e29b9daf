"""PC023: a launcher request carries a legacy sandboxPolicy or sandbox (--launch-requests);
PC052: the launch environment leaves the parent's git on (--launch-env, --launch-argv)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from profilec.check.lints.launcher import LEGACY_FIELDS, launcher_findings, parse_launch_requests
from profilec.cli import main
from profilec.emit.launch import render_launch
from profilec.errors import InputError
from profilec.library import load_and_compile
from profilec.paths import PARENT_GIT_DIR
from tests.helpers import make_layout

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "launch-request.schema.json").read_text()
)


def _line(method: str, **params: object) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


@pytest.mark.parametrize(("method", "field"), sorted(LEGACY_FIELDS.items()))
def test_every_legacy_field_fires_with_its_line(method: str, field: str) -> None:
    text = _line("initialize") + "\n" + _line(method, **{field: {"type": "readOnly"}}) + "\n"
    found = launcher_findings(parse_launch_requests(text, where="r.jsonl"), file="r.jsonl")
    assert [(f.rule, f.line, f.file) for f in found] == [("PC023", 2, "r.jsonl")]
    expected = "its deny is dropped" if field == "sandbox" else "only its deny entries survive"
    assert expected in found[0].message


def test_danger_full_access_says_the_deny_is_dropped() -> None:
    text = _line("turn/start", sandboxPolicy={"type": "dangerFullAccess"})
    found = launcher_findings(parse_launch_requests(text, where="r"))
    assert "deny are dropped" in found[0].message


def test_profile_selection_by_permissions_is_quiet() -> None:
    text = "\n".join(
        [
            _line("thread/start", cwd="/w", config={"default_permissions": "p"}),
            _line("turn/start", threadId="t", permissions="profilec-agent"),
            _line("turn/start", threadId="t", sandboxPolicy=None),
            json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"sandbox": {"type": "readOnly"}}}),
        ]
    )
    assert launcher_findings(parse_launch_requests(text, where="r")) == []


def test_lines_split_on_newline_only() -> None:
    text = _line(
        "turn/start",
        input=[{"type": "text", "text": "a\u2028b\rc"}],
        sandboxPolicy={"type": "workspaceWrite"},
    )
    reqs = parse_launch_requests(text + "\n", where="r")
    assert len(reqs) == 1 and reqs[0].params["input"][0]["text"] == "a\u2028b\rc"


@pytest.mark.parametrize(
    "bad", ["not json", "[1]", '{"params": {}}', '{"method": 3}', '{"method": "x", "params": [1]}']
)
def test_malformed_line_is_an_input_error_naming_the_line(bad: str) -> None:
    with pytest.raises(InputError) as info:
        parse_launch_requests(_line("initialize") + "\n" + bad, where="r.jsonl")
    assert "r.jsonl:2" in info.value.one_line()


def test_schema_agrees_with_the_parser() -> None:
    good = [
        json.loads(_line("turn/start", sandboxPolicy={"type": "readOnly"})),
        {"id": 1, "result": {}},
        {"id": 1, "error": {"code": 1, "message": "x"}},
        {"method": "initialized"},
    ]
    bad = [{"params": {}}, {"method": 3}, {"method": "x", "params": [1]}]
    for doc in good:
        jsonschema.validate(doc, SCHEMA)
        parse_launch_requests(json.dumps(doc), where="r")
    for doc in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(doc, SCHEMA)
        with pytest.raises(InputError):
            parse_launch_requests(json.dumps(doc), where="r")


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    base = [
        "check",
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]
    legacy = tmp_path / "legacy.jsonl"
    legacy.write_text(_line("turn/start", sandboxPolicy={"type": "workspaceWrite"}) + "\n")
    clean = tmp_path / "clean.jsonl"
    clean.write_text(_line("turn/start", permissions="profilec-agent") + "\n")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{\n")
    assert main([*base, "--launch-requests", str(clean)]) == 0
    capsys.readouterr()
    assert main([*base, "--launch-requests", str(legacy), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    # PC057: the run names no managed requirements file (a warning)
    assert {f["rule"] for f in doc["findings"]} == {"PC023", "PC057"}
    assert doc["findings"][0]["line"] == 1
    assert main([*base, "--launch-requests", str(broken)]) == 2


def test_pc052_the_launch_environment_turns_the_parents_git_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PC052: a launch whose environment lacks GIT_DIR below /dev/null is refused (exit 1):
    given as --launch-env (a JSON object or a launch document), as a launch document on
    --launch-argv, or as a bare argv with no environment at all. The compiled launch document
    passes; the same document with GIT_DIR dropped (the README's steps and `-c` recipe, which
    never name it) does not."""
    lay = make_layout(tmp_path / "l", hop_dir=True)
    flags = ["--roots", str(lay.manifest), "--workspace-root", str(lay.workspace)]
    flags += ["--codex-home", str(lay.codex_home)]
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    launch = json.loads(render_launch(bundle))
    holding = [a for a in launch["adapters"] if a["holds"]]
    assert holding and all(a["env"]["GIT_DIR"] == PARENT_GIT_DIR for a in holding)

    def pc052(*extra: str) -> list[str]:
        code = main(["check", *flags, "--format", "json", *extra])
        found = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "PC052"]
        assert (code == 1) is bool(found), (code, found)
        return [f["message"] for f in found]

    def write(name: str, doc: object) -> str:
        (tmp_path / name).write_text(json.dumps(doc))
        return str(tmp_path / name)

    doc = write("launch.json", launch)
    assert pc052("--launch-argv", doc) == []
    assert pc052("--launch-env", doc) == []
    stripped = json.loads(json.dumps(launch))
    for a in stripped["adapters"] + stripped["codex"]:
        a["env"].pop("GIT_DIR", None)
    found = pc052("--launch-argv", write("stripped.json", stripped))
    assert len(found) == len(holding) + len(launch["codex"]), found
    assert all("no GIT_DIR" in m for m in found)
    argv = write("argv.json", ["codex-acp"])
    assert pc052("--launch-argv", argv) == [
        "the launch's environment was not given, so nothing shows GIT_DIR is set"
    ]
    good = write("env.json", {"PATH": "/usr/bin:/bin", "GIT_DIR": PARENT_GIT_DIR})
    assert pc052("--launch-argv", argv, "--launch-env", good) == []
    assert pc052("--launch-env", write("none.json", {"PATH": "/usr/bin"})) == [
        "env: no GIT_DIR: the parent's git runs a planted repository's filters"
    ]
    may_exist = write("tmp.json", {"GIT_DIR": str(tmp_path / "git")})
    assert "a path that may exist" in pc052("--launch-env", may_exist)[0]
    assert main(["check", *flags, "--launch-env", write("bad.json", [1])]) == 2
    # Not waivable.
    assert main(["check", *flags, "--launch-env", may_exist, "--ignore", "PC052"]) == 2
