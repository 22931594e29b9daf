"""Dynamic canaries on a real engine with the real Codex writer (refresh race, lock holding).

The positive case (a deny on the vault, the directory that holds the real file, plus a deny on
the pre-created `$CODEX_HOME/auth.lock`) must pass in every mode with every save persisted.
Each negative control must fail, and by the class that names what broke:
- file-only deny (the pre-vault profile): `refresh-leak` in every mode;
- readable vault: the writer's temp file `.auth-XXXXXX` opened by the model loop, `temp-leak`;
- readable lock (`$CODEX_HOME/auth.lock` not denied): `lock-held` and `save-blocked`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from profilec.api import load_and_compile
from profilec.canary.engine import leftovers
from profilec.canary.run import run_canaries
from profilec.models.canary import CanaryMode, CanaryReport, Probe
from profilec.models.compiled import CompiledBundle, CompiledEntry, CompiledProfile, Provenance
from tests.helpers import make_layout

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = [pytest.mark.docker, pytest.mark.codex]

MODES = ["read-only", "agent", "agent-full-access"]


def _bundle(tmp_path: Path) -> CompiledBundle:
    lay = make_layout(tmp_path / "l", hop_dir=True)
    return load_and_compile(
        str(lay.manifest), workspace_roots=[str(lay.workspace)], codex_home=str(lay.codex_home)
    )


def _entry(path: str, access: str, detail: str) -> CompiledEntry:
    return CompiledEntry(
        path=path,
        access=access,  # type: ignore[arg-type]
        provenance=(Provenance(reason="target", root_id="codex-auth", detail=detail),),
    )


def _rewrite(bundle: CompiledBundle, *, vault: bool, lock: bool) -> CompiledBundle:
    """The bundle with hand-set credential entries (whatever compile emits today).

    vault=True: deny the vault (no separate deny on the file inside it); False: deny only the
    target file and leave the vault readable. lock=True adds a deny on `$CODEX_HOME/auth.lock`.
    """
    root = bundle.roots[0]
    vault_dir = os.path.dirname(root.target)
    assert bundle.codex_home is not None
    lock_path = bundle.codex_home.path + "/auth.lock"
    drop = {root.target, vault_dir, lock_path}

    def fix(p: CompiledProfile) -> CompiledProfile:
        entries = [e for e in p.entries if e.path not in drop]
        if vault:
            entries.append(_entry(vault_dir, "deny", "vault (hand-written)"))
        else:
            entries += [
                _entry(vault_dir, "read", "readable vault (control)"),
                _entry(root.target, "deny", "file-only deny (control)"),
            ]
        if lock:
            entries.append(_entry(lock_path, "deny", "writer lock (hand-written)"))
        return p.model_copy(update={"entries": tuple(sorted(entries, key=lambda e: e.path))})

    return bundle.model_copy(update={"profiles": tuple(fix(p) for p in bundle.profiles)})


def _run(
    bundle: CompiledBundle,
    codex: Path,
    client: DockerClient,
    run_id: str,
    modes: list[str],
    saves: int = 1,
) -> CanaryReport:
    t0 = time.monotonic()
    report = run_canaries(
        bundle,
        codex_bin=codex,
        client=client,
        run_id=run_id,
        modes=modes,
        dynamic_saves=saves,
        parent_probes=False,
    )
    print(f"\n{','.join(modes)}: {time.monotonic() - t0:.2f}s\n{report.to_text()}")
    assert [m.mode for m in report.modes] == modes
    assert leftovers(client, run_id) == []
    return report


def _probe(mode: CanaryMode, prefix: str) -> Probe:
    return next(p for p in mode.probes if p.name.startswith(prefix))


def _saves_persisted(mode: CanaryMode) -> None:
    for name in ("save-refresh-", "save-login-"):
        p = _probe(mode, name)
        assert p.ok and "persisted=True" in p.output, (mode.mode, p)


def test_vault_deny_holds_through_real_saves(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    bundle = _rewrite(_bundle(tmp_path), vault=True, lock=True)
    report = _run(bundle, codex_bin, docker_client, canary_run, MODES)
    assert report.passed, report.to_text()
    for m in report.modes:
        _saves_persisted(m)
        race = _probe(m, "race-")
        assert race.ok and "LOOP-END" in race.output
        # It kept probing: more passes than the final one after the stop file (a pass takes
        # ~0.7 s on a loaded machine, so a count of passes is not a speed target: CI saw 6).
        assert int(race.output.split("LOOP-END ")[1].split()[0]) >= 2
        held = _probe(m, "lock-hold-")
        assert held.ok and held.output.count("NOT-HELD") == 2, held.output
        assert _probe(m, "save-under-lock-").ok


def test_file_only_deny_leaks_under_refresh(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    bundle = _rewrite(_bundle(tmp_path), vault=False, lock=True)
    report = _run(bundle, codex_bin, docker_client, canary_run, MODES)
    assert not report.passed
    for m in report.modes:
        race = _probe(m, "race-")
        assert "refresh-leak" in race.failures, (m.mode, race.output)
        # The leak is the trusted side's new values (the refreshed token, then the login key),
        # read through the credential's spellings.
        spelled = [ln for ln in race.output.split("\n") if ln.startswith("S ")]
        assert any("PROFILEC-CANARY-NEW-" in ln for ln in spelled), race.output
        assert any("PROFILEC-CANARY-KEY-" in ln for ln in spelled), race.output
        _saves_persisted(m)  # the writer itself worked
        # auth.json.lock sits in the readable vault: the model holds it and the login gives up.
        blocked = _probe(m, "save-under-lock-")
        assert "save-blocked" in blocked.failures
        assert "credential commit lock timed out" in blocked.output, blocked.output


def test_readable_vault_temp_file_is_caught(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    # The temp file lives for ~1-6 ms per save (write + fsync + rename, strace), so the model
    # loop gets several saves to open one: the refresh (two saves) and four logins. Catching it
    # is a matter of chance, and a loaded machine slows the loop (43 passes in one run beside
    # two busy loops, no catch): up to three races, each judged on its own; one catch decides.
    bundle = _rewrite(_bundle(tmp_path), vault=False, lock=True)
    outputs: list[str] = []
    for _ in range(3):
        report = _run(bundle, codex_bin, docker_client, canary_run, ["agent"], saves=4)
        race = _probe(report.modes[0], "race-")
        assert "refresh-leak" in race.failures, race.output  # the readable target is read
        if "temp-leak" in race.failures:
            assert "/.auth-" in race.output
            return
        outputs.append(race.output)
    raise AssertionError("no race of 3 caught the temp file:\n" + "\n---\n".join(outputs))


def test_readable_lock_blocks_the_save(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    bundle = _rewrite(_bundle(tmp_path), vault=True, lock=False)
    report = _run(bundle, codex_bin, docker_client, canary_run, ["read-only"])
    m = report.modes[0]
    assert set(m.failures) == {"lock-held", "save-blocked"}, report.to_text()
    held = _probe(m, "lock-hold-")
    lines = held.output.split("\n")
    assert any(ln.startswith("HELD ") and ln.endswith("/auth.lock") for ln in lines), lines
    # auth.json.lock sits in the denied vault: the model cannot open it.
    assert any(ln.startswith("NOT-HELD ") and "/auth.json.lock " in ln for ln in lines), lines
    blocked = _probe(m, "save-under-lock-")
    assert "persisted=False" in blocked.output
    _saves_persisted(m)  # without the model's lock the same saves went through


def test_refused_sandbox_is_an_error_not_a_pass(
    tmp_path: Path, docker_client: DockerClient, codex_bin: Path, canary_run: str
) -> None:
    # A deny on the symlink in agent-full-access: Codex refuses every sandboxed command
    # ("crosses writable symlink"), so the race loop never starts. That is `error`, the saves
    # are not made, and the mode's tampering probes still run.
    bundle = _bundle(tmp_path)
    root = bundle.roots[0]

    def fix(p: CompiledProfile) -> CompiledProfile:
        entries = [
            e.model_copy(update={"path": root.path}) if e.path == root.vault else e
            for e in p.entries
        ]
        return p.model_copy(update={"entries": tuple(sorted(entries, key=lambda e: e.path))})

    broken = bundle.model_copy(update={"profiles": tuple(fix(p) for p in bundle.profiles)})
    report = _run(broken, codex_bin, docker_client, canary_run, ["agent-full-access"])
    m = report.modes[0]
    race = _probe(m, "race-")
    assert race.failures == ("error",) and "crosses writable symlink" in race.output, race
    assert not any(p.name.startswith("save-") for p in m.probes)
    assert any(p.name.startswith("tamper-") for p in m.probes)
    assert m.error is None
