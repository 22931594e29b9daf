"""`profilec` command line: parse, call in, print. Every error is one line and an exit code.

One typer app defines every command and option. `main` imports only the module of the command
being run (the COMMANDS registry), so `compile` never loads the checker, the canaries, docker,
jsonschema or the report renderers. The typer `app` is created on first use (`from . import app`
in a command module creates it).
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from ..errors import EXIT_ABORTED, EXIT_CLEAN, EXIT_INTERNAL, ProfilecError, UsageError

if TYPE_CHECKING:
    import typer

    app: typer.Typer

_APP: list[Any] = []


def _make_app() -> Any:
    from .parsing import ProfilecGroup, ProfilecTyper

    app = ProfilecTyper(
        cls=ProfilecGroup,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
        help=(
            "Compile daemon-owned credential roots into Codex permission profiles, and check them."
        ),
    )
    from .root import root_options

    app.callback()(root_options)
    return app


def __getattr__(name: str) -> Any:
    """`app` is built on first access, so importing this package does not import typer."""
    if name == "app":
        if not _APP:
            _APP.append(_make_app())
        return _APP[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _click() -> Any:
    try:  # typer >= 0.24 vendors click as typer._click; older releases use click itself
        from typer import _click as click  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # pragma: no cover
        import click  # type: ignore[no-redef,unused-ignore]
    return click


#: Command name -> module under compiler/cli that registers it on `app` when imported. Only the
#: module of the command being run is imported (so `compile` never loads check, canary or
#: docker); `--help`, no command or an unknown one imports them all, in this order, which is
#: the order `profilec --help` lists them. A new command adds one line here; a module that is
#: not there yet (another branch) is skipped.
COMMANDS: dict[str, str] = {
    "compile": "compile_cmd",
    "check": "check_cmd",
    "plan": "plan_cmd",
    "canary": "canary_cmd",
    "audit": "audit_cmd",
    "lock": "audit_cmd",
    "diff": "audit_cmd",
    "explain": "audit_cmd",
    "e2e": "e2e_cmd",
    "watch": "watch_cmd",
    "run": "run_cmd",
    "requirements": "requirements_cmd",
    "rules": "rules_cmd",
}


def _import_command(module: str) -> bool:
    """Import one command module (registering its commands); False when it is not in this build."""
    name = f"{__name__}.{module}"
    if name in sys.modules:
        return True
    try:
        __import__(name)
    except ModuleNotFoundError as exc:  # a command whose module is not there yet
        if exc.name != name:
            raise
        return False
    return True


def command_name(args: list[str]) -> str | None:
    """The command `args` names: the first word after the root options (which take no value)."""
    for arg in args:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
    return None


def register_commands(argv: list[str] | None) -> None:
    """Import the module of the command `argv` names, or every module when it names none."""
    args = sys.argv[1:] if argv is None else argv
    name = command_name(args)
    wanted = COMMANDS.get(name) if name else None
    if wanted is not None and _import_command(wanted):
        return
    for module in dict.fromkeys(COMMANDS.values()):
        _import_command(module)
    # Help lists commands in registration order; make it the table's, whatever ran before.
    order = {name: i for i, name in enumerate(COMMANDS)}
    __getattr__("app").registered_commands.sort(key=lambda c: order.get(c.name, len(order)))


def full_app() -> Any:
    """The typer app with every command registered (for typer's CliRunner and other drivers
    that call the app directly instead of `main`)."""
    register_commands([])
    return __getattr__("app")


def click_command() -> Any:
    """The click command `main` runs: the app's registered commands, placeholders fixed."""
    import typer.main

    command = typer.main.get_command(__getattr__("app"))
    _placeholders(command)
    return command


def _placeholders(command: Any) -> None:
    """Help shows what to type: nothing after a flag, FILE/DIR/PATH for a path, the option's
    own name (FORMAT, CODEX_HOME, ...) for any other value; an explicit metavar wins. Typer
    would print `<bool>`, `<str>`, `<list[str]>`."""
    help_option = command.get_help_option(SimpleNamespace(help_option_names=["-h", "--help"]))
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if param.metavar is not None:
            continue
        if param.param_type_name == "argument":  # named by itself (OLD, NEW, PATH), no type
            param.metavar = param.name.upper()
            param.display_type_rich = lambda ctx: None
            continue
        if param.param_type_name == "option" and (param.is_flag or param.count):
            param.metavar = ""
            continue
        desc = getattr(param, "type_descriptor", None)
        info = getattr(desc, "parameter_info", None)
        annotation = getattr(desc, "annotation", None)
        if annotation is not None and "Path" in str(annotation):
            file_ok, dir_ok = getattr(info, "file_okay", True), getattr(info, "dir_okay", True)
            param.metavar = "FILE" if not dir_ok else "DIR" if not file_ok else "PATH"
        else:
            long = [o for o in param.opts if o.startswith("--")] or param.opts or [param.name]
            param.metavar = long[0].lstrip("-").replace("-", "_").upper()
    for sub in getattr(command, "commands", {}).values():
        _placeholders(sub)


def fail(exc: BaseException) -> int:
    """Print the one line for `exc` and return its exit code (never a traceback)."""
    if isinstance(exc, ProfilecError):
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    if "typer" in sys.modules:  # only the typer path can raise click's exceptions
        click = _click()
        if isinstance(exc, click.ClickException):
            msg = exc.format_message().replace("\n", " ")
            print(f"profilec: usage: {msg}", file=sys.stderr)
            return UsageError.exit_code
    # click's Exit/Abort moved between typer releases; recognise them by name.
    if type(exc).__name__ == "Exit":
        return int(getattr(exc, "exit_code", EXIT_CLEAN))
    if type(exc).__name__ == "Abort":
        print("profilec: aborted", file=sys.stderr)
        return EXIT_ABORTED
    print(f"profilec: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
    return EXIT_INTERNAL


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the command, turn errors into one line on stderr and an exit code."""
    try:
        # profilec's models need no third-party pydantic plugin; skipping the plugin scan (every
        # installed distribution's entry points) saves its cost on every run.
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
        register_commands(argv)
        result = click_command().main(args=argv, standalone_mode=False, prog_name="profilec")
    except Exception as exc:
        return fail(exc)
    return int(result) if isinstance(result, int) else EXIT_CLEAN


def run() -> None:
    """Console-script wrapper."""
    sys.exit(main())
