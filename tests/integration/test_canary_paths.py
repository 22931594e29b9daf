"""Canary path attacks (compiler/canary/paths.py) on a real engine and the pinned Codex.

The shipped policy passes every mode, including the rename, trusted-base write and fake
engine-socket probes. Negative control: the same bundle without its ancestor pins (today's
holder-only entries) is caught as tamper and leak in agent-full-access.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from profilec.api import load_and_compile
from profilec.canary.run import run_canaries
from profilec.models.compiled import CompiledBundle
from tests.helpers import make_layout

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = [pytest.mark.docker, pytest.mark.codex]


def _bundle(tmp_path: Path) -> CompiledBundle:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    return load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )


def test_path_attacks_fail_against_the_shipped_policy(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    bundle = _bundle(tmp_path)
    report = run_canaries(
        bundle, codex_bin=codex_bin, client=docker_client, run_id=canary_run, parent_probes=False
    )
    print(report.to_text())
    assert report.passed, report.to_text()
    full = next(m for m in report.modes if m.mode == "agent-full-access")
    names = {p.name for p in full.probes}
    assert any(n.startswith("tamper-rename-") for n in names)
    assert any(n.startswith("tamper-trusted-write-") for n in names)
    renames = [p for p in full.probes if p.name.startswith("tamper-rename-")]
    assert all(p.observed == "deny" for p in renames)
    assert any("Device or resource busy" in p.output for p in renames)


def test_control_without_pins_is_caught_as_tamper_and_leak(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    bundle = _bundle(tmp_path)
    profiles = tuple(
        p.model_copy(
            update={
                "entries": tuple(
                    e for e in p.entries if all(x.reason != "ancestor" for x in e.provenance)
                )
            }
        )
        for p in bundle.profiles
    )
    broken = bundle.model_copy(update={"profiles": profiles})
    report = run_canaries(
        broken,
        codex_bin=codex_bin,
        client=docker_client,
        run_id=canary_run,
        modes=["agent-full-access"],
        parent_probes=False,
    )
    print(report.to_text())
    assert not report.passed
    assert {"tamper", "leak"} <= set(report.failures), report.to_text()
