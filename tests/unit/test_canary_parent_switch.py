"""Parent canaries without Codex: the CLI switch, the report shape, the negative control's
profile, and that reports carry no marker (the real runs: tests/integration/test_canary_parent.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import profilec.commands.canary  # noqa: F401  (binds run_canaries at its top)
from profilec.api import load_and_compile
from profilec.canary import parent
from profilec.canary import run as canary_run
from profilec.cli import main
from profilec.models.canary import CanaryMode, CanaryReport, ControlOutcome, Probe
from profilec.resources import validator
from tests.helpers import make_layout, patch_everywhere


def _probe(control: ControlOutcome | None) -> Probe:
    return Probe(
        name="parent-env",
        kind="parent",
        command=("codex", "exec"),
        exit_code=0,
        output="no marker",
        expected="deny",
        predicted=None,
        observed="deny",
        ok=True,
        failures=(),
        seconds=1.5,
        control=control,
    )


def test_probe_dicts_carry_the_control_only_for_parent_probes() -> None:
    assert "control" not in _probe(None).model_dump(mode="json")
    ctl = ControlOutcome(
        observed="allow",
        ok=True,
        output="2 of 2 launcher key markers reached the model",
        seconds=2.0,
    )
    assert _probe(ctl).model_dump(mode="json")["control"] == {
        "observed": "allow",
        "ok": True,
        "seconds": 2.0,
        "output": "2 of 2 launcher key markers reached the model",
    }


def _report_doc(probe: Probe) -> dict[str, Any]:
    report = CanaryReport.of("r", (CanaryMode.of("agent", "p", (probe,), 1.0),), 1.0, "img")
    doc: dict[str, Any] = report.model_dump(mode="json")
    doc["evidence"] = {
        "bundle_content_hash": "sha256:" + "0" * 64,
        "compiled_hash": "sha256:" + "0" * 64,
        "finished": "2026-12-03T00:00:00Z",
        "tools": {},
    }
    return doc


def test_the_schema_takes_parent_probes_and_their_control() -> None:
    v = validator("canary-report.schema.json")
    good = _report_doc(
        _probe(ControlOutcome(observed="allow", ok=True, output="leaked", seconds=2.0))
    )
    v.validate(good)
    bad = json.loads(json.dumps(good))
    bad["modes"][0]["probes"][0]["control"]["extra"] = 1
    with pytest.raises(jsonschema.ValidationError):
        v.validate(bad)
    bad["modes"][0]["probes"][0]["control"] = {"observed": "allow"}
    with pytest.raises(jsonschema.ValidationError):
        v.validate(bad)


def test_a_control_that_did_not_leak_makes_the_probe_an_error() -> None:
    ev = {name: parent._Evidence(False, False, "held") for name in parent.ROADS}
    attack = parent._Attempt(ev, None, 0, 1.0)
    control = parent._Attempt(
        {**ev, "parent-env": parent._Evidence(True, False, "open")}, None, 0, 1.0
    )
    probes = {p.name: p for p in parent._probes("agent", "pid", attack, control)}
    assert probes["parent-env"].ok and probes["parent-env"].control is not None
    for name in set(parent.ROADS) - {"parent-env"}:
        p = probes[name]
        assert p.failures == ("error",) and not p.ok, p
        assert p.control is not None and "control did not leak" in p.control.output
    # The attack leaking is `parent`; a session that could not run is `error` for every road.
    leaked = parent._Attempt({**ev, "parent-env": parent._Evidence(True, False, "x")}, None, 0, 1)
    assert parent._probes("agent", "pid", leaked, control)[0].failures == ("parent",)
    broken = parent._Attempt({}, "first session: exit 1", 1, 1.0)
    assert all(p.failures == ("error",) for p in parent._probes("agent", "p", broken, control))


def test_reports_name_no_marker() -> None:
    m = parent._marker("NONCE")
    assert parent._scrub(f"ran:git uid=0 {m} and {parent._marker('X-Y')}") == (
        "ran:git uid=0 <marker> and <marker>"
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_negative_control_drops_the_parent_policy_and_opens_the_attacked_inputs(
    tmp_path: Path,
) -> None:
    lay = make_layout(tmp_path / "l")
    home = tmp_path / "home"
    home.mkdir()
    bundle = load_and_compile(
        str(lay.manifest),
        workspace_roots=[str(lay.workspace)],
        codex_home=str(lay.codex_home),
        home=str(home),
    )
    assert bundle.parent
    site = parent._site(bundle, control=True)
    try:
        ctl = site.bundle
        assert ctl.parent == () and ctl.other_identities == ()
        assert site.manifest is not None and site.manifest.startswith(site.tree.prefix)
        assert site.home == site.tree.prefix + str(home)
        for p in ctl.profiles:
            entries = {e.path: e.access for e in p.entries}
            for opened in (site.home, site.repo + "/.git", str(Path(site.manifest).parent)):
                assert entries[opened] == "write", (p.mode, opened)
            assert site.manifest not in entries
            assert all(
                a == "deny" for path, a in entries.items() if path.startswith(site.home + "/")
            )
            # The credential stays denied: the control opens the parent's roads only.
            assert any(a == "deny" for a in entries.values())
        assert (Path(site.repo) / ".git" / "HEAD").is_file()
        png = Path(site.tree.secrets[0][1]).read_bytes()
        assert png.startswith(b"\x89PNG") and site.tree.marker.encode() in png
    finally:
        shutil.rmtree(site.tree.base)
    fresh = parent._site(bundle, control=False)
    try:
        assert fresh.bundle.parent == bundle.parent
        assert fresh.bundle.layout.workspace_roots == (fresh.tree.workspace,)
    finally:
        shutil.rmtree(fresh.tree.base)


class _FakeReport:
    passed = True
    failures: tuple[str, ...] = ()
    mismatch_only = False

    def to_text(self) -> str:
        return "fake\n"


def test_canary_runs_the_parent_probes_unless_told_not_to(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lay = make_layout(tmp_path / "l")
    home = tmp_path / "home"
    home.mkdir()
    codex = tmp_path / "codex"
    codex.write_text("", encoding="utf-8")
    monkeypatch.setenv("PROFILEC_CODEX_BIN", str(codex))
    calls: list[tuple[Any, dict[str, Any]]] = []

    def run_canaries(bundle: Any, **kw: Any) -> _FakeReport:
        calls.append((bundle, kw))
        return _FakeReport()

    patch_everywhere(monkeypatch, canary_run.run_canaries, run_canaries)
    base = [
        "canary",
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]
    assert main(base) == 0
    assert main([*base, "--no-parent", "--home", str(home)]) == 0
    assert [kw["parent_probes"] for _, kw in calls] == [True, False]
    assert calls[0][0].layout.home is None
    assert calls[1][0].layout.home == str(home)  # --home reaches the compile (HOME's entries)
    assert capsys.readouterr().out == "fake\nfake\n"
