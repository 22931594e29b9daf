"""`requirements_install`: the managed requirements file on the host, read and installed.

`install_requirements` writes profilec's document (emit/requirements.py) atomically, its second
line naming the roots manifest it was compiled from (`source_line`), and refuses to replace a
file it did not write or one compiled from another manifest: one host file serves one daemon.
`read_requirements` reads an installed file through the run's edge, trust-checked;
`requirements_gaps` says why it does not hold (emit/requirements_verify.py).
"""

from __future__ import annotations

import os
import re
import tomllib

from ..codex.vocabulary import REQUIREMENTS_FILE
from ..errors import OutputError
from ..fsio import write_atomic
from ..inputs import Inputs
from ..models.compiled import CompiledBundle
from .requirements import HEADER, digest, render_requirements
from .requirements_verify import requirements_problems
from .tomltext import value

#: The second line of an installed document: the roots manifest it was compiled from, by
#: absolute path (TOML-quoted) and the sha256 of its bytes as compiled.
_SOURCE = re.compile(r'# compiled from manifest (".*") \((sha256:[0-9a-f]{64})\)')


def source_line(edge: Inputs) -> str:
    """The line `install_requirements` puts after HEADER: which manifest (absolute path) and
    which bytes of it (the edge's, as compiled) the installed document comes from."""
    path = os.path.abspath(edge.roots_path)
    return f"# compiled from manifest {value(path)} ({digest(edge.trusted(path).data)})\n"


def installed_source(text: str) -> tuple[str, str] | None:
    """(manifest path, digest) from an installed document's second line; None when it has
    none (a file profilec did not install, or one an earlier profilec wrote)."""
    lines = text.split("\n", 2)
    found = _SOURCE.fullmatch(lines[1]) if len(lines) > 1 else None
    if found is None:
        return None
    try:
        return str(tomllib.loads(f"p = {found.group(1)}")["p"]), found.group(2)
    except tomllib.TOMLDecodeError:
        return None


def installed_text(bundle: CompiledBundle, edge: Inputs) -> str:
    """What `install_requirements` writes: the compiled document with `source_line` after its
    HEADER (`--format requirements`, bound per session, carries no source line)."""
    return HEADER + source_line(edge) + render_requirements(bundle).removeprefix(HEADER)


def read_requirements(edge: Inputs, path: str) -> str | None:
    """The installed document's text through the run's edge, trust-checked like the roots
    manifest (Codex reads it as configuration of every session on the host: a file others can
    write is refused, TrustError); None when there is none."""
    if not os.path.lexists(path):
        return None
    return edge.trusted(path).data.decode("utf-8", errors="replace")


def requirements_gaps(edge: Inputs, path: str, bundle: CompiledBundle) -> list[str]:
    """Why the managed requirements at `path` do not hold for `bundle` (empty: they do): the
    file missing, or `requirements_problems`. Read through `edge` (a file others can write is
    a TrustError)."""
    installed = read_requirements(edge, path)
    if installed is None:
        return ["no managed requirements file"]
    return requirements_problems(installed, bundle)


def install_requirements(
    bundle: CompiledBundle, edge: Inputs, path: str = REQUIREMENTS_FILE
) -> bool:
    """Write the document at `path` (0644, atomic), its header naming the manifest it comes
    from (`installed_text`); False when it was already current.

    Never replaced: a file profilec did not write (no HEADER first line): merge profilec's keys
    into it by hand (`--format requirements` prints them), then `check --requirements` verifies
    the merge; and a profilec file compiled from another manifest, or one that names none (an
    earlier profilec's): one host file serves one daemon, and a second daemon's install would
    take the first one's vaults out of the managed layer. A re-install from the same manifest
    (edited or not) replaces it.
    """
    text = installed_text(bundle, edge)
    current = read_requirements(edge, path)
    if current == text:
        return False
    if current is not None:
        _refuse_replacing(current, os.path.abspath(edge.roots_path), path)
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    write_atomic(path, text.encode("utf-8"), mode=0o644)
    return True


#: What a host with several daemons does instead of sharing the host file.
PER_SESSION = (
    "bind each session's own `profilec compile --format requirements` over /etc/codex in a "
    "private mount namespace (docs/mounts.md, docs/requirements.md)"
)


def _refuse_replacing(current: str, manifest: str, path: str) -> None:
    """An OutputError (nothing written) unless `current` is profilec's file from `manifest`."""
    if not current.startswith(HEADER):
        raise OutputError(
            "a managed requirements file profilec did not write is in place; merge "
            "`profilec compile --format requirements` into it by hand",
            where=path,
        )
    source = installed_source(current)
    if source is None:
        raise OutputError(
            "a profilec requirements file that names no manifest (an earlier profilec's) is "
            "in place; it may be another daemon's",
            where=path,
            hint=f"if it is this daemon's, remove it and install again; else {PER_SESSION}",
        )
    if source[0] != manifest:
        raise OutputError(
            f"compiled from another manifest, {source[0]} ({source[1]}); one host file "
            "serves one daemon",
            where=path,
            hint=PER_SESSION,
        )
