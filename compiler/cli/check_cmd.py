"""`profilec check`: coverage proof + lints over a compiled bundle or a foreign config."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from . import app
from .compile_cmd import HomeOpt, ProfilesOpt, RootsOpt, SessionOpt, WorkspaceOpt, emit


@app.command("check")
def check_command(
    roots: RootsOpt,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    config: Annotated[Path | None, typer.Option("--config", help="Foreign config.toml.")] = None,
    overrides: Annotated[
        Path | None, typer.Option("--overrides", help="Foreign -c override list (one per line).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="text|json|junit|sarif|github")] = "text",
    out: Annotated[Path | None, typer.Option("--out", help="Write the report here.")] = None,
    fail_on: Annotated[str, typer.Option("--fail-on", help="note|warning|error")] = "error",
    canary: Annotated[bool, typer.Option("--canary", help="Also run no-secret canaries.")] = False,
) -> int:
    """Prove every mode denies every root under every spelling, and lint the config."""
    from ..api import load_and_compile
    from ..checker import SEVERITY_RANK, bundle_config, check, load_foreign
    from ..errors import EnvironmentMissingError, UsageError
    from ..reports import FORMATTERS

    if fmt not in FORMATTERS:
        raise UsageError(f"unknown --format {fmt!r}; choose one of {', '.join(FORMATTERS)}")
    if fail_on not in SEVERITY_RANK:
        raise UsageError(f"unknown --fail-on {fail_on!r}; choose note, warning or error")
    if config and overrides:
        raise UsageError("give --config or --overrides, not both")
    bundle = load_and_compile(
        str(roots),
        profiles_dir=str(profiles) if profiles else None,
        workspace_roots=workspace_root or (),
        codex_home=codex_home,
        session_config_path=str(session_config) if session_config else None,
    )
    if config or overrides:
        foreign = load_foreign(str(config or overrides), overrides=overrides is not None)
        cfg = foreign
    else:
        cfg = bundle_config(bundle)
    home = bundle.codex_home.canonical if bundle.codex_home else None
    res = check(cfg, bundle.mode_profiles, bundle.roots, bundle.layout.workspace_roots,
                stripped=bundle.stripped_session_keys, codex_home=home)
    if canary:
        try:
            from ..canary.run import run_canaries  # type: ignore[import-not-found,unused-ignore]
        except ModuleNotFoundError:
            raise EnvironmentMissingError("canary runner is not available in this build") from None
        from ..settings import codex_binary

        binary = codex_binary()
        if binary is None:
            raise EnvironmentMissingError("pinned codex binary not installed (run .ci/tools.sh)")
        report = run_canaries(bundle, codex_bin=binary)
        doc = report.to_json()
        res.canary = json.loads(doc) if isinstance(doc, str) else doc
        if not report.passed:
            from ..checker import Finding

            res.findings.append(Finding(rule="PC000", severity="error",
                                        message="canary observed a failure (see canary report)"))
    emit(FORMATTERS[fmt](res), out)
    if res.failed(fail_on):  # type: ignore[arg-type]
        print(f"profilec: check: {sum(1 for f in res.findings)} findings", file=sys.stderr)
        return 1
    return 0
