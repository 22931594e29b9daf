"""The `profilec compile` fast path: the common invocation without typer or pydantic.

Importing typer (which imports pydantic to coerce parameters) and pydantic costs more than a
whole `profilec compile` of 10 roots may take (150 ms), so `main` asks `prepare` first. It
vouches only for what it fully understands; for anything else it returns None and the typer
app runs the command instead, so every usage error, help text, schema error and exit code
still comes from the one full path:

* the arguments are only the `compile` options, each as `--opt VALUE` or `--opt=VALUE`, no
  value starting with `-`, a single-valued option at most once, `--roots` present, and every
  path-typed value already in the form `pathlib.Path` would print (so `str(Path(v)) == v`);
  a path that exists must pass the checks typer applies (readable; `--roots` not a directory);
* `--format` is toml, overrides, acp-json or session-config (bundle and codex-home go the full
  way: the first dumps the pydantic models, the second writes a directory);
* compiling raised nothing: any error, including one the lite validators raise for input they
  do not vouch for (compiler/lite.py NotLite), makes the full path redo the work and report it.

Nothing is written before the text is complete, so falling back never leaves output behind.
tests/unit/test_fast_path.py proves identical stdout, stderr, files and exit codes across every
`--format` and error class.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass

#: Option -> (destination, takes a path, may repeat). Mirrors compiler/cli/compile_cmd.py.
OPTIONS: dict[str, tuple[str, bool, bool]] = {
    "--roots": ("roots", True, False),
    "--profiles": ("profiles", True, False),
    "--workspace-root": ("workspace_root", False, True),
    "--codex-home": ("codex_home", False, False),
    "--tmpdir": ("tmpdir", False, False),
    "--session-config": ("session_config", True, False),
    "--home": ("home", False, False),
    "--vouched-mcp": ("vouched_mcp", True, False),
    "--format": ("fmt", False, False),
    "--out": ("out", True, False),
}
FAST_FORMATS = ("toml", "overrides", "acp-json", "session-config")


@dataclass(frozen=True, slots=True)
class Job:
    """A compiled, rendered result, ready to be written."""

    text: str
    out: str | None
    warnings: tuple[str, ...]

    def run(self) -> None:
        """Write the text (atomically to --out, or stdout), then the warnings, as compile does."""
        if self.out is None:
            sys.stdout.write(self.text)
        else:
            from ..fsio import write_atomic

            write_atomic(self.out, self.text.encode("utf-8"))
        for warning in self.warnings:
            print(f"profilec: warning: {warning}", file=sys.stderr)


def as_pathlib_prints(value: str) -> bool:
    """True when `str(pathlib.Path(value)) == value` (no empty or `.` segment, no trailing /)."""
    if value == "/":
        return True
    segments = value.split("/")
    if value.startswith("/"):
        segments = segments[1:]
    return all(s not in ("", ".") for s in segments)


def _path_ok(value: str, *, dir_okay: bool) -> bool:
    """The checks typer's Path parameter applies (exists=False): if it exists, it must pass."""
    try:
        st = os.stat(value)
    except OSError:
        return True
    if not dir_okay and stat.S_ISDIR(st.st_mode):
        return False
    return os.access(value, os.R_OK)


def parse(args: list[str]) -> dict[str, str | list[str]] | None:
    """The options of a plain `compile` invocation, or None when typer must parse it."""
    opts: dict[str, str | list[str]] = {}
    i = 0
    while i < len(args):
        token = args[i]
        name, eq, inline = token.partition("=")
        spec = OPTIONS.get(name)
        if spec is None:
            return None
        if eq:
            value = inline
            i += 1
        elif i + 1 < len(args):
            value = args[i + 1]
            i += 2
        else:
            return None
        if value.startswith("-"):
            return None
        dest, is_path, repeats = spec
        if is_path and not (
            as_pathlib_prints(value) and _path_ok(value, dir_okay=dest != "roots")
        ):
            return None
        if repeats:
            found = opts.setdefault(dest, [])
            assert isinstance(found, list)
            found.append(value)
        elif dest in opts:
            return None
        else:
            opts[dest] = value
    if "roots" not in opts or opts.get("fmt", "toml") not in FAST_FORMATS:
        return None
    return opts


def prepare(args: list[str]) -> Job | None:
    """Compile and render `compile ARGS` without typer or pydantic, or None to use the full path."""
    opts = parse(args)
    if opts is None:
        return None

    def one(name: str) -> str | None:
        value = opts.get(name)
        return value if isinstance(value, str) else None

    ws = opts.get("workspace_root", [])
    try:
        from ..api import load_and_compile_lite
        from ..emit import renderer

        bundle = load_and_compile_lite(
            one("roots") or "",
            profiles_dir=one("profiles"),
            workspace_roots=ws if isinstance(ws, list) else [],
            codex_home=one("codex_home"),
            session_config_path=one("session_config"),
            tmpdir=one("tmpdir"),
            home=one("home"),
            vouched_mcp_path=one("vouched_mcp"),
        )
        text = renderer(one("fmt") or "toml")(bundle)  # type: ignore[arg-type]
    except Exception:  # any error: the full path redoes the work and reports it exactly
        return None
    warnings = tuple(f.message for f in bundle.findings if f.code == "session-config-stripped")
    return Job(text=text, out=one("out"), warnings=warnings)
