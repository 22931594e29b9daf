"""The compile flags, each declared once: `CompileFlags` is the record, `FLAGS` what it declares.

A compile flag is an input of the compile beside the reviewed policy (the roots manifest, the
workspace roots, CODEX_HOME, ...). Its field in `CompileFlags` gives its name, type and default;
the field's `_flag(...)` gives its CLI spelling, help, metavar, whether it names a path and its
library keyword. Everything else is derived from here: the typer options of every command that
compiles (compiler/cli/options.py `compile_flags`), the request records (every
`commands.*Request` taking compile flags subclasses `CompileFlags`), the `Inputs` a run reads
(`CompileFlags.inputs`) and the library's keyword checks (pipeline.make_inputs). The library's
static spelling, `pipeline.InputOptions`, cannot be derived at type-check time: a test compares
it with `FLAGS` (tests/unit/test_api_contract.py).

A new compile flag is one field here: every compiling command's option, every request and
`CompileFlags.inputs` follow from it. Two spellings stay static because mypy reads them, and a
test fails until they match it: the field of `Inputs` (tests/unit/test_compile_flags.py) and,
for a flag with a `library` keyword, the parameter of `make_inputs` and the key of
`InputOptions` (tests/unit/test_api_contract.py).
"""

# `_flag` returns a dataclasses.field (with the flag's spellings as its metadata).
# ruff: noqa: RUF009

from __future__ import annotations

import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from .errors import UsageError
from .inputs import Inputs

#: What a flag's value is, for the library's checks and the CLI's type: a path (`file`: a
#: file, `dir`: a directory, `path`: either, spelled as given), `paths` a list of such,
#: `uid` a user id.
Kind = Literal["file", "dir", "path", "paths", "uid"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Flag:
    """One compile flag: its record field (`name`, `type`, `default`) and its spellings."""

    name: str
    type: Any
    default: Any
    option: str
    help: str
    metavar: str
    kind: Kind
    #: Its keyword in the library (pipeline.make_inputs); None: the CLI's only.
    library: str | None


def _flag(
    *,
    option: str,
    help: str,
    metavar: str,
    kind: Kind,
    library: str | None,
    default: Any = None,
) -> Any:
    spec = {
        "option": option,
        "help": help,
        "metavar": metavar,
        "kind": kind,
        "library": library,
    }
    return field(default=default, metadata={"flag": spec})


@dataclass(frozen=True, kw_only=True, slots=True)
class CompileFlags:
    """The compile flags of one run (every command that compiles takes all of them; a request
    record subclasses this and adds its command's own)."""

    roots: Path | None = _flag(
        option="--roots",
        help="Daemon-owned roots manifest (TOML).",
        metavar="FILE",
        kind="file",
        library="roots_path",
    )
    profiles: Path | None = _flag(
        option="--profiles",
        help="Policy directory (default: shipped profiles/).",
        metavar="DIR",
        kind="dir",
        library="profiles_dir",
    )
    workspace_roots: tuple[str, ...] = _flag(
        option="--workspace-root",
        help="Workspace root (absolute; repeatable).",
        metavar="DIR",
        kind="paths",
        library="workspace_roots",
        default=(),
    )
    codex_home: str | None = _flag(
        option="--codex-home",
        help="Private CODEX_HOME (default: dir holding the codex root).",
        metavar="DIR",
        kind="path",
        library="codex_home",
    )
    session_config: Path | None = _flag(
        option="--session-config",
        help="Untrusted agent session config (CODEX_CONFIG JSON).",
        metavar="FILE",
        kind="file",
        library="session_config_path",
    )
    tmpdir: str | None = _flag(
        option="--tmpdir",
        help="TMPDIR the launcher gives Codex (writable in agent mode; protected paths "
        "below it get their ancestors pinned; check and explain lint with $TMPDIR without it).",
        metavar="DIR",
        kind="path",
        library="tmpdir",
    )
    home: str | None = _flag(
        option="--home",
        help="HOME of the session's commands; no credential vault may hold it "
        "(check and explain lint with $HOME without it).",
        metavar="DIR",
        kind="path",
        library="home",
    )
    vouched_mcp: Path | None = _flag(
        option="--vouched-mcp",
        help="Daemon-owned TOML naming the MCP servers the launcher injects (trust-checked).",
        metavar="FILE",
        kind="file",
        library="vouched_mcp_path",
    )
    run_as: int | None = _flag(
        option="--run-as",
        help="uid Codex is launched as (default: this process's); a writable root it cannot "
        "start over is read-only or refused.",
        metavar="UID",
        kind="uid",
        library="run_as",
    )
    plan_layout: Path | None = _flag(
        option="--plan-layout",
        help="Plan layout (TOML): the bundle also holds the mount plan; a launch document takes "
        "HOME and TMPDIR from it.",
        metavar="FILE",
        kind="file",
        library=None,  # the lock's mount plan: not an input of a session's compile
    )

    def given(self) -> tuple[str, ...]:
        """The options of the flags set to other than their default, in declaration order."""
        return tuple(f.option for f in FLAGS if getattr(self, f.name) != f.default)

    def unrooted(self) -> Inputs:
        """The run's read edge when it takes no --roots (a --bundle, a --lock, --e2e-matrix
        against the policy of --profiles)."""
        return Inputs.unrooted(_text(self.profiles))

    def inputs(
        self, missing: str = "give --roots (and the compile flags) or --bundle FILE"
    ) -> Inputs:
        """The run's one read edge (compiler/inputs.py); a UsageError `missing` without --roots."""
        if self.roots is None:
            raise UsageError(missing)
        return Inputs(**{f.name: _text(getattr(self, f.name)) for f in FLAGS})


def _text(value: Any) -> Any:
    """A flag's value as `Inputs` holds it: a path as text, anything else as it is."""
    return str(value) if isinstance(value, Path) else value


def _declared() -> tuple[Flag, ...]:
    hints = typing.get_type_hints(CompileFlags)
    return tuple(
        Flag(name=f.name, type=hints[f.name], default=f.default, **f.metadata["flag"])
        for f in fields(CompileFlags)
    )


#: Every compile flag, in declaration order (the order `--help` lists them).
FLAGS: tuple[Flag, ...] = _declared()
#: Each flag by its record name.
BY_NAME: dict[str, Flag] = {f.name: f for f in FLAGS}
