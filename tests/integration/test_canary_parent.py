"""The parent canaries (compiler/canary/parent.py) for real: the pinned `codex exec` against the
scripted loopback model, on a compiled example bundle, in every mode.

* The shipped example layout (examples/make-layout.sh) with a session HOME and a second
  identity declared in its manifest: every parent probe passes in every mode, and each
  probe's negative control leaked for its own reason (marker seen, proof file written,
  manifest changed): the probes can tell.
* The user-visible negative control: the same bundle with its parent policy stripped makes the
  parent canary FAIL (`parent`) on the environment, login-shell and spawn_agent roads.
* Yesterday's compile (no trusted-side input paths, no other-identity denies) fails the git,
  login-shell, identity and manifest probes in agent-full-access.

Markers are random (secrets.token_hex); nothing real is read. Scratch trees live under /var/tmp
(Codex refuses a CODEX_HOME under the system temp dir) and are removed by the probes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import profilec.pipeline
from profilec.audit.evidence import bind
from profilec.bundle.load import CompileInputs, compile_document
from profilec.canary.parent import ROADS, run_parent
from profilec.check.lints.canary import canary_findings
from profilec.models.canary import CanaryMode, CanaryReport, ControlOutcome, Probe
from profilec.models.compiled import CompiledBundle, CompiledEntry
from tests.audit_helpers import validate
from tests.integration.conftest import missing
from tests.integration.test_identities_codex import compile_a1, two_identities

pytestmark = [pytest.mark.codex, pytest.mark.bwrap]

REPO = Path(__file__).resolve().parents[2]
MODES = ("read-only", "agent", "agent-full-access")
#: The roads the parent policy (profiles/parent.toml) closes.
POLICY_ROADS = {"parent-env", "parent-login-shell", "parent-spawn-media"}


@pytest.fixture(scope="module")
def codex(codex_bin: Path) -> Path:
    if shutil.which("bwrap") is None:
        missing("bwrap is not installed (apt-get install -y bubblewrap; see .ci/tools.sh)")
    if shutil.which("git") is None:
        missing("git is not installed")
    return codex_bin


@pytest.fixture(scope="module")
def example() -> Iterator[tuple[CompiledBundle, dict[str, Any]]]:
    """The shipped example layout, a session HOME, and a second identity a2 in its manifest."""
    d = Path(tempfile.mkdtemp(prefix="profilec-parent-canary-"))
    try:
        subprocess.run(
            ["bash", str(REPO / "examples" / "make-layout.sh"), str(d)],
            check=True,
            capture_output=True,
            timeout=60,
        )
        (d / "home").mkdir()
        for sub in ("codex-home", "home"):
            (d / "agents" / "a2" / sub).mkdir(parents=True)
        manifest = d / "roots.toml"
        with manifest.open("a", encoding="utf-8") as fh:
            fh.write(
                f'\n[[identities]]\nid = "a2"\ncodex_home = "{d}/agents/a2/codex-home"\n'
                f'home = "{d}/agents/a2/home"\n'
            )
        bundle, doc = compile_document(
            CompileInputs(
                roots=str(manifest),
                workspace_roots=(str(d / "workspace"),),
                codex_home=str(d / "agent" / "codex-home"),
                home=str(d / "home"),
            )
        )
        assert bundle.parent and bundle.other_identities, bundle.other_identities
        yield bundle, doc
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _run(bundle: CompiledBundle, codex: Path, modes: tuple[str, ...]) -> dict[str, list[Probe]]:
    t0 = time.monotonic()
    found, notes = run_parent(bundle, codex_bin=codex, modes=modes)
    print(f"\nparent canaries {', '.join(modes)}: {time.monotonic() - t0:.1f}s wall {notes}")
    for mode, probes in found.items():
        for p in probes:
            ctl = p.control
            print(
                f"  {mode} {p.name}: {'ok' if p.ok else 'FAIL'} {p.failures} {p.seconds}s"
                f" | {p.output} | control: "
                + (f"{ctl.observed} {ctl.seconds}s {ctl.output}" if ctl else "none")
            )
    return found


def _control(p: Probe) -> ControlOutcome:
    assert p.control is not None, p
    return p.control


@pytest.fixture(scope="module")
def shipped(codex: Path, example: tuple[CompiledBundle, dict[str, Any]]) -> dict[str, list[Probe]]:
    return _run(example[0], codex, MODES)


def test_every_parent_probe_passes_in_every_mode_and_every_control_leaked(
    shipped: dict[str, list[Probe]],
) -> None:
    assert list(shipped) == list(MODES)
    for mode, probes in shipped.items():
        assert [p.name for p in probes] == list(ROADS), mode
        for p in probes:
            assert p.kind == "parent" and p.ok, (mode, p)
            assert p.observed == "deny" and p.failures == (), (mode, p)
            # Each control failed for its reason: the road was open without the protection.
            assert p.control is not None and p.control.ok, (mode, p)
            assert p.control.observed == "allow", (mode, p)
        by = {p.name: p for p in probes}
        assert "unsupported" in by["parent-spawn-media"].output
        assert "reached 1 request" in _control(by["parent-spawn-media"]).output
        assert "2 of 2 launcher key markers" in _control(by["parent-env"]).output
        for name in ("parent-login-shell", "parent-git-repo-config", "parent-git-home-config"):
            assert "uid=" in _control(by[name]).output, (mode, name)
        assert "lock held for a2" in _control(by["parent-identity"]).output
        assert "manifest changed" in _control(by["parent-manifest"]).output


def test_parent_probes_in_the_canary_report_validate_and_make_no_finding(
    shipped: dict[str, list[Probe]],
    example: tuple[CompiledBundle, dict[str, Any]],
) -> None:
    bundle, doc = example
    modes = tuple(
        CanaryMode.of(m, bundle.profile_for(m).profile_id, tuple(p), 1.0)
        for m, p in shipped.items()
    )
    report = CanaryReport.of("parent-test", modes, 1.0, "none")
    assert report.passed
    # As `profilec canary --format json` writes it (bound to the bundle, through JSON).
    bound = json.loads(json.dumps(bind(report.model_dump(mode="json"), doc, datetime.now(tz=UTC))))
    validate("canary-report.schema.json", bound)
    assert canary_findings(bound) == []
    text = json.dumps(bound)
    assert '"kind": "parent"' in text and '"control": {' in text
    assert "PROFILEC-CANARY-" not in text  # reports carry no marker, not even a random one


def test_a_bundle_without_the_parent_policy_fails_the_parent_canary(
    codex: Path,
    example: tuple[CompiledBundle, dict[str, Any]],
) -> None:
    stripped = example[0].model_copy(update={"parent": ()})
    found = _run(stripped, codex, ("agent",))
    probes = {p.name: p for p in found["agent"]}
    failed = {n for n, p in probes.items() if not p.ok}
    assert failed == POLICY_ROADS, failed
    for name in POLICY_ROADS:
        p = probes[name]
        assert p.failures == ("parent",) and p.observed == "allow", p
        assert p.control is not None and p.control.ok, p  # the probe could tell
    assert "2 of 2 launcher key markers" in probes["parent-env"].output
    assert "the parent ran the login payload" in probes["parent-login-shell"].output
    assert "spawned" in probes["parent-spawn-media"].output
    report = CanaryReport.of(
        "stripped", (CanaryMode.of("agent", "x", tuple(found["agent"]), 1.0),), 1.0
    )
    assert not report.passed and "parent" in report.failures
    findings = canary_findings(report.model_dump(mode="json"))
    assert sorted(f.message.split(" ")[3].rstrip(":") for f in findings) == sorted(POLICY_ROADS)


def _yesterday_drops(e: CompiledEntry) -> bool:
    """An entry the output before issue 21 did not have: another identity's deny, the read
    entry on the roots manifest."""
    return any(
        x.reason == "other-identity"
        or (x.reason == "trusted-base" and (x.detail or "").startswith("input: roots manifest"))
        for x in e.provenance
    )


@pytest.fixture
def base() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="profilec-parent-canary-", dir="/var/tmp"))
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_yesterdays_bundle_fails_the_input_and_identity_probes_in_full_access(
    codex: Path,
    base: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Compiled without the trusted-side input paths and the other-identity denies (the output
    before issue 21), on a layout whose workspace parent, HOME and manifest sit below a
    writable directory in agent-full-access."""
    lay = two_identities(base)
    real = profilec.pipeline.parent_input_paths
    # The manifest stays in the trusted base (the probe finds it there), its entry goes below.
    monkeypatch.setattr(
        profilec.pipeline,
        "parent_input_paths",
        lambda *a: [(path, role) for path, role in real(*a) if role == "roots manifest"],
    )
    compiled = compile_a1(lay)
    assert compiled.other_identities  # the bundle still names a2: the probe attacks it
    old = compiled.model_copy(
        update={
            "profiles": tuple(
                p.model_copy(
                    update={"entries": tuple(e for e in p.entries if not _yesterday_drops(e))}
                )
                for p in compiled.profiles
            )
        }
    )
    found = _run(old, codex, ("agent-full-access",))
    probes = {p.name: p for p in found["agent-full-access"]}
    failed = {n for n, p in probes.items() if not p.ok}
    # The synthetic repository sits at the workspace's parent, agents/a1, which this layout
    # pins writable (it holds a1's CODEX_HOME): Codex itself keeps `.git` read-only at the top
    # of a writable entry, so that road stays closed even here (its control opened it).
    assert failed == {
        "parent-login-shell",
        "parent-git-home-config",
        "parent-identity",
        "parent-manifest",
    }, failed
    for name in failed:
        assert probes[name].failures == ("parent",), probes[name]
        assert _control(probes[name]).ok
    assert "model wrote .bash_profile" in probes["parent-login-shell"].output
    assert "the parent ran no login payload" in probes["parent-login-shell"].output  # snapshot off
    assert "the parent's git ran it" in probes["parent-git-home-config"].output
    assert "lock held for a2" in probes["parent-identity"].output
    assert "manifest changed" in probes["parent-manifest"].output
