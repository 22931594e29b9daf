"""The one edge (compiler/inputs.py): each input file is read once per run, and everything a
run reports about an input (provenance hashes, lines) comes from the bytes it compiled.
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

from profilec import roots as roots_mod
from profilec.bundle.load import compile_document
from profilec.cli import main
from profilec.inputs import Inputs
from profilec.resources import profiles_dir
from tests.helpers import Layout, make_layout

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
        'schema_version = 1\n[servers.bridge]\ncommand = "/usr/bin/true"\n', encoding="utf-8"
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

    monkeypatch.setattr(roots_mod, "read_trusted_bytes", racing)
    bundle, doc = compile_document(
        Inputs(roots=str(lay.manifest), workspace_roots=(str(lay.workspace),))
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
    from profilec.models import CompiledBundle

    _, _, mcp, flags = _inputs(tmp_path)
    seen: list[Inputs] = []
    real = profilec.bundle.load.compile_document

    def spy(inp: Inputs) -> tuple[CompiledBundle, dict[str, Any]]:
        seen.append(inp)
        return real(inp)

    home = str(tmp_path / "l" / "ws")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(profilec.bundle.load, "compile_document", spy)
        assert main(["explain", "/etc/hosts", "--mode", "agent", *flags, "--home", home]) == 0
    (inp,) = seen
    assert (inp.vouched_mcp, inp.tmpdir, inp.home) == (
        str(mcp),
        flags[flags.index("--tmpdir") + 1],
        home,
    )
