"""The compile flags, each declared once: `CompileFlags` is the record, `FLAGS` what it declares.

A compile flag is an input of the compile beside the reviewed policy (the roots manifest, the
workspace roots, CODEX_HOME, ...). Its field in `CompileFlags` gives its name, type and default;
the field's `_flag(...)` gives its CLI spelling, help, metavar, whether it names a path and its
library keyword. Everything else is derived from here: the typer options of every command that
compiles (compiler/cli/options.py `compile_flags`), the request records (every
`commands.*Request` taking compile flags subclasses `CompileFlags`), what the `Inputs` of a run
holds (this record itself, `Inputs.flags`: compiler/inputs.py declares no flag of its own) and
the library's keyword checks and record (library.make_inputs, `CompileFlags.from_text`). The
library's static spelling, `library.InputOptions`, cannot be derived at type-check time: a
test compares it with `FLAGS` (tests/unit/test_api_contract.py).

A new compile flag is one field here: every compiling command's option, every request and every
run's `Inputs` follow from it. One spelling stays static because mypy reads it, and a test fails
until it matches: for a flag with a `library` keyword, the parameter of `make_inputs` and the
key of `InputOptions` (tests/unit/test_api_contract.py).
"""

# `_flag` returns a dataclasses.field (with the flag's spellings as its metadata).
# ruff: noqa: RUF009

from __future__ import annotations

import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

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
    #: Its keyword in the library (library.make_inputs); None: the CLI's only.
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

    def flags(self) -> CompileFlags:
        """The compile flags alone (a request's own fields dropped): what a run's read edge
        holds (compiler/inputs.py `Inputs.flags`)."""
        return CompileFlags(**{f.name: getattr(self, f.name) for f in FLAGS})

    @classmethod
    def from_text(cls, **values: Any) -> CompileFlags:
        """The record from flags given as text (the library's checked arguments): a `file` or
        `dir` flag becomes the Path its field holds, as typer makes it from the command line."""
        record: dict[str, Any] = {
            name: Path(value) if BY_NAME[name].kind in ("file", "dir") and value else value
            for name, value in values.items()
        }
        return cls(**record)


def text(value: Path | None) -> str | None:
    """A path flag's value as text (None stays None)."""
    return None if value is None else str(value)


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
