"""`profilec` command line: parse, call in, print. Every error is one line and an exit code.

`main` first tries the `compile` fast path (compiler/cli/fast.py: no typer, no pydantic) and
otherwise runs the typer app, importing only the module of the command being run. The typer
`app` is created on first use (`from . import app` in a command module creates it).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ..errors import ProfilecError

if TYPE_CHECKING:
    import typer

    app: typer.Typer

_APP: list[Any] = []


def _make_app() -> Any:
    import typer

    return typer.Typer(
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        help=(
            "Compile daemon-owned credential roots into Codex permission profiles, and check them."
        ),
    )


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


def register_commands(argv: list[str] | None) -> None:
    """Import the module of the command `argv` names, or every module when it names none."""
    args = sys.argv[1:] if argv is None else argv
    wanted = COMMANDS.get(args[0]) if args else None
    if wanted is not None and _import_command(wanted):
        # typer runs a lone registered command without its name: keep a second one registered.
        _import_command(COMMANDS["compile"] if wanted != COMMANDS["compile"] else "check_cmd")
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
            return 2
    # click's Exit/Abort moved between typer releases; recognise them by name.
    if type(exc).__name__ == "Exit":
        return int(getattr(exc, "exit_code", 0))
    if type(exc).__name__ == "Abort":
        print("profilec: aborted", file=sys.stderr)
        return 130
    print(f"profilec: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 70


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the command, turn errors into one line on stderr and an exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["compile"]:
        from .fast import prepare

        job = prepare(args[1:])
        if job is not None:  # None: not a case the fast path vouches for; typer decides
            try:
                job.run()
            except Exception as exc:
                return fail(exc)
            return 0
    return main_full(argv)


def main_full(argv: list[str] | None = None) -> int:
    """The typer app alone (no fast path): every command, every error, exactly as registered."""
    try:
        register_commands(argv)
        result = __getattr__("app")(args=argv, standalone_mode=False, prog_name="profilec")
    except Exception as exc:
        return fail(exc)
    return int(result) if isinstance(result, int) else 0


def run() -> None:
    """Console-script wrapper."""
    sys.exit(main())
