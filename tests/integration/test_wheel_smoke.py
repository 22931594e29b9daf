"""What ships works installed: scripts/wheel-smoke.sh (sdist -> wheel -> fresh venv outside the
checkout -> main job with canaries, pre-commit try-repo, the action's steps). .ci/run runs the
script itself and leaves this test out (`-m "not dist"`); run it with `pytest -m dist`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.conftest import missing

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.dist, pytest.mark.docker]


def test_the_wheel_installed_outside_the_checkout_runs_the_main_job() -> None:
    import importlib.util

    if importlib.util.find_spec("build") is None:
        missing("python -m build is not installed (pip install '.[dev]')")
    if subprocess.run(["docker", "info"], capture_output=True, check=False).returncode != 0:
        missing("no docker engine answers (the main job runs the canaries)")
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "wheel-smoke.sh")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "WHEEL_SMOKE_CANARY": "1"},
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "main job passed (canary: ran)" in proc.stdout
    assert "action: check exit 1" in proc.stdout
    assert "wheel-smoke: all passed" in proc.stdout
