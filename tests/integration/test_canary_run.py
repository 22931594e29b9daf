"""Canary run on a real engine and the pinned Codex: the shipped policy passes, leaks are caught."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import profilec.canary.engine as canary_engine
import profilec.canary.run as canary_run_mod
import profilec.compiled
import profilec.pipeline
from profilec.api import load_and_compile
from profilec.canary.engine import leftovers, new_run_id
from profilec.canary.run import run_canaries
from profilec.cli import main
from profilec.codex.resolve import EffectiveProfile, EvalContext, resolve
from profilec.models.canary import CanaryReport
from profilec.models.compiled import CompiledBundle, CompiledProfile
from tests.helpers import make_layout

REPO = Path(__file__).resolve().parents[2]

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = [pytest.mark.docker, pytest.mark.codex]


def _bundle(tmp_path: Path) -> CompiledBundle:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    return load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )


def _run(bundle: CompiledBundle, codex: Path, client: DockerClient, run_id: str) -> CanaryReport:
    t0 = time.monotonic()
    report = run_canaries(bundle, codex_bin=codex, client=client, run_id=run_id)
    print(f"\ncanary wall time: {time.monotonic() - t0:.2f}s for {len(report.modes)} modes")
    print(report.to_text())
    return report


def test_shipped_policy_passes_every_mode(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    report = _run(_bundle(tmp_path), codex_bin, docker_client, canary_run)
    assert [m.mode for m in report.modes] == ["read-only", "agent", "agent-full-access"]
    assert report.passed, report.to_text()
    for m in report.modes:
        assert len(m.probes) >= 20
    net = {m.mode: next(p for p in m.probes if p.name == "net-loopback") for m in report.modes}
    assert {k: p.observed for k, p in net.items()} == {
        "read-only": "deny",
        "agent": "deny",
        "agent-full-access": "allow",
    }
    assert "Operation not permitted" in net["agent"].output
    # The compiled bundle (vault and writer-lock denies) holds through real Codex saves.
    for m in report.modes:
        names = {p.name for p in m.probes}
        assert {
            "race-codex-auth",
            "save-refresh-codex-auth",
            "save-login-codex-auth",
            "lock-hold-codex-auth",
            "save-under-lock-codex-auth",
        } <= names, names
        saves = [p for p in m.probes if p.name.startswith("save-")]
        assert all("persisted=True" in p.output for p in saves), saves
    assert leftovers(docker_client, canary_run) == []
    assert report.model_dump(mode="json")["passed"] is True


@pytest.mark.parametrize("managed", [False, True], ids=["profiles-alone", "managed-requirements"])
def test_deny_removed_is_caught(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str, managed: bool
) -> None:
    """Every profile deny dropped. By the profiles alone the credential leaks in every mode.
    Under the bundle's managed requirements (`managed`) every `cat`/`cp` of it is denied by the
    requirements alone: the static prediction, which models the profile, said `allow`, so
    those probes fail as `mismatch`, never as `leak` (what the requirements do not cover, the
    engine socket, still leaks)."""
    bundle = _bundle(tmp_path)
    profiles = tuple(
        p.model_copy(update={"entries": tuple(e for e in p.entries if e.access != "deny")})
        for p in bundle.profiles
    )
    broken = bundle.model_copy(update={"profiles": profiles})
    report = run_canaries(
        broken,
        codex_bin=codex_bin,
        client=docker_client,
        run_id=canary_run,
        dynamic_probes=False,
        parent_probes=False,
        managed_requirements=managed,
    )
    print(report.to_text())
    assert not report.passed
    for m in report.modes:
        reads = [p for p in m.probes if p.name.startswith(("cat-", "cp-"))]
        assert len(reads) >= 4, [p.name for p in m.probes]
        if managed:
            assert all(p.observed == "deny" and "mismatch" in p.failures for p in reads), reads
        else:
            assert "leak" in m.failures, report.to_text()
            assert any(p.observed == "allow" and "leak" in p.failures for p in reads), reads
    assert leftovers(docker_client, canary_run) == []


def test_builtin_workspace_profile_is_caught(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    bundle = _bundle(tmp_path)
    agent = bundle.profile_for("agent").model_copy(update={"profile_id": ":workspace"})
    broken = bundle.model_copy(update={"profiles": (agent,)})
    report = run_canaries(
        broken,
        codex_bin=codex_bin,
        client=docker_client,
        run_id=canary_run,
        modes=["agent"],
        dynamic_probes=False,
        parent_probes=False,
    )
    print(report.to_text())
    assert not report.passed
    assert "leak" in report.modes[0].failures, report.to_text()


# ---------------------------------------------------------------------------------------------
# Broken-bundle negative controls: each deliberately broken bundle must be caught, and by the
# failure class that names what broke (see compiler/canary/run.py for the classes).


def _profiles(
    bundle: CompiledBundle, fix: Callable[[CompiledProfile], CompiledProfile]
) -> CompiledBundle:
    return bundle.model_copy(update={"profiles": tuple(fix(p) for p in bundle.profiles)})


def _one_mode(
    bundle: CompiledBundle, codex: Path, client: DockerClient, run_id: str, mode: str
) -> CanaryReport:
    t0 = time.monotonic()
    # Static broken-bundle controls: the dynamic probes have their own (test_canary_dynamic.py).
    # (The parent probes have their own controls: tests/integration/test_canary_parent.py.)
    report = run_canaries(
        bundle,
        codex_bin=codex,
        client=client,
        run_id=run_id,
        modes=[mode],
        dynamic_probes=False,
        parent_probes=False,
    )
    print(f"\n{mode}: {time.monotonic() - t0:.2f}s\n{report.to_text()}")
    assert [m.mode for m in report.modes] == [mode]
    assert leftovers(client, run_id) == []
    return report


def _deny_on_link(bundle: CompiledBundle) -> CompiledBundle:
    """Every `deny` of a root's canonical target or vault moved onto the symlink path the root
    names (with vaults the compiled deny sits on the vault, not on the target)."""
    moved = {r.target: r.path for r in bundle.roots if r.target}
    moved.update({r.vault: r.path for r in bundle.roots if r.vault})

    def fix(p: CompiledProfile) -> CompiledProfile:
        entries = tuple(
            e.model_copy(update={"path": moved[e.path]})
            if e.access == "deny" and e.path in moved
            else e
            for e in p.entries
        )
        return p.model_copy(update={"entries": entries})

    return _profiles(bundle, fix)


def test_deny_on_link_instead_of_target_is_caught(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    """The deny names the symlink, not its canonical target. Observed with the pinned Codex,
    two behaviours depending on whether the link sits in a writable root:

    * agent (link outside every writable root): Codex canonicalizes the deny path when it
      builds the sandbox ("masks at start"), so every read of the target by any spelling is
      denied and nothing leaks; profilec.codex compares paths lexically and predicts
      `allow` for the other spellings, so the verdict is `mismatch` alone (CLI exit 8). The
      bundle still relies on a resolution made once at start, which the static proof does
      not model: the compiler must emit the canonical target.
    * agent-full-access (`:root` writable): Codex refuses to start any sandboxed command
      ("cannot enforce sandbox deny-read path ... crosses writable symlink"), so the control
      read and workspace write fail too: class `control` (with `mismatch`), exit 1.
    """
    broken = _deny_on_link(_bundle(tmp_path))
    report = _one_mode(broken, codex_bin, docker_client, canary_run, "agent")
    # With the ancestor pins (issue 13) the link's directory lies below a `write` pin, so agent
    # may refuse like full access (`control`); either way the static prediction is caught and
    # nothing leaks.
    assert "mismatch" in report.failures and "leak" not in report.failures, report.to_text()
    assert set(report.failures) <= {"mismatch", "control"}, report.to_text()
    bad = {p.name for p in report.modes[0].probes if not p.ok}
    assert {"cat-codex-auth-2", "cp-codex-auth"} <= bad, bad
    assert all(p.observed == "deny" for p in report.modes[0].probes if p.name in bad)

    full = _one_mode(broken, codex_bin, docker_client, canary_run, "agent-full-access")
    assert "control" in full.failures and "leak" not in full.failures, full.to_text()
    assert not full.mismatch_only
    control = next(p for p in full.modes[0].probes if p.name == "control-read")
    assert "control" in control.failures
    assert "crosses writable symlink" in control.output


def test_holder_dir_left_writable_is_tamper(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    """agent-full-access writes `:root`; without the `read` holder-dir entries the model can
    re-point the link, move the target dir and append to CODEX_HOME/config.toml.

    Every holder-dir entry goes: the hop holder `<base>` is a parent of the link's own holder
    `<base>/codexhome`, so dropping only the latter leaves it read-only and the run passes
    (observed); that is correct, not a gap. The read of the secret itself stays denied (no
    leak); the verdict is `tamper`, from the tamper probes and the after-run snapshot.
    """
    bundle = _bundle(tmp_path)

    def fix(p: CompiledProfile) -> CompiledProfile:
        entries = tuple(e for e in p.entries if e.access != "read")
        return p.model_copy(update={"entries": entries})

    report = _one_mode(
        _profiles(bundle, fix), codex_bin, docker_client, canary_run, "agent-full-access"
    )
    assert "tamper" in report.failures, report.to_text()
    assert set(report.failures) <= {"tamper", "leak", "trusted"}, report.to_text()
    bad = {p.name for p in report.modes[0].probes if not p.ok}
    assert {"tamper-relink-codex-auth", "unchanged-after-tampering"} <= bad, bad
    # A leak, if any, comes from the path probes: a directory the missing entries left
    # renamable was moved, and the credential read under its new name (issue 13).
    # and the trusted side then reads the file planted at the old path.
    leaks = {p.name for p in report.modes[0].probes if "leak" in p.failures}
    assert all(n.startswith("read-renamed-") for n in leaks), leaks
    trusted = {p.name for p in report.modes[0].probes if "trusted" in p.failures}
    assert all(n.startswith("trusted-after-rename-") for n in trusted), trusted


def test_danger_full_access_is_a_leak(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    """The agent mode mapped to the built-in `:danger-full-access`: no sandbox at all."""
    bundle = _bundle(tmp_path)

    def fix(p: CompiledProfile) -> CompiledProfile:
        return (
            p.model_copy(update={"profile_id": ":danger-full-access"}) if p.mode == "agent" else p
        )

    report = _one_mode(_profiles(bundle, fix), codex_bin, docker_client, canary_run, "agent")
    assert "leak" in report.failures, report.to_text()
    assert "tamper" in report.failures
    assert not report.mismatch_only
    # Without a sandbox every `cat` probe must leak: none of them targets a path (such as a
    # symlinked holder dir) that fails whatever the sandbox does.
    cats = [p for p in report.modes[0].probes if p.name.startswith("cat-")]
    assert len(cats) >= 3 and all("leak" in p.failures for p in cats), report.to_text()


def test_network_enabled_in_agent_is_caught(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    """The agent profile emitted with `network.enabled = true`: the sandboxed `nc` reaches the
    trusted listener on the container's loopback (the container itself has no other network),
    which the agent mode's contract forbids: class `network`. The static prediction follows the
    broken table (allow), so this is not a mismatch."""
    bundle = _bundle(tmp_path)

    def fix(p: CompiledProfile) -> CompiledProfile:
        return p.model_copy(update={"network_enabled": True}) if p.mode == "agent" else p

    report = _one_mode(_profiles(bundle, fix), codex_bin, docker_client, canary_run, "agent")
    assert report.failures == ("network",), report.to_text()
    net = next(p for p in report.modes[0].probes if p.name == "net-loopback")
    assert net.observed == "allow" and net.failures == ("network",)


def _predict_everything(*_: object) -> EffectiveProfile:
    """A forged static prediction: everything readable, writable and networked."""
    ctx = EvalContext(cwd="/", workspace_roots=("/",), tmpdir="/tmp", home="/")
    return resolve({}, ":danger-full-access", ctx)


def test_forged_prediction_is_a_mismatch(
    tmp_path: Path,
    docker_client: DockerClient,
    codex_bin: Path,
    canary_run: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sound bundle whose static prediction is replaced by "allow everything": the sandbox
    still denies, nothing leaks, every disagreement is `mismatch` and nothing else."""
    monkeypatch.setattr(canary_run_mod, "_predictor", _predict_everything)
    report = _one_mode(_bundle(tmp_path), codex_bin, docker_client, canary_run, "agent")
    assert report.failures == ("mismatch",), report.to_text()
    assert report.mismatch_only
    assert sum(1 for p in report.modes[0].probes if not p.ok) >= 5


# ---------------------------------------------------------------------------------------------
# `profilec canary` exit codes (README: 0 pass, 1 a probe failed, 7 engine/codex missing,
# 8 mismatch only), in-process through profilec.cli.main so a broken bundle can be injected.


def _cli_args(tmp_path: Path) -> list[str]:
    lay = make_layout(tmp_path / "cli", hop_dir=True)
    return [
        "canary",
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]


def _fixed_run_id(monkeypatch: pytest.MonkeyPatch) -> str:
    """Pin the CLI's run id so leftovers are checked for this run only (the engine is shared)."""
    rid = new_run_id()
    monkeypatch.setattr(canary_engine, "new_run_id", lambda: rid)
    return rid


def _break_compile(
    monkeypatch: pytest.MonkeyPatch, breaker: Callable[[CompiledBundle], CompiledBundle]
) -> None:
    # Every command compiles through compiled.compile_step, which calls pipeline.compile_edge.
    real = profilec.pipeline.compile_edge

    def broken(*args: Any, **kwargs: Any) -> CompiledBundle:
        return breaker(real(*args, **kwargs))

    monkeypatch.setattr(profilec.compiled, "compile_edge", broken)


def test_cli_exit_0_on_shipped_policy(
    tmp_path: Path,
    docker_client: DockerClient,
    codex_bin: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rid = _fixed_run_id(monkeypatch)
    rc = main(_cli_args(tmp_path))
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    assert out.startswith("canary run ") and ": PASS" in out.split("\n")[0]
    assert err == ""
    assert leftovers(docker_client, rid) == []


def test_cli_exit_1_on_leaking_bundle(
    tmp_path: Path,
    docker_client: DockerClient,
    codex_bin: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def no_denies(b: CompiledBundle) -> CompiledBundle:
        return _profiles(
            b,
            lambda p: p.model_copy(
                update={"entries": tuple(e for e in p.entries if e.access != "deny")}
            ),
        )

    _break_compile(monkeypatch, no_denies)
    rid = _fixed_run_id(monkeypatch)
    rc = main([*_cli_args(tmp_path), "--format", "json"])
    out, err = capsys.readouterr()
    assert rc == 1, out + err
    data = json.loads(out)
    assert data["passed"] is False and "leak" in data["failures"]
    assert err == ""
    assert leftovers(docker_client, rid) == []


def test_cli_exit_8_on_mismatch_only(
    tmp_path: Path,
    docker_client: DockerClient,
    codex_bin: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The forged prediction of test_forged_prediction_is_a_mismatch, over all three modes."""
    monkeypatch.setattr(canary_run_mod, "_predictor", _predict_everything)
    rid = _fixed_run_id(monkeypatch)
    rc = main(_cli_args(tmp_path))
    out, err = capsys.readouterr()
    assert rc == 8, out + err
    assert "mismatch" in out and "leak" not in out
    lines = [ln for ln in err.split("\n") if ln]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "static prediction" in err
    assert leftovers(docker_client, rid) == []


@pytest.mark.parametrize(
    "env",
    [
        {"DOCKER_HOST": "unix:///nonexistent/profilec-no-docker.sock"},
        {"PROFILEC_CODEX_BIN": "/nonexistent/profilec-no-codex"},
    ],
    ids=["no-docker", "no-codex"],
)
def test_cli_exit_7_when_engine_missing(
    tmp_path: Path, codex_bin: Path, env: dict[str, str]
) -> None:
    """A subprocess, so the exit code and stderr are exactly what a user sees."""
    full = {**os.environ, "PYTHONPATH": str(REPO), **env}
    if "PROFILEC_CODEX_BIN" not in env:
        full["PROFILEC_CODEX_BIN"] = str(codex_bin)
    res = subprocess.run(
        [sys.executable, "-m", "profilec.cli", *_cli_args(tmp_path)],
        capture_output=True,
        text=True,
        env=full,
        timeout=60,
        cwd=tmp_path,
    )
    assert res.returncode == 7, res.stdout + res.stderr
    assert res.stdout == ""
    lines = [ln for ln in res.stderr.split("\n") if ln]
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert ("docker" in lines[0]) if "DOCKER_HOST" in env else ("codex" in lines[0])


def test_shipped_policy_passes_under_the_managed_requirements(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    """The layers together, as a session runs them: the compiled requirements read-only at
    /etc/codex in every container, `codex sandbox --include-managed-config`, the trusted parent
    with profilec's config. Every probe holds as predicted, and the trusted login and refresh
    saves persist (without profilec's config in CODEX_HOME they are refused: "requirements.toml
    allowed_permission_profiles refers to undefined profile")."""
    report = run_canaries(
        _bundle(tmp_path),
        codex_bin=codex_bin,
        client=docker_client,
        run_id=canary_run,
        parent_probes=False,
        managed_requirements=True,
    )
    print(report.to_text())
    assert report.passed, report.to_text()
    assert any("managed requirements in force" in n for n in report.notes), report.notes
    for m in report.modes:
        saves = [p for p in m.probes if p.name.startswith("save-")]
        assert saves and all("persisted=True" in p.output for p in saves), saves
    assert leftovers(docker_client, canary_run) == []
