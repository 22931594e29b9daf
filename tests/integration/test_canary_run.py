"""Canary run on a real engine and the pinned Codex: the shipped policy passes, leaks are caught."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from compiler.api import load_and_compile
from compiler.canary.engine import leftovers
from compiler.canary.run import CanaryReport, run_canaries
from compiler.models import CompiledBundle
from tests.helpers import make_layout

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
    assert leftovers(docker_client, canary_run) == []
    assert '"passed": true' in report.to_json()


def test_deny_removed_is_caught(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    bundle = _bundle(tmp_path)
    profiles = tuple(
        p.model_copy(update={"entries": tuple(e for e in p.entries if e.access != "deny")})
        for p in bundle.profiles
    )
    broken = bundle.model_copy(update={"profiles": profiles})
    report = run_canaries(broken, codex_bin=codex_bin, client=docker_client, run_id=canary_run)
    print(report.to_text())
    assert not report.passed
    assert all("leak" in m.failures for m in report.modes), report.to_text()
    assert leftovers(docker_client, canary_run) == []


def test_builtin_workspace_profile_is_caught(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    bundle = _bundle(tmp_path)
    agent = bundle.profile_for("agent").model_copy(update={"profile_id": ":workspace"})
    broken = bundle.model_copy(update={"profiles": (agent,)})
    report = run_canaries(
        broken, codex_bin=codex_bin, client=docker_client, run_id=canary_run, modes=["agent"]
    )
    print(report.to_text())
    assert not report.passed
    assert "leak" in report.modes[0].failures, report.to_text()
