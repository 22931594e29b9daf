"""`profilec run`: compile, check, and run the adapter as one supervised session.

The flags become a RunRequest; compiler/commands/run.py runs it. Standard input and output are
the ACP stream: nothing else is written to stdout."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from . import app
from .options import compile_flags
from .output import finish, request_of

ProviderConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--provider-config",
        help="Daemon-owned TOML (trust-checked): the launcher's model and model provider "
        "(`model`, `model_provider`, `model_providers.ID`), passed to the adapter as "
        "CODEX_CONFIG; never from the client.",
        dir_okay=False,
    ),
]
NetworkOpt = Annotated[
    bool | None,
    typer.Option(
        "--network/--no-network",
        help="The boundary's network (default: the plan layout's, else on, so the provider "
        "is reachable).",
    ),
]
AdapterArg = Annotated[
    list[str] | None,
    typer.Argument(help="The adapter's command, after --."),
]


@app.command("run")
@compile_flags(roots_required=True)
def run_command(
    ctx: typer.Context,
    provider_config: ProviderConfigOpt = None,
    network: NetworkOpt = None,
    adapter: AdapterArg = None,
    **flags: Any,
) -> int:
    """Compile, check, and run the adapter inside its boundary, relaying the ACP stream on
    stdin/stdout: only the compiled permission-profile modes, sessions only in a workspace
    root, the whole tree ended on exit; drift ends the session (exit 9)."""
    from ..commands.run import RunRequest, run

    request = request_of(RunRequest, ctx.params)
    return finish(run(request, client_in=sys.stdin.buffer, client_out=sys.stdout.buffer))
