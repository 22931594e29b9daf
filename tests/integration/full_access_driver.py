"""Compile and start every mode once, as one uid (runs on the host or inside a container).

usage: python3 full_access_driver.py WORKTREE BASE UID [--pre-fix] [--names-at-compile]
    [--trust-present]

Builds tests.helpers.make_layout under BASE (workspace, TMPDIR and CODEX_HOME owned by UID),
compiles with `run_as=UID` (`--pre-fix`: with a probe that never objects, the shape compile
emitted before issue 22; `--names-at-compile`: Codex's carve-out names stand empty in BASE
while compile looks and are gone at launch, as a concurrent Codex session leaves them;
`--trust-present`: with the probe that counted such names as startable, the shape that failed
CI; `--keep-present-inputs`: keeping the `read` entry on an input path that exists at compile
time inside a read-only directory), then runs `codex sandbox` for read-only, agent and
agent-full-access as UID (setpriv when UID is not ours): a command that prints a tag, then
`cat` on the credential link and target. Prints one JSON line: {"refused": <compile error line>} or
{"modes": {mode: {"rc", "ran", "marker", "out"}}, "entries": {mode: [[path, access], ...]}}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

MODES = ("read-only", "agent", "agent-full-access")


def _trusting_present(real: Any, where: str) -> Any:
    """The pre-fix probe of the CI failure: a directory holding every name needs no mkdir.
    Only at `where` (the base the driver plants them in): elsewhere the names a concurrent
    root session makes (its top-level writable roots) would fool it too, and the control would
    fail on another directory first (seen: `/check/.agents`)."""

    class TrustsPresent(real):  # type: ignore[misc]
        def blocker(self, path: str, names: Any) -> str | None:
            if path == where and all(os.path.lexists(os.path.join(path, n)) for n in names):
                return None
            result: str | None = super().blocker(path, names)
            return result

    return TrustsPresent


class _NeverBlocks:
    """The pre-fix probe: every writable root looks startable."""

    def blocker(self, path: str, names: Any) -> str | None:
        return None

    def subdirs(self, path: str) -> tuple[str, ...]:
        return ()


def main(argv: list[str]) -> int:
    worktree, base, uid_s = argv[:3]
    pre_fix = "--pre-fix" in argv[3:]
    names_at_compile = "--names-at-compile" in argv[3:]
    trust_present = "--trust-present" in argv[3:]
    keep_present = "--keep-present-inputs" in argv[3:]
    sys.path.insert(0, worktree)
    from pathlib import Path

    import profilec.library
    import profilec.pipeline
    from profilec.codex.vocabulary import CARVE_OUTS
    from profilec.emit.overrides import override_lines
    from profilec.errors import ProfilecError
    from profilec.settings import codex_binary
    from tests.helpers import make_layout

    uid = int(uid_s)
    lay = make_layout(Path(base) / "l")
    tmpdir = Path(base) / "l" / "tmpdir"
    tmpdir.mkdir()
    if uid != os.geteuid():
        for p in (lay.workspace, lay.control, tmpdir, lay.codex_home):
            os.chown(p, uid, uid)
    if pre_fix:
        setattr(profilec.pipeline, "LaunchProbe", lambda *a: _NeverBlocks())  # noqa: B010
    if trust_present:
        from profilec.launchprobe import LaunchProbe as real

        setattr(profilec.pipeline, "LaunchProbe", _trusting_present(real, base))  # noqa: B010
    if keep_present:
        import profilec.compile
        import profilec.wholepath

        drop = profilec.wholepath.drop_unneeded_masks

        def only_missing(resolved: Any, table: Any, entries: Any, ctx: Any, trusted: Any) -> Any:
            missing = [t for t in trusted if t.kind == "missing"]
            return drop(resolved, table, entries, ctx, missing)

        setattr(profilec.compile, "drop_unneeded_masks", only_missing)  # noqa: B010
    made = [Path(base) / n for n in CARVE_OUTS] if names_at_compile else []
    for p in made:
        p.mkdir()
    try:
        bundle = profilec.library.load_and_compile(
            str(lay.manifest),
            workspace_roots=[str(lay.workspace)],
            codex_home=str(lay.codex_home),
            run_as=uid,
        )
    except ProfilecError as exc:
        print(json.dumps({"refused": exc.one_line(), "exit": exc.exit_code}))
        return 0
    finally:
        for p in made:
            p.rmdir()
    codex = codex_binary()
    assert codex is not None
    lines = override_lines(bundle)
    tag = os.urandom(6).hex()
    modes: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        args = [str(codex), "sandbox"]
        for line in lines:
            args += ["-c", line]
        script = f"echo RAN-{tag} $(id -u); cat {lay.link}; cat {lay.host_target}"
        args += [
            "-P",
            bundle.profile_for(mode).profile_id,
            "-C",
            str(lay.workspace),
            "--",
            "/bin/sh",
            "-c",
            script,
        ]
        if uid != os.geteuid():
            args = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *args]
        env = {
            "PATH": "/usr/bin:/bin",
            "CODEX_HOME": str(lay.codex_home),
            "HOME": str(Path(base) / "l"),
            "TMPDIR": str(tmpdir),
        }
        proc = subprocess.run(
            args, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        out = proc.stdout + proc.stderr
        modes[mode] = {
            "rc": proc.returncode,
            "ran": f"RAN-{tag} {uid}" in out,
            "marker": lay.marker in out,
            "out": out[-2000:],
        }
    entries = {p.mode: [[e.path, e.access] for e in p.entries] for p in bundle.profiles}
    print(json.dumps({"modes": modes, "entries": entries}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
