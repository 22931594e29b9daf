"""The options more than one command takes, each declared once (typer `Annotated` aliases).

A command module imports the aliases it takes from here; an option only one command has stays
in that command's module. The help text of a shared option holds for every command using it.
The compile flags are declared in compiler/flags.py; `compile_flags` gives a command all of
them and `some_flags` some.
"""

from __future__ import annotations

import inspect
import shlex
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from ..flags import BY_NAME, FLAGS, Flag
from ..formats import FormatTable

F = TypeVar("F", bound=Callable[..., Any])

# -- the compile flags (declared once, in compiler/flags.py) --------------------------------


def _annotation(flag: Flag, *, required: bool = False) -> Any:
    """The typer annotation of one compile flag, from its declaration."""
    if flag.kind == "paths":
        value: Any = list[str] | None  # click collects a repeated option in a list
    elif required:
        value = next(a for a in typing.get_args(flag.type) if a is not type(None))
    else:
        value = flag.type
    option = typer.Option(
        flag.option,
        help=flag.help,
        metavar=flag.metavar,
        dir_okay=flag.kind != "file",
        parser=uid if flag.kind == "uid" else None,
    )
    return Annotated[value, option]


def uid(text: str) -> int:
    """A uid flag's value: a number; a user name is refused with the fix (its number)."""
    try:
        return int(text, 10)
    except ValueError:
        name = shlex.quote(text)
        raise typer.BadParameter(
            f"{text!r} is not a numeric uid (give a numeric uid, e.g. `--run-as 65534`; "
            f"`id -u {name}` prints it)"
        ) from None


def compile_flags(*, roots_required: bool) -> Callable[[F], F]:
    """Give a command every compile flag (compiler/flags.py), `--roots` required or not."""
    return some_flags(*(f.name for f in FLAGS), required=("roots",) if roots_required else ())


def some_flags(*names: str, required: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Give a command the compile flags `names` (plan: --roots and --profiles; e2e:
    --profiles; diff: --workspace-root), those in `required` required.

    The command declares its own parameters and `**flags`; its signature, as typer reads it,
    becomes its own parameters with the flags after its arguments, in declaration order. Each
    reaches the command in `ctx.params` under its record name, so `request_of(Request,
    ctx.params)` fills the record's fields."""

    def add(fn: F) -> F:
        sig = inspect.signature(fn, eval_str=True)
        own = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
        if len(own) == len(sig.parameters):
            raise TypeError(f"{fn.__name__} takes no **flags")
        kw = inspect.Parameter.KEYWORD_ONLY
        added = [
            inspect.Parameter(
                name,
                kw,
                annotation=_annotation(BY_NAME[name], required=name in required),
                default=inspect.Parameter.empty if name in required else None,
            )
            for name in names
        ]
        # the context and the arguments (no default) first, then the flags, then the options
        head = [p for p in own if p.default is p.empty]
        tail = [p for p in own if p.default is not p.empty]
        params = [p.replace(kind=kw) for p in [*head, *added, *tail]]
        fn.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        fn.__annotations__ = {
            **{p.name: p.annotation for p in params},
            "return": sig.return_annotation,
        }
        return fn

    return add


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


def format_option(table: FormatTable[Any]) -> Any:
    """The `--format` option of a command rendering `table`'s artifact (its help from the
    table)."""
    return typer.Option("--format", help=table.help(), metavar="FORMAT")


FailOnOpt = Annotated[
    str, typer.Option("--fail-on", help="note | warning | error: exit 1 at or above it.")
]
