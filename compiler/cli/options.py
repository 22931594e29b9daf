"""The options more than one command takes, each declared once (typer `Annotated` aliases).

A command module imports the aliases it takes from here; an option only one command has stays
in that command's module. The help text of a shared option holds for every command using it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# -- the compile inputs ------------------------------------------------------------------------

RootsOpt = Annotated[
    Path,
    typer.Option(
        "--roots", help="Daemon-owned roots manifest (TOML).", dir_okay=False, metavar="FILE"
    ),
]
OptRootsOpt = Annotated[
    Path | None,
    typer.Option(
        "--roots", help="Daemon-owned roots manifest (TOML).", dir_okay=False, metavar="FILE"
    ),
]
ProfilesOpt = Annotated[
    Path | None,
    typer.Option(
        "--profiles", help="Policy directory (default: shipped profiles/).", metavar="DIR"
    ),
]
WorkspaceOpt = Annotated[
    list[str] | None,
    typer.Option("--workspace-root", help="Workspace root (absolute; repeatable).", metavar="DIR"),
]
HomeOpt = Annotated[
    str | None,
    typer.Option(
        "--codex-home",
        help="Private CODEX_HOME (default: dir holding the codex root).",
        metavar="DIR",
    ),
]
UserHomeOpt = Annotated[
    str | None,
    typer.Option(
        "--home",
        help="HOME of the session's commands; no credential vault may hold it "
        "(check and explain lint with $HOME without it).",
        metavar="DIR",
    ),
]
SessionOpt = Annotated[
    Path | None,
    typer.Option(
        "--session-config",
        help="Untrusted agent session config (CODEX_CONFIG JSON).",
        metavar="FILE",
    ),
]
McpOpt = Annotated[
    Path | None,
    typer.Option(
        "--vouched-mcp",
        help="Daemon-owned TOML naming the MCP servers the launcher injects (trust-checked).",
        metavar="FILE",
    ),
]
TmpdirOpt = Annotated[
    str | None,
    typer.Option(
        "--tmpdir",
        help="TMPDIR the launcher gives Codex (writable in agent mode; protected paths "
        "below it get their ancestors pinned; check and explain lint with $TMPDIR without it).",
        metavar="DIR",
    ),
]
RunAsOpt = Annotated[
    int | None,
    typer.Option(
        "--run-as",
        help="uid Codex is launched as (default: this process's); a writable root it cannot "
        "start over is read-only or refused.",
        metavar="UID",
    ),
]
PlanLayoutOpt = Annotated[
    Path | None,
    typer.Option(
        "--plan-layout",
        help="Plan layout (TOML): the bundle also holds the mount plan.",
        dir_okay=False,
        metavar="FILE",
    ),
]

# -- a config profilec did not write (check, explain, diff) ------------------------------------

ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="A Codex config.toml profilec did not write (not compiled)."),
]
OverridesOpt = Annotated[
    Path | None,
    typer.Option("--overrides", help="A -c override list (one value per line; not compiled)."),
]
ModeMapOpt = Annotated[
    Path | None,
    typer.Option(
        "--mode-map", help="ACP mode -> profile id (JSON object, acp-json, or modes.toml)."
    ),
]
CwdOpt = Annotated[
    str | None,
    typer.Option(
        "--cwd",
        help="Session cwd as the launcher spells it (default: the workspace roots; explain "
        "of a foreign config: the current dir).",
    ),
]

# -- what a run reads besides the compile inputs -----------------------------------------------

BundleOpt = Annotated[
    Path | None,
    typer.Option(
        "--bundle", help="Read a bundle or lock file instead of compiling.", dir_okay=False
    ),
]
LockOpt = Annotated[
    Path | None,
    typer.Option(
        "--lock",
        help="Approved lock file (`profilec lock`): check fails with a diff (exit 9) when the "
        "recompiled bundle differs; audit shows what changed since; watch watches its chain.",
        dir_okay=False,
    ),
]
CanaryOpt = Annotated[
    bool,
    typer.Option(
        "--canary",
        help="Also run the no-secret canaries now (needs Docker and the pinned codex).",
    ),
]

# -- output ------------------------------------------------------------------------------------

OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Output file, written atomically; - or none: stdout.",
        metavar="FILE",
    ),
]
TextJsonOpt = Annotated[str, typer.Option("--format", help="text | json", metavar="FORMAT")]
FailOnOpt = Annotated[
    str, typer.Option("--fail-on", help="note | warning | error: exit 1 at or above it.")
]
