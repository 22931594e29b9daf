"""Each modelled start-up refusal class against the real `codex sandbox` (issue 22: PASS means it
starts).

Per class: a minimal tree and profile the real sandbox refuses AND `enforce()` predicts that
refusal (same code), plus a control variant that starts and that `enforce()` lets start, so the
test fails when the model of the class is removed or widened.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness.difftest.compare import default_workdir
from harness.difftest.run import overrides, snapshot
from profilec.codex.enforce import enforce
from profilec.codex.resolve import EvalContext, resolve

pytestmark = pytest.mark.codex

_STARTED = "@@STARTED@@"


@dataclass(frozen=True)
class Variant:
    """A tree (paths relative to the base; `@` = the base in link targets) and a profile."""

    filesystem: dict[str, Any]
    cwd: str = "ws"
    extends: str | None = None
    dirs: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = field(default=())


@dataclass(frozen=True)
class RefusalCase:
    """A class code, the sandbox's message fragment, the refusing variant and its control."""

    code: str
    fragment: str
    refused: Variant
    control: Variant


def _place(value: Any, base: str) -> Any:
    if isinstance(value, str):
        return value.replace("@", base)
    if isinstance(value, dict):
        return {_place(k, base): _place(v, base) for k, v in value.items()}
    return value


CASES: list[RefusalCase] = [
    RefusalCase(
        "unsupported-path-syntax",
        "using POSIX path syntax",
        Variant({":root": "read", "@/o/x*y": {"*.pem": "deny"}}, dirs=("o/x*y",)),
        Variant({":root": "read", "@/o/xy": {"*.pem": "deny"}}, dirs=("o/xy",)),
    ),
    RefusalCase(
        "unsupported-path-syntax",
        "using POSIX path syntax",
        Variant({":root": "read", "@/o/back\\slash": {"{a,b}.t": "deny"}}, dirs=("o/back\\slash",)),
        Variant({":root": "read", "@/o/back\\slash": {"f/**": "read"}}, dirs=("o/back\\slash",)),
    ),
    RefusalCase(
        "unsupported-path-syntax",
        "using POSIX path syntax",
        Variant({":root": "read", "~/x*y": {"*.pem": "deny"}}, dirs=("ws/x*y",)),
        Variant({":root": "read", "~/xy": {"*.pem": "deny"}}, dirs=("ws/xy",)),
    ),
    # a writable root between the denied directory and the inner deny shields the refusal,
    # unless a writable root lies above the denied directory (`:root` = write)
    RefusalCase(
        "deny-inside-denied-dir",
        "Read-only file system",
        Variant(
            {":root": "write", "@/o/d": "deny", "@/o/d/in": "write", "@/o/d/in/f": "deny"},
            dirs=("o/d/in",),
            files=("o/d/in/f",),
        ),
        Variant(
            {":root": "read", "@/o/d": "deny", "@/o/d/in": "write", "@/o/d/in/f": "deny"},
            dirs=("o/d/in",),
            files=("o/d/in/f",),
        ),
    ),
    # deny mounts go by spelled depth: a link key deeper than the inner deny mounts after it
    RefusalCase(
        "deny-inside-denied-dir",
        "Read-only file system",
        Variant(
            {":root": "read", "@/h/l0": "deny", "@/o/m*": "deny"},
            dirs=("h/n", "o"),
            files=("o/m3",),
            links=(("h/l0", "../o"),),
        ),
        Variant(
            {":root": "read", "@/h/n/l0": "deny", "@/o/m*": "deny"},
            dirs=("h/n", "o"),
            files=("o/m3",),
            links=(("h/n/l0", "../../o"),),
        ),
    ),
    # a missing deny inside a denied directory refuses only below a writable root above it
    RefusalCase(
        "deny-inside-denied-dir",
        "Read-only file system",
        Variant({":root": "write", "@/o": "deny", "@/o/k1/vault": "deny"}, dirs=("o/src",)),
        Variant({":root": "read", "@/o": "deny", "@/o/k1/vault": "deny"}, dirs=("o/src",)),
    ),
    # denies the enforced view drops (under a writable root spelled through a link) still
    # refuse nested under `:root` = write; with `:root` = read the linked root shields
    RefusalCase(
        "deny-inside-denied-dir",
        "Read-only file system",
        Variant(
            {":root": "write", "@/h/l0": "write", "@/o/lib": "deny", "@/o/lib/m": "deny"},
            dirs=("h", "o/lib"),
            files=("o/lib/m",),
            links=(("h/l0", "@/o/lib"),),
        ),
        Variant(
            {":root": "read", "@/h/l0": "write", "@/o/lib": "deny", "@/o/lib/m": "deny"},
            dirs=("h", "o/lib"),
            files=("o/lib/m",),
            links=(("h/l0", "@/o/lib"),),
        ),
    ),
    # an absolute link deny key to a chain refuses by the kind at its end
    RefusalCase(
        "entry-on-symlink",
        "Can't mount tmpfs",
        Variant(
            {":root": "read", "@/o/k": "deny"},
            dirs=("o/d",),
            links=(("o/hop", "@/o/d"), ("o/k", "@/o/hop")),
        ),
        Variant(
            {":root": "read", "@/o/k": "deny"},
            dirs=("o/d",),
            links=(("o/hop", "@/o/missing"), ("o/k", "@/o/hop")),
        ),
    ),
    # an entry beaten at its path only by a deny glob is still mounted
    RefusalCase(
        "crosses-writable-symlink",
        "crosses writable symlink",
        Variant(
            {":root": "read", ":workspace_roots": "write", "@/ws/*": "deny", "@/ws/l0": "read"},
            links=(("ws/l0", "@/o/missing"),),
        ),
        Variant(
            {":root": "read", ":workspace_roots": "write", "@/ws/*": "deny", "@/ws/l1": "read"},
            links=(("ws/l0", "@/o/missing"),),
        ),
    ),
    RefusalCase(
        "write-on-file",
        "Not a directory",
        Variant(
            {":root": "read", "@/ws/*": "deny", "@/ws/l0": "write"},
            files=("o/f",),
            links=(("ws/l0", "../o/f"),),
        ),
        Variant(
            {":root": "read", "@/ws/*": "deny", "@/ws/l0": "read"},
            files=("o/f",),
            links=(("ws/l0", "../o/f"),),
        ),
    ),
    # an entry on a missing carve-out name of a writable root, even when a deny glob matching
    # the root kept the carve-outs out of the compiled list
    RefusalCase(
        "missing-nested-entries",
        "Not a directory",
        Variant(
            {
                ":root": "write",
                ":workspace_roots": "write",
                "@/o/*": "deny",
                "@/o/d/.codex": "deny",
            },
            cwd="o/d",
            dirs=("o/d",),
            files=("o/d/f",),
        ),
        Variant(
            {":root": "write", ":workspace_roots": "write", "@/o/*": "deny", "@/o/d/x": "deny"},
            cwd="o/d",
            dirs=("o/d",),
            files=("o/d/f",),
        ),
    ),
    # a deny glob whose literal prefix holds a backslash, spelled through a link over the cwd
    RefusalCase(
        "cwd-denied",
        "Can't chdir",
        Variant(
            {":workspace_roots": {"[br].t3": "deny"}},
            cwd="h/b\\s/l0",
            extends=":read-only",
            dirs=("h/k1", "h/b\\s"),
            links=(("h/b\\s/l0", "../k1"),),
        ),
        Variant(
            {":workspace_roots": {"x.t3": "deny"}},
            cwd="h/b\\s/l0",
            extends=":read-only",
            dirs=("h/k1", "h/b\\s"),
            links=(("h/b\\s/l0", "../k1"),),
        ),
    ),
    # a :workspace_roots deny glob over a cwd named with `*`, plus another glob's mask inside
    RefusalCase(
        "deny-inside-denied-dir",
        "Read-only file system",
        Variant(
            {":workspace_roots": {"m*": "deny"}, "@/ws/s/x*y/??": "deny"},
            cwd="ws/s/x*y",
            extends=":workspace",
            files=("ws/s/x*y/m8",),
        ),
        Variant(
            {":workspace_roots": {"m*": "deny"}},
            cwd="ws/s/x*y",
            extends=":workspace",
            files=("ws/s/x*y/m8",),
        ),
    ),
]


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    """Trees and CODEX_HOME outside /tmp (Codex refuses its helper under the temp dir)."""
    d = default_workdir() / "refusal-classes"
    d.mkdir(parents=True, exist_ok=True)
    yield d
    shutil.rmtree(d.parent, ignore_errors=True)


def _materialize(v: Variant, base: Path) -> None:
    if base.exists():
        shutil.rmtree(base)
    (base / "ws").mkdir(parents=True)
    for d in v.dirs:
        (base / d).mkdir(parents=True, exist_ok=True)
    for f in v.files:
        (base / f).parent.mkdir(parents=True, exist_ok=True)
        (base / f).write_text("x\n")
    for link, target in v.links:
        (base / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target.replace("@", str(base)), base / link)


def _both(codex: Path, v: Variant, base: Path, home: Path) -> tuple[str | None, set[str]]:
    """(the sandbox's refusal text or None when it ran, the codes enforce() predicts)."""
    _materialize(v, base)
    b = str(base)
    prof: dict[str, Any] = {"filesystem": _place(v.filesystem, b)}
    if v.extends:
        prof["extends"] = v.extends
    perms = {"dt": prof}
    cwd = f"{b}/{v.cwd}"
    eff = resolve(perms, "dt", EvalContext(cwd=cwd, home=f"{b}/ws"))
    codes = {r.code for r in enforce(eff, snapshot(base)).refusals}
    argv = [str(codex), "sandbox", "-P", "dt", *overrides(perms), "-C", cwd]
    argv += ["--", "sh", "-c", f"echo {_STARTED}"]
    env = {"PATH": "/usr/bin:/bin", "HOME": f"{b}/ws", "CODEX_HOME": str(home)}
    p = subprocess.run(argv, env=env, cwd="/", capture_output=True, text=True, timeout=120)
    ran = _STARTED in p.stdout.split("\n")
    return (None if ran else p.stderr.strip()), codes


@pytest.mark.parametrize("case", CASES, ids=[f"{c.code}-{i}" for i, c in enumerate(CASES)])
def test_refusal_class_matches_codex(codex_bin: Path, workdir: Path, case: RefusalCase) -> None:
    home = workdir / "codex-home"
    home.mkdir(exist_ok=True)
    refused, codes = _both(codex_bin, case.refused, workdir / "tree", home)
    assert refused is not None and case.fragment in refused, refused
    assert case.code in codes, (codes, refused)
    ran, control_codes = _both(codex_bin, case.control, workdir / "tree", home)
    assert ran is None, ran
    assert not control_codes, control_codes
