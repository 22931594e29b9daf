"""`explain` agrees with the real pinned Codex: what it calls readable/writable is, and no more.

Per ACP mode, `codex sandbox -P <id>` with profilec's `-c` lines tries to read a set of paths
(the CODEX_HOME link, the middle-link spelling, the target, a file beside the target, a
workspace file, a system file, a file outside every grant) and to append to the probe files
made for it (never to the credential). Every observation must equal what `explain` said.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from profilec.audit.explain import explain
from profilec.bundle.load import CompileInputs, compile_document
from profilec.emit.overrides import override_lines
from tests.helpers import make_layout

pytestmark = pytest.mark.codex


@pytest.mark.parametrize("mode", ["read-only", "agent", "agent-full-access"])
def test_explained_access_is_what_the_real_sandbox_allows(
    tmp_path: Path, codex_bin: Path, mode: str
) -> None:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    (lay.base / "tmpdir").mkdir()
    outside = Path(tempfile.mkdtemp(prefix="profilec-explain-", dir="/var/tmp"))
    try:
        beside = lay.host_target.parent / "beside.txt"
        probes = {
            "ws": lay.workspace / "probe.txt",
            "beside": beside,
            "outside": outside / "probe.txt",
        }
        for p in probes.values():
            p.write_text("probe\n", encoding="utf-8")
        reads = [
            lay.link,
            lay.base / "hostlink" / "auth.json",
            lay.host_target,
            lay.control,
            Path("/etc/passwd"),
            *probes.values(),
        ]
        bundle, doc = compile_document(
            CompileInputs(
                roots=str(lay.manifest),
                workspace_roots=(str(lay.workspace),),
                codex_home=str(lay.codex_home),
            )
        )
        said = {
            str(p): explain(bundle, str(p), mode, provenance=doc["provenance"]).access
            for p in [*reads, *probes.values()]
        }
        script = "; ".join(
            [f"cat '{p}' >/dev/null 2>&1 && echo R{i}" for i, p in enumerate(reads)]
            + [f"echo x >> '{p}' 2>/dev/null && echo W{i}" for i, p in enumerate(probes.values())]
        )
        args = [str(codex_bin), "sandbox"]
        for line in override_lines(bundle):
            args += ["-c", line]
        args += ["-P", bundle.profile_for(mode).profile_id, "-C", str(lay.workspace)]
        args += ["--", "/bin/sh", "-c", script]
        env = {
            "PATH": "/usr/bin:/bin",
            "CODEX_HOME": str(lay.codex_home),
            "HOME": str(lay.base),
            "TMPDIR": str(lay.base / "tmpdir"),
        }
        proc = subprocess.run(
            args, env=env, capture_output=True, text=True, timeout=60, check=False
        )
        seen = set(proc.stdout.split("\n"))
        assert lay.marker not in proc.stdout + proc.stderr
        assert "R3" in seen, proc.stderr  # the control file: the sandbox really started
        for i, p in enumerate(reads):
            assert (f"R{i}" in seen) == (said[str(p)] in ("read", "write")), (p, said[str(p)])
        for i, p in enumerate(probes.values()):
            assert (f"W{i}" in seen) == (said[str(p)] == "write"), (p, said[str(p)])
        # The credential and its spellings are denied, by explain and by the sandbox.
        assert {said[str(p)] for p in reads[:3]} == {"deny"}
    finally:
        shutil.rmtree(outside, ignore_errors=True)
