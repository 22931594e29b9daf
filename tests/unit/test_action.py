"""The GitHub Action (action.yml) and the README's workflow: SARIF always, uploaded always.

The check step's script runs as written in action.yml (scripts/run_action.py substitutes the
inputs and plays the runner) against a stand-in for the venv the install step builds, which runs
this checkout's profilec; scripts/wheel-smoke.sh runs every step, the real install included.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from profilec.emit.requirements import render_requirements
from profilec.library import load_and_compile
from tests.helpers import Layout, make_layout

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / "action.yml"


def _action() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return doc


def _steps() -> dict[str, dict[str, Any]]:
    return {str(s.get("id", s.get("name"))): s for s in _action()["runs"]["steps"]}


def test_inputs_reach_scripts_only_through_env() -> None:
    """No `${{ }}` inside a `run:` (an input there would be spliced into shell)."""
    for step in _action()["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step.get("id")
            assert step["shell"] == "bash"


def test_every_expression_names_a_declared_input_or_step() -> None:
    declared = set(_action()["inputs"])
    ids = {s.get("id") for s in _action()["runs"]["steps"]}
    for ref in re.findall(r"inputs\.([a-z-]+)", ACTION.read_text(encoding="utf-8")):
        assert ref in declared, ref
    for ref in re.findall(r"steps\.([a-z-]+)\.outputs", ACTION.read_text(encoding="utf-8")):
        assert ref in ids, ref


def test_install_comes_from_the_actions_own_path_and_upload_always_runs() -> None:
    steps = _steps()
    assert steps["install"]["env"]["PROFILEC_ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$PROFILEC_ACTION_PATH"' in steps["install"]["run"]
    upload = next(s for s in steps.values() if "uses" in s)
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert str(upload["if"]).startswith("always()")


@pytest.fixture
def shim(tmp_path: Path) -> Path:
    """RUNNER_TEMP with `profilec-venv/bin/{profilec,python}` running this checkout."""
    temp = tmp_path / "runner-temp"
    bindir = temp / "profilec-venv" / "bin"
    bindir.mkdir(parents=True)
    env = f'export PYTHONPATH="{REPO}${{PYTHONPATH:+:$PYTHONPATH}}"\n'
    (bindir / "profilec").write_text(
        f'#!/bin/sh\n{env}exec "{sys.executable}" -P -m profilec.cli "$@"\n', encoding="utf-8"
    )
    (bindir / "python").write_text(f'#!/bin/sh\n{env}exec "{sys.executable}" "$@"\n')
    for f in bindir.iterdir():
        f.chmod(0o755)
    return temp


def _run_check(temp: Path, lay: Layout, **inputs: str) -> tuple[int, dict[str, Any], Path]:
    sarif = lay.base / "out" / "profilec.sarif"
    sarif.parent.mkdir(exist_ok=True)
    argv = [
        sys.executable,
        str(REPO / "scripts" / "run_action.py"),
        "--action",
        str(ACTION),
        "--workdir",
        str(lay.base),
        "--temp",
        str(temp),
        "--step",
        "check",
        "--step",
        "upload",
        "--input",
        f"roots={lay.manifest}",
        "--input",
        f"workspace-root={lay.workspace}",
        "--input",
        f"sarif={sarif}",
    ]
    argv += [a for k, v in inputs.items() for a in ("--input", f"{k.replace('_', '-')}={v}")]
    proc = subprocess.run(
        argv, capture_output=True, text=True, check=False, env={**os.environ, "NO_COLOR": "1"}
    )
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout), sarif


def _upload(doc: dict[str, Any]) -> dict[str, Any]:
    step: dict[str, Any] = next(s for s in doc["steps"] if s.get("kind") == "uses")
    return step


def test_a_clean_check_writes_sarif_and_uploads_it(tmp_path: Path, shim: Path) -> None:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    # The launch's managed requirements, named: without them check warns (PC057).
    req = lay.base / "requirements.toml"
    bundle = load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )
    req.write_text(render_requirements(bundle), encoding="utf-8")
    rc, doc, sarif = _run_check(shim, lay, args=f"--requirements {req}")
    assert rc == 0 and doc["outputs"]["exit-code"] == "0"
    log = json.loads(sarif.read_text(encoding="utf-8"))
    assert log["version"] == "2.1.0" and log["runs"][0]["results"] == []
    assert _upload(doc)["skipped"] == "uses: steps need GitHub"  # it would run
    assert _upload(doc)["with"]["sarif_file"] == str(sarif)


def test_findings_fail_the_step_and_the_sarif_is_still_written_and_uploaded(
    tmp_path: Path, shim: Path
) -> None:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    bad = lay.base / "config.toml"
    bad.write_text('sandbox_mode = "danger-full-access"\n', encoding="utf-8")
    rc, doc, sarif = _run_check(shim, lay, args=f"--config {bad}")
    assert rc == 1 and doc["outputs"]["exit-code"] == "1"
    results = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
    assert results, "findings but an empty SARIF"
    # after the failed check, the upload step still runs (if: always())
    assert _upload(doc)["skipped"] == "uses: steps need GitHub"
    assert lay.marker not in sarif.read_text(encoding="utf-8")


def test_a_check_that_cannot_start_still_hands_code_scanning_a_log(
    tmp_path: Path, shim: Path
) -> None:
    """Production paths missing on the runner: exit 4, no SARIF from check; the action writes
    one whose invocation failed, carrying profilec's one-line error."""
    lay = make_layout(tmp_path / "l", hop_dir=True)
    lay.host_target.unlink()
    rc, doc, sarif = _run_check(shim, lay)
    assert rc == 4 and doc["outputs"]["exit-code"] == "4"
    run = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False and inv["exitCode"] == 4
    assert inv["toolExecutionNotifications"][0]["message"]["text"].startswith("profilec: ")
    assert run["results"] == []
    assert _upload(doc)["skipped"] == "uses: steps need GitHub"
    # the action's own log is valid SARIF 2.1.0 (OASIS schema)
    import jsonschema

    schema = json.loads((REPO / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(json.loads(sarif.read_text(encoding="utf-8")))


def test_every_python_the_action_runs_ignores_the_checkout() -> None:
    """`python -m X` and `python -` put the working directory (the pull request's checkout)
    first on sys.path: each interpreter the steps start runs isolated (-I)."""
    for step in _action()["runs"]["steps"]:
        for line in step.get("run", "").split("\n"):
            if re.search(r'(PYTHON"|/bin/python") ', line):
                assert re.search(r'(PYTHON"|/bin/python") -I ', line), line
    assert "--no-project-config" in _steps()["check"]["run"]


def test_a_pull_requests_tree_steers_no_step(tmp_path: Path, shim: Path) -> None:
    """The checkout (the workdir) holds a waiver of every finding and a `json` module the
    failure step would import: neither is used."""
    lay = make_layout(tmp_path / "l", hop_dir=True)
    bad = lay.base / "config.toml"
    bad.write_text('sandbox_mode = "danger-full-access"\n', encoding="utf-8")
    (lay.base / "profilec.toml").write_text(
        '[[waiver]]\nrule = "PC044"\nreason = "pr"\n', encoding="utf-8"
    )
    rc, _, sarif = _run_check(shim, lay, args=f"--config {bad}", fail_on="note")
    assert rc == 1
    results = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
    assert "PC044" in {r["ruleId"] for r in results}
    assert not any(r.get("suppressions") for r in results)
    # A waivers file named in `args` is refused, not read from the tree.
    sarif.unlink()
    rc, _, sarif = _run_check(shim, lay, args=f"--project-config {lay.base / 'profilec.toml'}")
    assert rc == 2
    text = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["invocations"][0]
    assert "not both" in text["toolExecutionNotifications"][0]["message"]["text"]
    # The failure step's Python imports no `json` from the checkout.
    marker = tmp_path / "planted-ran"
    (lay.base / "json.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    lay.host_target.unlink()
    sarif.unlink()
    rc, _, sarif = _run_check(shim, lay)
    assert rc == 4 and not marker.exists()
    assert (
        json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["invocations"][0]["exitCode"] == 4
    )


def _readme_workflow() -> dict[str, Any]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    docs = [yaml.safe_load(b) for b in blocks]
    flows = [d for d in docs if isinstance(d, dict) and "jobs" in d]
    assert len(flows) == 1, "the README shows one workflow"
    flow: dict[str, Any] = flows[0]
    return flow


def test_readme_workflow_grants_code_scanning_and_uses_the_action() -> None:
    flow = _readme_workflow()
    assert flow["permissions"]["security-events"] == "write"
    job = next(iter(flow["jobs"].values()))
    used = [s for s in job["steps"] if "profilec" in str(s.get("uses", ""))]
    assert len(used) == 1
    assert set(used[0]["with"]) <= set(_action()["inputs"])
    assert "roots" in used[0]["with"]


def test_the_readme_workflow_passes_on_a_runner_without_the_production_paths(
    tmp_path: Path, shim: Path
) -> None:
    """The README's job as a script: its run steps, then the action's check step with the
    README's inputs and the CI manifest docs/ci.md shows (production paths, allow_missing)."""
    flow = _readme_workflow()
    job = next(iter(flow["jobs"].values()))
    ci_doc = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    manifest = next(
        b
        for b in re.findall(r"```toml\n(.*?)```", ci_doc, flags=re.S)
        if "allow_missing = true" in b
    )
    workspace = tmp_path / "ws"
    (workspace / "ci").mkdir(parents=True)
    action_step = next(s for s in job["steps"] if "profilec" in str(s.get("uses", "")))
    roots = workspace / action_step["with"]["roots"]
    roots.write_text(manifest, encoding="utf-8")
    assert not Path(tomllib_path(manifest)).exists(), "the CI manifest must name a missing path"
    env = {**os.environ, "RUNNER_TEMP": str(shim), "GITHUB_WORKSPACE": str(workspace)}
    for step in job["steps"]:
        if "run" in step:
            subprocess.run(["bash", "-e", "-c", step["run"]], cwd=workspace, env=env, check=True)
    # The committed requirements file the README's args name: docs/ci.md's recipe, with the
    # runner's compile flags (a host's file would be committed; this one is what it compiles to).
    subprocess.run(
        [
            *(sys.executable, "-m", "profilec.cli", "compile", "--roots", str(roots)),
            *("--codex-home", str(shim / "codex-home"), "--format", "requirements"),
            *("--out", str(workspace / "ci" / "requirements.toml")),
        ],
        cwd=workspace,
        env=env,
        check=True,
    )
    inputs = {
        k: str(v).replace("${{ runner.temp }}", str(shim)) for k, v in action_step["with"].items()
    }
    sarif = workspace / "profilec.sarif"
    argv = [
        sys.executable,
        str(REPO / "scripts" / "run_action.py"),
        "--action",
        str(ACTION),
        "--workdir",
        str(workspace),
        "--temp",
        str(shim),
        "--step",
        "check",
        "--step",
        "upload",
        "--input",
        f"sarif={sarif}",
    ]
    argv += [a for k, v in inputs.items() for a in ("--input", f"{k}={v}")]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    run = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]
    assert all(i.get("executionSuccessful", True) for i in run.get("invocations", []))
    # the intended paths are denied but missing on the runner: warnings, no error; the managed
    # requirements are named and hold (no PC056, no PC057)
    assert {r["level"] for r in run["results"]} <= {"warning", "note"}
    assert {r["ruleId"] for r in run["results"]} <= {"PC007"}


def tomllib_path(manifest: str) -> str:
    import tomllib

    path: str = tomllib.loads(manifest)["roots"][0]["path"]
    return path
