"""`profilec` command line: parse, call in, print. Every error is one line and an exit code."""

from __future__ import annotations

import sys

import typer

try:  # typer >= 0.24 vendors click as typer._click; older releases use click itself
    from typer import _click as click  # type: ignore[attr-defined,unused-ignore]
except ImportError:  # pragma: no cover
    import click  # type: ignore[no-redef,unused-ignore]

from ..errors import ProfilecError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Compile daemon-owned credential roots into Codex permission profiles, and check them.",
)

# Each command lives in its own module and registers itself on `app` when imported; the module
# imports its heavy dependencies inside the command so `compile` never loads docker or reports.
from . import compile_cmd  # noqa: E402,F401

for _optional in ("check_cmd", "plan_cmd", "canary_cmd", "audit_cmd", "e2e_cmd"):
    try:
        __import__(f"{__name__}.{_optional}")
    except ModuleNotFoundError as _exc:  # a command whose module is not there yet
        if _exc.name != f"{__name__}.{_optional}":
            raise


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turn errors into one line on stderr and an exit code."""
    try:
        result = app(args=argv, standalone_mode=False, prog_name="profilec")
    except ProfilecError as exc:
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    except click.ClickException as exc:
        msg = exc.format_message().replace("\n", " ")
        print(f"profilec: usage: {msg}", file=sys.stderr)
        return 2
    except Exception as exc:  # never a traceback: say what broke, in one line
        # click's Exit/Abort moved between typer releases; recognise them by name.
        if type(exc).__name__ == "Exit":
            return int(getattr(exc, "exit_code", 0))
        if type(exc).__name__ == "Abort":
            print("profilec: aborted", file=sys.stderr)
            return 130
        print(f"profilec: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 70
    return int(result) if isinstance(result, int) else 0


def run() -> None:
    """Console-script wrapper."""
    sys.exit(main())
