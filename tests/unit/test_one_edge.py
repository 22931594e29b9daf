"""The one edge (compiler/inputs.py): each input file is read once per run, no module reads a file
beside it (an AST scan of compiler/ with a commented allow-list of reads that are no input),
and everything a run reports about an input (provenance hashes, lines) comes from the bytes it
compiled.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from profilec import readers as roots_mod
from profilec.bundle.load import compile_document
from profilec.cli import main
from profilec.flags import CompileFlags
from profilec.inputs import Inputs
from profilec.resources import profiles_dir
from tests.helpers import Layout, make_layout, patch_everywhere

_OPENED: list[str] = []
_RECORDING = [False]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _RECORDING[0] and event == "open" and args and isinstance(args[0], (str, bytes)):
        path = args[0].decode() if isinstance(args[0], bytes) else args[0]
        _OPENED.append(os.path.realpath(path))


sys.addaudithook(_hook)  # audit hooks cannot be removed; it records only while enabled


def _run(argv: list[str]) -> tuple[int, Counter[str]]:
    _OPENED.clear()
    _RECORDING[0] = True
    try:
        rc = main(argv)
    finally:
        _RECORDING[0] = False
    return rc, Counter(_OPENED)


def _inputs(tmp_path: Path) -> tuple[Layout, Path, Path, list[str]]:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    session = tmp_path / "l" / "session.json"
    session.write_text(json.dumps({"model": "gpt-5", "notify": ["/bin/true"]}), encoding="utf-8")
    mcp = tmp_path / "l" / "mcp.toml"
    mcp.write_text(
        (
            'schema_version = 2\ncodex = "/usr/bin/codex"\n'
            '[servers.bridge]\ncommand = "/usr/bin/true"\ncwd = "/srv/agentd/mcp"\n'
        ),
        encoding="utf-8",
    )
    os.chmod(mcp, 0o600)
    flags = [
        "--roots", str(lay.manifest),
        "--workspace-root", str(lay.workspace),
        "--codex-home", str(lay.codex_home),
        "--session-config", str(session),
        "--vouched-mcp", str(mcp),
        "--tmpdir", str(tmp_path / "l" / "ws"),
    ]  # fmt: skip
    return lay, session, mcp, flags


def _policy_files() -> set[str]:
    pdir = profiles_dir()
    return {os.path.realpath(os.path.join(pdir, n)) for n in os.listdir(pdir)}


def _assert_once(opened: Counter[str], required: list[Path]) -> None:
    inputs = {os.path.realpath(p) for p in required} | _policy_files()
    twice = {p: n for p, n in opened.items() if p in inputs and n > 1}
    assert twice == {}, f"input files read more than once: {twice}"
    for p in required:
        assert opened[os.path.realpath(p)] == 1, p


def test_check_lock_reads_every_input_once(tmp_path: Path) -> None:
    lay, session, mcp, flags = _inputs(tmp_path)
    lock = tmp_path / "l" / "profilec.lock"
    assert main(["lock", *flags, "--out", str(lock)]) == 0
    rc, opened = _run(["check", *flags, "--lock", str(lock), "--format", "json", "--out",
                       str(tmp_path / "report.json")])  # fmt: skip
    assert rc in (0, 1)  # findings are not the point; a drift would be exit 9
    _assert_once(opened, [lay.manifest, session, mcp, lock])
    policy_read = {p for p in opened if p in _policy_files()}
    assert any(p.endswith("modes.toml") for p in policy_read)
    assert any(p.endswith("session-allowlist.toml") for p in policy_read)


def test_check_lock_passes_the_launch_flags_through(tmp_path: Path) -> None:
    """A lock made with --vouched-mcp/--tmpdir/--home verifies with the same flags."""
    _, _, _, flags = _inputs(tmp_path)
    home = ["--home", str(tmp_path / "l" / "ws")]
    lock = tmp_path / "l" / "profilec.lock"
    assert main(["lock", *flags, *home, "--out", str(lock)]) == 0
    out = str(tmp_path / "r.json")
    rc, _ = _run(["check", *flags, *home, "--lock", str(lock), "--format", "json", "--out", out])
    assert rc in (0, 1)
    # Dropping a flag is drift: the lock pinned what the launch really gets.
    cut = flags.index("--vouched-mcp")
    no_mcp = flags[:cut] + flags[cut + 2 :]
    assert main(["check", *no_mcp, *home, "--lock", str(lock), "--out", out]) == 9


def test_audit_reads_every_input_once(tmp_path: Path) -> None:
    lay, session, _, _ = _inputs(tmp_path)
    rc, opened = _run(
        [
            "audit",
            "--roots", str(lay.manifest),
            "--workspace-root", str(lay.workspace),
            "--codex-home", str(lay.codex_home),
            "--session-config", str(session),
            "--out", str(tmp_path / "audit.md"),
        ]
    )  # fmt: skip
    assert rc == 0
    _assert_once(opened, [lay.manifest, session])


def test_a_file_changed_between_reads_cannot_split_hash_from_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest is rewritten right after its first read: what was compiled and the hash
    the provenance reports must both be the first version."""
    lay = make_layout(tmp_path / "l")
    first = lay.manifest.read_bytes()
    second = first.replace(b"codex-auth", b"swapped-id")
    real = roots_mod.read_trusted_bytes
    reads: list[str] = []

    def racing(path: str) -> bytes:
        data = real(path)
        reads.append(path)
        if os.path.realpath(path) == os.path.realpath(lay.manifest):
            lay.manifest.write_bytes(second)  # the attacker's edit lands after the read
        return data

    patch_everywhere(monkeypatch, real, racing)
    bundle, doc = compile_document(
        Inputs(
            CompileFlags.from_text(roots=str(lay.manifest), workspace_roots=(str(lay.workspace),))
        )
    )
    assert [r.id for r in bundle.roots] == ["codex-auth"]
    want = "sha256:" + hashlib.sha256(first).hexdigest()
    assert doc["provenance"]["inputs"]["roots-manifest"] == want
    assert reads.count(str(lay.manifest)) == 1


def test_audit_takes_every_compile_flag_and_compiles_with_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README: audit takes the compile flags. --vouched-mcp, --tmpdir and --home reach the
    audit's compile: its report names the bundle `compile --format bundle` makes from them."""
    _, _, _, flags = _inputs(tmp_path)
    flags += ["--home", str(tmp_path / "l" / "ws")]
    assert main(["compile", *flags, "--format", "bundle"]) == 0
    doc = json.loads(capsys.readouterr().out)
    plain = flags[: flags.index("--vouched-mcp")]
    assert main(["compile", *plain, "--format", "bundle"]) == 0
    assert json.loads(capsys.readouterr().out)["content_hash"] != doc["content_hash"]
    out = tmp_path / "audit.md"
    assert main(["audit", *flags, "--now", "none", "--out", str(out)]) in (0, 1)
    assert doc["content_hash"] in out.read_text(encoding="utf-8")


def test_audit_offers_each_compile_option() -> None:
    """Every option `compile` takes is an option of `audit`, declared once (the same object)."""
    import typer.main

    from profilec.cli import full_app

    group = typer.main.get_command(full_app())
    opts = {
        name: {o for p in cmd.params for o in p.opts if o.startswith("--")}
        for name, cmd in group.commands.items()  # type: ignore[attr-defined]
    }
    assert opts["compile"] - opts["audit"] == set()
    assert opts["compile"] - opts["lock"] <= {"--format", "--plan-layout"}
    assert opts["compile"] - opts["explain"] <= {"--out", "--plan-layout"}


def test_explain_compiles_with_the_launch_flags(tmp_path: Path) -> None:
    """explain takes the compile flags too (README): --vouched-mcp, and an explicit --home and
    --tmpdir reach its compile, so it explains the profile the launcher gets."""
    import profilec.bundle.load
    from profilec.models.compiled import CompiledBundle

    _, _, mcp, flags = _inputs(tmp_path)
    seen: list[Inputs] = []
    real = profilec.bundle.load.compile_document

    def spy(inp: Inputs) -> tuple[CompiledBundle, dict[str, Any]]:
        seen.append(inp)
        return real(inp)

    home = str(tmp_path / "l" / "ws")
    with pytest.MonkeyPatch.context() as m:
        import profilec.commands.explain

        patch_everywhere(m, real, spy)
        assert main(["explain", "/etc/hosts", "--mode", "agent", *flags, "--home", home]) == 0
    (inp,) = seen
    assert (inp.flags.vouched_mcp, inp.flags.tmpdir, inp.flags.home) == (
        mcp,
        flags[flags.index("--tmpdir") + 1],
        home,
    )


# -- no reader beside the edge -------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parents[2] / "compiler"

#: Calls that open or read a file: by name (builtin open, Path.read_*, os.open, the edge's own
#: readers) or as module.function (a parser handed a file object).
_READ_NAMES = {"open", "read_text", "read_bytes", "read_input", "read_trusted_bytes", "fdopen"}
_READ_QUALIFIED = {("json", "load"), ("tomllib", "load"), ("tomlkit", "load"), ("io", "open")}

#: The edge itself: every input file of a run is read here (compiler/inputs.py), through the
#: one plain reader (fsio.read_input) or the trust check on the open descriptor.
_EDGE = {"inputs.py", "fsio.py", "readers.py:read_trusted_bytes"}

#: Every other file-reading (or file-opening) call under compiler/, as `module:function`, and
#: why it is no input file of a run. A new reader fails the scan until it goes through
#: `Inputs` or is added here with its reason; an entry that no longer matches fails too.
_NOT_INPUTS = {
    # Library defaults below the edge's layer (policy and session sit under profilec.inputs in
    # the import-linter layers, so they cannot build an Inputs): the reader load_policy() and
    # load_allowlist() use when no run hands them one; a run passes Inputs' reader instead.
    "policy.py:_read": "load_policy()'s default reader (fsio.read_input)",
    "session.py:load_allowlist": "load_allowlist() outside a run (fsio.read_input)",
    # Package data shipped with profilec, not input of a run.
    "resources.py:load_schema": "a shipped JSON schema",
    "resources.py:schema_registry": "the shipped JSON schemas",
    "canary/engine.py:seccomp_profile": "the shipped seccomp profile",
    # /proc: process state, no file.
    "procs.py:_stat3": "/proc/PID/stat",
    "procs.py:cmdline_matches": "/proc/PID/cmdline",
    "e2e/layout.py:_mounts_below": "/proc/self/mountinfo",
    # Outputs: files created or written, never read.
    "report/github.py:write_step_summary": "appends to $GITHUB_STEP_SUMMARY",
    "emit/codex_home.py:ensure_writer_lock": "creates the writer's lock file",
    "canary/paths.py:prepare": "creates a lock file",
    "canary/tree.py:_restore_secrets": "writes synthetic secrets into the throwaway tree",
    "canary/parent.py:_as_file": "writes a probe file",
    "canary/parent.py:_prepare": "writes a synthetic secret",
    "canary/image.py:context_tar": "writes an in-memory tar (fileobj)",
    "e2e/layout.py:build_layout": "writes the synthetic session layout",
    "e2e/layout.py:_write_new": "creates a file of the synthetic session layout",
    "run/boundary.py:_ensure_home_writes": "creates Codex's write paths in CODEX_HOME (O_EXCL)",
    # What a probe left in its own throwaway tree, and the probe's own payloads.
    "canary/parent.py:_sha": "hashes a file of the canary's throwaway tree",
    "canary/parent.py:_between_sessions": "a payload and proof files of the throwaway tree",
    "canary/parent.py:_read": "a proof file a probe wrote",
    "e2e/agentconfig.py:_read": "a proof file a session wrote",
    "e2e/agentconfig.py:__init__": "the reader end of the FIFO the vouched server traces into",
    # The environment a probe runs in.
    "canary/image.py:_context_files": "the host's busybox binary, copied into the canary image",
    "e2e/adapters.py:_package_version": "an installed adapter's package.json (its version)",
    # `profilec run`'s own input, no compile flag: the provider config, read once through the
    # trust check on the open descriptor (readers.read_trusted_bytes) before anything compiles.
    "run/session.py:read_provider_config": "--provider-config (trust-checked, read once)",
    # Discovered, not named by a flag: a workspace's own .codex/config.toml the check's lints
    # review (O_NOFOLLOW, the lstat'd inode only, bounded; a protected root is never opened).
    "check/lints/agent_layers.py:_read_workspace_config": "a workspace's .codex/config.toml",
}


def _calls(node: object, where: str, out: list[tuple[str, str]]) -> None:
    """(outermost function, call) for every file-reading call below `node`."""
    import ast

    assert isinstance(node, ast.AST)
    for child in ast.iter_child_nodes(node):
        inner = where
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and where == "<module>":
            inner = child.name
        if isinstance(child, ast.Call):
            f = child.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
            base = None
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                base = f.value.id
            if name in _READ_NAMES or (base, name) in _READ_QUALIFIED:
                out.append((inner, ast.unparse(f)))
        _calls(child, inner, out)


def _readers() -> set[str]:
    """`module:function` of every file-reading call under compiler/."""
    import ast

    found: set[str] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        calls: list[tuple[str, str]] = []
        _calls(ast.parse(path.read_text(encoding="utf-8")), "<module>", calls)
        found.update(f"{module}:{where}" for where, _ in calls)
    return found


def test_no_module_reads_a_file_beside_the_edge() -> None:
    """Every input file is read through compiler/inputs.py: any other file-reading call under
    compiler/ must be the edge itself or an allow-listed read of something that is no input."""
    readers = _readers()
    edge = {r for r in readers if r.split(":")[0] in _EDGE or r in _EDGE}
    stray = sorted(readers - edge - set(_NOT_INPUTS))
    assert stray == [], f"read through Inputs (compiler/inputs.py), not here: {stray}"
    stale = sorted(set(_NOT_INPUTS) - readers)
    assert stale == [], f"allow-listed readers that no longer read: {stale}"
    assert "readers.py:read_trusted_bytes" in readers  # the scan sees the edge's own reader
