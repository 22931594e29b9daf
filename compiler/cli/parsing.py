"""How every command line is parsed, on top of typer: the root's `-q`/`-v` are taken after the
command name too, and a single-valued option given twice is refused.

* `-q`/`-v` are declared once, on the root callback (compiler/cli/root.py). `ProfilecGroup`
  hands every command a copy of each (`GLOBAL`) that sets the console level the same way and
  passes no value to the command, so `profilec check -v ...` is `profilec -v check ...`.
* Click keeps the last value of an option given twice (`--roots a --roots b` runs on b). Every
  command and the root refuse that for an option that takes one value (not a flag, a count or a
  repeatable option): exit 2 and one line naming it.

`ProfilecTyper` makes `ProfilecCommand` the class of every command it registers, so the rules
hold for `main` and for any driver of the typer app (CliRunner).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup

from ..errors import UsageError
from .root import set_level

F = TypeVar("F", bound=Callable[..., Any])

#: The root options every command takes too (names of the root callback's parameters).
GLOBAL = ("quiet", "verbose")


def refuse_repeats(command: Any, ctx: Any, args: Sequence[str]) -> None:
    """A UsageError naming the first option that takes one value and is given twice in `args`.

    Parses `args` once more with the command's own parser, which lists every option in the
    order given, repeats included (click's `OptionParser.parse_args`); it runs no callback and
    raises what the real parse would."""
    if ctx.resilient_parsing:  # shell completion
        return
    _, _, order = command.make_parser(ctx).parse_args(args=list(args))
    seen: set[int] = set()
    for param in order:
        if param.param_type_name != "option" or param.multiple or param.count or param.is_flag:
            continue
        if id(param) in seen:
            name = max(param.opts, key=len)
            raise UsageError(f"{name} given more than once; it takes one value, give it once")
        seen.add(id(param))


class ProfilecCommand(TyperCommand):
    """A command: a repeated single-valued option is refused."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        refuse_repeats(self, ctx, args)
        return list(super().parse_args(ctx, args))


class ProfilecGroup(TyperGroup):
    """The root: its `GLOBAL` options travel to every command; a repeat is refused."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        shared = [p for p in self.params if p.name in GLOBAL]
        for command in self.commands.values():
            command.params.extend(travelling(p) for p in shared)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        refuse_repeats(self, ctx, args)
        return list(super().parse_args(ctx, args))


def travelling(param: Any) -> Any:
    """A command's copy of a root flag: the same names and help; on the command line it sets
    the console level as the root's does (root.set_level) and passes no value to the command."""

    def given(ctx: Any, _param: Any, value: bool) -> None:
        set_level(ctx, **{param.name: value})

    twin = copy.copy(param)
    twin.expose_value = False
    twin.callback = given
    return twin


class ProfilecTyper(typer.Typer):
    """The app: a command registered without an explicit `cls` is a ProfilecCommand."""

    def command(self, name: str | None = None, **kwargs: Any) -> Callable[[F], F]:
        if kwargs.get("cls") is None:
            kwargs["cls"] = ProfilecCommand
        decorator: Callable[[F], F] = super().command(name, **kwargs)
        return decorator
