"""One declaration of the compile flags (compiler/flags.py): every command's options are its
request's fields, and every command that compiles takes every compile flag, spelled and
explained as declared. A request field without an option (the `canary` that had no --tmpdir, so
its JSON was bound to another bundle than audit compiled) fails here."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
import typer

from profilec.cli import COMMANDS, click_command, full_app
from profilec.cli.options import compile_flags
from profilec.cli.output import request_of
from profilec.cli.parsing import GLOBAL, ProfilecTyper
from profilec.flags import FLAGS, CompileFlags
from profilec.inputs import Inputs

#: Options that stay with the CLI: where the output goes (a run that writes it itself, a
#: directory for codex-home, takes it as a field too).
CLI_ONLY = {"out"}
#: Request fields the command fills from a global option, not one of its own (`profilec -q
#: check`: check prints the verdict and what fails).
FROM_GLOBAL = {"quiet"}


def request_class(command: str) -> type[Any]:
    """The request record of `command` (the one `*Request` dataclass of commands/COMMAND.py)."""
    module = importlib.import_module(f"profilec.commands.{command}")
    found = [
        obj
        for name, obj in vars(module).items()
        if name.endswith("Request")
        and inspect.isclass(obj)
        and obj.__module__ == module.__name__
        and dataclasses.is_dataclass(obj)
    ]
    assert len(found) == 1, (command, found)
    return found[0]


def drift(command: Any, request: type[Any]) -> list[str]:
    """What keeps the click `command` and its `request` record apart: a field with no option,
    an option with no field, a compile flag spelled or explained otherwise than declared."""
    params = {p.name: p for p in command.params if p.name not in GLOBAL}
    fields = {f.name for f in dataclasses.fields(request)}
    found = [f"field {name} has no option" for name in sorted(fields - set(params) - FROM_GLOBAL)]
    found += [f"option {name} is no field" for name in sorted(set(params) - fields - CLI_ONLY)]
    if issubclass(request, CompileFlags):
        for flag in FLAGS:
            param = params.get(flag.name)
            if param is None:
                continue  # said above
            if list(param.opts) != [flag.option]:
                found.append(f"{flag.name} is spelled {param.opts}, declared {flag.option}")
            if param.help != flag.help:
                found.append(f"{flag.name}'s help is not the declared one")
    return found


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_option_is_a_request_field_and_every_field_an_option(name: str) -> None:
    full_app()
    command = click_command().commands[name]
    assert drift(command, request_class(name)) == []


def test_every_command_that_compiles_takes_every_compile_flag() -> None:
    full_app()
    group = click_command()
    compiling = [n for n in COMMANDS if issubclass(request_class(n), CompileFlags)]
    assert compiling == [
        "compile",
        "check",
        "canary",
        "audit",
        "lock",
        "explain",
        "watch",
        "run",
        "requirements",
    ]
    for name in compiling:
        options = {p.name: p.opts for p in group.commands[name].params}
        assert {f.name: options.get(f.name) for f in FLAGS} == {f.name: [f.option] for f in FLAGS}


# -- the check itself fails on drift -----------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class ProbeRequest(CompileFlags):
    fmt: str = "text"


def probe_command(with_flags: bool) -> Any:
    """A command like canary before the fix: its request has every compile flag; its options
    either come from the declaration or are hand-picked, --tmpdir forgotten."""
    app = ProfilecTyper()
    if with_flags:

        @app.command("probe")
        @compile_flags(roots_required=True)
        def probe(ctx: typer.Context, fmt: str = "text", **flags: Any) -> None:
            return None

    else:

        @app.command("probe")
        def probe_by_hand(
            ctx: typer.Context,
            roots: Path,
            profiles: Path | None = None,
            workspace_roots: list[str] | None = None,
            codex_home: str | None = None,
            home: str | None = None,
            fmt: str = "text",
        ) -> None:
            return None

    app.command("other")(lambda: None)  # a group, so the command keeps its name
    return typer.main.get_command(app).commands["probe"]  # type: ignore[attr-defined]


def test_the_drift_check_fails_a_command_missing_a_flag() -> None:
    found = drift(probe_command(with_flags=False), ProbeRequest)
    assert "field tmpdir has no option" in found
    assert "field run_as has no option" in found
    assert drift(probe_command(with_flags=True), ProbeRequest) == []


def test_the_declared_flags_reach_the_request_under_their_field_names() -> None:
    params: dict[str, Any] = {
        "roots": Path("/r"),
        "workspace_roots": ["/w1", "/w2"],
        "tmpdir": "/t",
        "run_as": 0,
        "out": None,
    }
    request = request_of(ProbeRequest, params)
    assert request.workspace_roots == ("/w1", "/w2")
    assert (request.tmpdir, request.run_as, request.roots) == ("/t", 0, Path("/r"))
    assert request.given() == ("--roots", "--workspace-root", "--tmpdir", "--run-as")
    inputs = Inputs.of(request)
    assert type(inputs.flags) is CompileFlags  # the request's own fields (`fmt`) stay behind
    assert inputs.flags == CompileFlags(**{f.name: getattr(request, f.name) for f in FLAGS})


def test_inputs_holds_the_compile_flags_as_their_one_record() -> None:
    """`Inputs` (compiler/inputs.py) declares no compile flag of its own: it holds the run's
    `CompileFlags` as one field, beside what only the edge has (the session config as data,
    the files read, the parsed cache)."""
    import typing

    fields = {f.name for f in dataclasses.fields(Inputs)}
    assert fields == {"flags", "session_data", "files", "_parsed", "_checked"}
    assert not fields & {f.name for f in FLAGS}
    assert typing.get_type_hints(Inputs)["flags"] is CompileFlags


def test_the_library_builds_its_inputs_from_the_same_declaration(tmp_path: Path) -> None:
    """`make_inputs` checks each flag by its declared kind and builds the one `CompileFlags`
    record: a path flag as the Path the CLI would give, the rest as given."""
    from profilec import api

    inp = api.make_inputs(
        tmp_path / "roots.toml",
        profiles_dir=str(tmp_path / "p"),
        workspace_roots=[tmp_path / "w"],
        tmpdir=str(tmp_path / "t"),
        run_as=7,
    )
    assert inp.flags == CompileFlags(
        roots=tmp_path / "roots.toml",
        profiles=tmp_path / "p",
        workspace_roots=(str(tmp_path / "w"),),
        tmpdir=str(tmp_path / "t"),
        run_as=7,
    )
