"""Lints of the launch context check judges (HOME, TMPDIR, the workspace roots' place).

PC091: a workspace root under the launch temp dir (as PC035 spells it: --tmpdir, else $TMPDIR,
else /tmp), which agent mode makes writable whole. PC092: a
config profilec compiled for one HOME/TMPDIR (the `# profilec-launch` comment its `toml` and
`codex-home` output carry, compiler/emit/codex_toml.py) checked under another: `~` and
`:tmpdir` then name other directories than the session's, so the verdict is about another
session. Paths only: nothing is opened.
"""

from __future__ import annotations

import os
import tomllib
from typing import Any

from ...emit.codex_toml import LAUNCH_MARK
from ...paths import is_within, launch_temp_dir
from ...rule_ids import LAUNCH_CONTEXT_DIFFERS, WORKSPACE_UNDER_TEMP_DIR
from ..configstack import Layer
from ..context import LintContext, lint
from ..rules import rule

rule(
    WORKSPACE_UNDER_TEMP_DIR,
    "workspace-under-temp-dir",
    "warning",
    "a workspace root lies under the launch temp dir (--tmpdir, else $TMPDIR, else /tmp)",
    "agent mode grants write on the whole temp dir (`:tmpdir`; /tmp also through `:slash_tmp`), "
    "so what lies beside the workspace there (other sessions' workspaces, a launcher's scratch "
    "files) is writable to model commands too, and the system's temp cleaner may delete the "
    "workspace between sessions",
    "put the workspace root under a persistent directory outside /tmp and the launch TMPDIR "
    "(e.g. /srv/agentd/work/<session>) and pass that --workspace-root",
)

rule(
    LAUNCH_CONTEXT_DIFFERS,
    "launch-context-differs",
    "warning",
    "the config was compiled for another HOME or TMPDIR than check judges it with (--home, "
    "--tmpdir, else $HOME, $TMPDIR)",
    "`~` and `:tmpdir` expand to the launch's HOME and TMPDIR, and compile pins the ancestors "
    "of protected paths below them: judged under other directories, check proves a session "
    "that does not run",
    "pass check the --home and --tmpdir the launch gives Codex (the ones the config was "
    "compiled with, its `# profilec-launch` line), or recompile the config with the launch's",
)


def _real(path: str) -> str:
    return os.path.realpath(path)


@lint
def workspace_under_temp_dir(ctx: LintContext) -> None:
    """PC091: each workspace root under the launch temp dir (as given or canonical)."""
    inp = ctx.inp
    temp = launch_temp_dir(inp.tmpdir)
    temps = dict.fromkeys([temp, _real(temp)])
    for ws in inp.workspace_roots:
        hit = next(
            (t for t in temps if t != "/" and (is_within(ws, t) or is_within(_real(ws), t))),
            None,
        )
        if hit is not None:
            ctx.add(
                WORKSPACE_UNDER_TEMP_DIR,
                f"workspace root {ws} is under the temp dir {hit}: agent mode writes it whole",
                path=ws,
            )


def compiled_for(layer: Layer) -> dict[str, str] | None:
    """The launch context a layer's text records (`# profilec-launch = { ... }`), if any."""
    for line in (layer.text or "").split("\n"):
        if line.startswith(LAUNCH_MARK):
            try:
                table: dict[str, Any] = tomllib.loads(line[2:])["profilec-launch"]
            except (tomllib.TOMLDecodeError, KeyError):
                return None
            return {
                k: v for k, v in table.items() if k in ("home", "tmpdir") and isinstance(v, str)
            }
    return None


@lint
def launch_context_differs(ctx: LintContext) -> None:
    """PC092: a layer compiled for another HOME or TMPDIR than the one check judges with."""
    judged = {"home": ctx.inp.home, "tmpdir": ctx.inp.tmpdir}
    for layer in ctx.inp.stack.layers:
        recorded = compiled_for(layer)
        if not recorded:
            continue
        differ = [
            f"{k.upper()} {v} (check: {judged[k] or 'unset'})"
            for k, v in sorted(recorded.items())
            if judged[k] is None or _real(v) != _real(judged[k] or "")
        ]
        if differ:
            ctx.add(
                LAUNCH_CONTEXT_DIFFERS,
                f"{layer.name} was compiled for {' and '.join(differ)}: check judges another "
                "session than the launch runs",
                layer=layer,
                needles=(LAUNCH_MARK,),
            )
