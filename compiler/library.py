"""The library's keyword checks: `make_inputs` and `load_and_compile` check every argument a
daemon passes (a path is a `str` or `os.PathLike[str]`, absolute and normalized; a uid an int;
a misspelled keyword refused with a close match) before anything is read, then compile through
the one compile step (compiler/compiled.py `compile_step`), as every command does. The
supported surface is profilec.api, which re-exports these.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ParamSpec, TypeAlias, TypedDict, TypeVar

from .compiled import compile_step
from .errors import InputError, UsageError
from .flags import FLAGS, CompileFlags
from .inputs import SESSION_DATA, Inputs
from .models.compiled import CompiledBundle
from .paths import check_absolute

#: The agent's session config given as data: a mapping (the parsed CODEX_CONFIG object), or its
#: JSON text (str or bytes). Untrusted either way: bounded, parsed and allow-listed like a file.
SessionConfig = Mapping[str, Any] | str | bytes


def _shown(value: object) -> str:
    """A value's type and a bounded repr, for an argument error."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


P = ParamSpec("P")
R = TypeVar("R")


def _session_bytes(config: object) -> bytes:
    """The session config's JSON bytes (a mapping is serialized; text is taken as it is)."""
    if isinstance(config, bytes):
        return config
    if isinstance(config, str):
        try:
            return config.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InputError(
                f"session config is not valid UTF-8 text at character {exc.start}",
                where=SESSION_DATA,
            ) from None
    if not isinstance(config, Mapping):
        hint = "a file: pass session_config_path" if isinstance(config, os.PathLike) else None
        raise UsageError(
            f"expected a mapping, JSON text (str) or bytes, got {_shown(config)}",
            where="session_config",
            hint=hint,
        )
    try:
        return json.dumps(dict(config), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except RecursionError:
        raise InputError("session config nests too deeply", where=SESSION_DATA) from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"session config is not JSON data: {exc}", where=SESSION_DATA) from None


#: A path argument of the library: `str` or any `os.PathLike[str]` (a `pathlib.Path`), taken as
#: `os.fspath` spells it, so a Path and its `str` compile to the same bytes.
StrPath: TypeAlias = os.PathLike[str] | str


class InputOptions(TypedDict, total=False):
    """The compile inputs beside the roots manifest (the CLI's compile flags), each optional.

    The library's static spelling of compiler/flags.py's `FLAGS` (keyed by each flag's
    `library` keyword) plus the session config as data: `make_inputs` and `load_and_compile`
    take exactly these as keyword-only parameters, with these types
    (tests/unit/test_api_contract.py compares the signatures, this and `FLAGS`)."""

    profiles_dir: StrPath | None
    workspace_roots: Sequence[StrPath]
    codex_home: StrPath | None
    session_config_path: StrPath | None
    session_config: SessionConfig | None
    tmpdir: StrPath | None
    home: StrPath | None
    vouched_mcp_path: StrPath | None
    run_as: int | None


def path_arg(name: str, value: object) -> str:
    """A library path argument as text: a `str` or `os.PathLike[str]`, absolute and normalized
    (paths.check_absolute); else a UsageError whose `where` is the parameter's Python name.

    A daemon's working directory is not the session's, so a relative path is refused rather
    than resolved against it."""
    if not isinstance(value, str | os.PathLike):
        raise UsageError(
            f"expected a str or os.PathLike[str] path, got {_shown(value)}", where=name
        )
    text = os.fspath(value)
    if not isinstance(text, str):
        raise UsageError(f"expected a str path, got {_shown(text)}", where=name)
    try:
        return check_absolute(text, what="the path", error=InputError)
    except InputError as exc:
        raise UsageError(exc.message, where=name) from None


def _opt_path(name: str, value: object) -> str | None:
    return None if value is None else path_arg(name, value)


def _path_list(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str | bytes | bytearray) or not isinstance(value, Sequence):
        raise UsageError(
            f"expected a sequence of paths (a list), got {_shown(value)}",
            where=name,
            hint="wrap a single path in a list",
        )
    return tuple(path_arg(f"{name}[{i}]", v) for i, v in enumerate(value))


def _uid(name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"expected an int uid, got {_shown(value)}", where=name)
    if value < 0:
        raise UsageError(f"a uid is 0 or more, got {value}", where=name)
    return int(value)


def _keywords_checked(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn`, with a keyword it does not take (a misspelling: `workspace_root=`, `hom=`) refused
    as a UsageError naming it, never dropped (mypy and pyright refuse it before it runs)."""
    params = inspect.signature(fn).parameters
    keywords = [n for n, p in params.items() if p.kind is not p.POSITIONAL_ONLY]

    @functools.wraps(fn)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        for name in kwargs:
            if name not in keywords:
                close = difflib.get_close_matches(name, keywords, n=1)
                raise UsageError(
                    f"{fn.__name__}() takes no keyword argument {name!r}",
                    where=name,
                    hint=f"did you mean {close[0]}?" if close else None,
                )
        return fn(*args, **kwargs)

    return checked


@_keywords_checked
def make_inputs(
    roots_path: StrPath,
    *,
    profiles_dir: StrPath | None = None,
    workspace_roots: Sequence[StrPath] = (),
    codex_home: StrPath | None = None,
    session_config_path: StrPath | None = None,
    session_config: SessionConfig | None = None,
    tmpdir: StrPath | None = None,
    home: StrPath | None = None,
    vouched_mcp_path: StrPath | None = None,
    run_as: int | None = None,
) -> Inputs:
    """The compile inputs (`InputOptions`), each file read once when first needed; pass the
    same object to `api.compile_inputs`, `write_lock` and `verify_lock` so all three see one read.

    Every argument is checked here, before anything is read: a path is a `str` or
    `os.PathLike[str]`, absolute and normalized; `workspace_roots` a sequence of such paths;
    `run_as` an int uid, 0 or more. A wrong one raises a UsageError whose `where` is the
    parameter's name (`workspace_roots[1]` for an item). The session config is a path
    (`session_config_path`) or data (`session_config`), not both.
    """
    if session_config_path is not None and session_config is not None:
        raise UsageError(
            "give the session config as a path or as data, not both",
            where="session_config_path, session_config",
        )
    given = locals()  # the parameters, by name: each flag's `library` keyword
    values: dict[str, Any] = {
        f.name: (path_arg if f.name == "roots" else _CHECKS[f.kind])(f.library, given[f.library])
        for f in FLAGS
        if f.library is not None
    }
    data = None if session_config is None else _session_bytes(session_config)
    return Inputs(CompileFlags.from_text(**values), session_data=data)


#: How the library checks a compile flag's value, by the flag's kind (flags.Kind).
_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "file": _opt_path,
    "dir": _opt_path,
    "path": _opt_path,
    "paths": _path_list,
    "uid": _uid,
}


def _same_options(
    options: Callable[P, Inputs],
) -> Callable[[Callable[..., CompiledBundle]], Callable[P, CompiledBundle]]:
    """Give the decorated function `options`'s parameters (signature and types)."""

    def give(fn: Callable[..., CompiledBundle]) -> Callable[P, CompiledBundle]:
        sig = inspect.signature(options)
        fn.__signature__ = sig.replace(return_annotation="CompiledBundle")  # type: ignore[attr-defined]
        fn.__annotations__ = {**options.__annotations__, "return": "CompiledBundle"}
        return fn

    return give


@_same_options(make_inputs)
def load_and_compile(roots_path: StrPath, **options: Any) -> CompiledBundle:
    """Read every input at the edge, then compile; raises ProfilecError subclasses only.

    The parameters are `make_inputs`'s (`InputOptions`), checked there. `home` is HOME of the
    session's commands, when the launcher sets one: no vault may hold it. `run_as` is the uid
    Codex is launched as (default: this process's): a writable root it cannot hold Codex's
    mount targets in is not emitted, or refused (wholepath.Probe). `session_config` is the
    agent's session config as data (see `SessionConfig`).
    """
    return compile_step(make_inputs(roots_path, **options)).bundle
