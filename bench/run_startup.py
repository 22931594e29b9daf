"""`profilec run`'s added start-up: seconds from spawn to the first ACP `initialize` answer,
through `profilec run` (compile, check, CODEX_HOME/config.toml, the boundary, bwrap as uid
65534, the adapter) beside the bare adapter (setpriv to uid 65534, the adapter) and the adapter
under the same boundary without the profilec process (its argv built once), interleaved
one of each per round, medians of BENCH_RUNS (>= 5) rounds. Prints one Markdown table and the
share `run` adds; asserts nothing (issue 39 names "at most 20% of the bare adapter's time").

Needs root, bwrap, setpriv, node and @agentclientprotocol/codex-acp 2.6.0 (.ci/tools.sh).
`python3 bench/run_startup.py` from the repository.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from profilec.compiled import compile_step  # noqa: E402
from profilec.e2e.adapters import install_dir, node_binary  # noqa: E402
from profilec.e2e.jsonrpc import JsonRpcClient  # noqa: E402
from profilec.emit.codex_home import write_codex_home  # noqa: E402
from profilec.flags import CompileFlags  # noqa: E402
from profilec.inputs import Inputs  # noqa: E402
from profilec.run.boundary import Boundary, build_boundary  # noqa: E402
from profilec.settings import codex_binary  # noqa: E402
from tests.helpers import give, make_layout  # noqa: E402

RUNS = max(5, int(os.environ.get("BENCH_RUNS", "5")))
UID = 65534
SCRIPT = Path("node_modules/@agentclientprotocol/codex-acp/dist/index.js")
SETPRIV = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "--"]
INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}
PROVIDER = 'model = "m"\nmodel_provider = "openai"\n'


def to_initialize(argv: list[str], env: dict[str, str], cwd: str) -> float:
    """Seconds from spawning `argv` to its answer to `initialize` (sent at once)."""
    t0 = time.perf_counter()
    client = JsonRpcClient(argv, env=env, cwd=cwd)
    try:
        client.request("initialize", INITIALIZE, timeout=120)
        return time.perf_counter() - t0
    finally:
        client.close()


def _boundary(manifest: Path, ws: Path, codex_home: Path, home: Path, tmp: Path) -> Boundary:
    """The boundary `run` builds for this layout, built once (its argv and environment)."""
    flags = CompileFlags(
        roots=manifest,
        workspace_roots=(str(ws),),
        codex_home=str(codex_home),
        run_as=UID,
        home=str(home),
        tmpdir=str(tmp),
    )
    compiled = compile_step(Inputs.of(flags))
    write_codex_home(compiled.bundle, str(codex_home), owner=UID)
    return build_boundary(compiled, run_as=UID, extra_env={})


def main() -> int:
    node, script, codex = node_binary(), install_dir("ts") / SCRIPT, codex_binary()
    if os.geteuid() != 0 or not shutil.which("bwrap") or node is None or not script.is_file():
        print("needs root, bwrap, node and codex-acp 2.6.0 (.ci/tools.sh)", file=sys.stderr)
        return 2
    base = Path(tempfile.mkdtemp(prefix="profilec-bench-run-", dir="/var/tmp"))
    try:
        os.chmod(base, 0o755)
        lay = make_layout(base / "l")
        home, tmp = base / "state" / "home", base / "state" / "tmp"
        home.mkdir(parents=True)
        tmp.mkdir()
        give(UID, lay.host_target.parent, lay.codex_home, lay.workspace, base / "state")
        for d in (lay.host_target.parent, lay.codex_home, home, tmp):
            os.chmod(d, 0o700)
        provider = base / "provider.toml"
        provider.write_text(PROVIDER)
        os.chmod(provider, 0o600)
        adapter = ["/usr/bin/env", f"CODEX_PATH={codex}", node, str(script)]
        path = os.environ.get("PATH", "/usr/bin:/bin")
        bare_env = {"PATH": path, "CODEX_HOME": str(lay.codex_home), "HOME": str(home)}
        bare_env["TMPDIR"] = str(tmp)
        run_argv = [
            sys.executable, "-m", "profilec", "run", "--roots", str(lay.manifest),
            "--workspace-root", str(lay.workspace), "--codex-home", str(lay.codex_home),
            "--run-as", str(UID), "--home", str(home), "--tmpdir", str(tmp),
            "--provider-config", str(provider), "--", *adapter,
        ]  # fmt: skip
        run_env = {"PATH": path, "PYTHONPATH": str(REPO)}
        cwd = str(lay.workspace)
        boundary = _boundary(lay.manifest, lay.workspace, lay.codex_home, home, tmp)
        bare, inside, run = [], [], []
        try:
            for _ in range(RUNS):
                bare.append(to_initialize([*SETPRIV, *adapter], bare_env, cwd))
                argv = [*boundary.argv, *adapter]
                inside.append(to_initialize(argv, dict(boundary.env), cwd))
                run.append(to_initialize(run_argv, run_env, cwd))
        finally:
            boundary.cleanup()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    b, r, i = statistics.median(bare), statistics.median(run), statistics.median(inside)
    rounds = statistics.median(x - y for x, y in zip(run, bare, strict=True))
    print(f"runs: {RUNS}, interleaved; codex-acp 2.6.0, Codex {codex}")
    print("| to the first `initialize` answer | median |")
    print("|---|---|")
    print(f"| bare adapter (setpriv to uid {UID}) | {b * 1000:.0f} ms |")
    print(f"| the adapter inside the boundary, no profilec process | {i * 1000:.0f} ms |")
    print(f"| `profilec run` (compile, check, boundary, adapter) | {r * 1000:.0f} ms |")
    print(
        f"added by run: {(r - b) * 1000:.0f} ms = {(r - b) / b:.0%} of the bare adapter's "
        f"time (median of per-round differences {rounds * 1000:.0f} ms; issue 39: at most 20%)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
