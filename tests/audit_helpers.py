"""Shared pieces of the audit tests: a synthetic layout, its compile flags, a plan layout."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from profilec.cli import main
from tests.helpers import Layout, make_layout

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


def setup(base: Path, **kw: Any) -> tuple[Layout, list[str]]:
    """A layout with a middle link (two hops) and the compile flags that name it."""
    lay = make_layout(base, hop_dir=True, **kw)
    return lay, [
        "--roots",
        str(lay.manifest),
        "--workspace-root",
        str(lay.workspace),
        "--codex-home",
        str(lay.codex_home),
    ]


def plan_layout(lay: Layout) -> Path:
    """A valid daemon plan layout for `lay` (0600), for bundles that carry a mount plan."""
    (lay.base / "daemon").mkdir(exist_ok=True)
    # The session TMPDIR the plan gives Codex (CODEX_HOME lies under /tmp), made by the launcher
    # before a compile takes it from the plan.
    (lay.base / "daemon" / "state" / "cand-1" / "tmp").mkdir(parents=True, exist_ok=True)
    doc = {
        "schema_version": 1,
        "daemon_root": str(lay.base / "daemon"),
        "agent_home": str(lay.codex_home),
        "workspace_roots": [str(lay.workspace)],
        "state_dir": str(lay.base / "daemon" / "state" / "cand-1"),
        "backends": ["codex"],
        # Not base/host: that directory is the credential's vault, which the plan binds whole.
        "hidden": {"host_home": str(lay.base / "hosthome")},
    }
    path = lay.base / "layout.toml"
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    os.chmod(path, 0o600)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process; (exit code, stdout, stderr)."""
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def validate(name: str, instance: Any) -> None:
    """Validate against schemas/<name>, resolving references through the shipped registry."""
    from profilec.resources import validator

    validator(name).validate(instance)


def bound_canary(
    report: dict[str, Any], flags: list[str], finished: int = 2_000_000_000
) -> dict[str, Any]:
    """`report` bound (as `profilec canary --format json` binds it) to the bundle `flags` compile.

    `finished` is the run's end (epoch seconds); the default lies in the future, so no input
    is newer than the evidence.
    """
    from datetime import UTC, datetime

    from profilec.audit.evidence import bind
    from profilec.bundle.load import CompileInputs, compile_document

    args = dict(zip(flags[::2], flags[1::2], strict=True))
    _, doc = compile_document(
        CompileInputs(
            roots=args["--roots"],
            workspace_roots=(args["--workspace-root"],),
            codex_home=args["--codex-home"],
        )
    )
    return bind(report, doc, datetime.fromtimestamp(finished, tz=UTC))
