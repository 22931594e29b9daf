"""The dynamic canary's pure parts: scripts, seed, classification (no engine, no codex)."""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from profilec.canary import dynamic
from profilec.canary.dynamic import Target, classify_race, condense, race_loop


def _target(tmp: Path) -> Target:
    vault = tmp / "vault"
    return Target(
        "codex-auth",
        str(tmp / "home" / "auth.json"),
        str(vault / "auth.json"),
        str(vault),
        str(tmp / "home"),
        (str(tmp / "home" / "auth.json"), str(vault / "auth.json")),
        (str(tmp / "home"), str(vault)),
    )


def _claims(jwt: str) -> dict[str, object]:
    _head, body, sig = jwt.split(".")
    assert sig, "codex refuses a JWT with an empty third part"
    pad = "=" * (-len(body) % 4)
    return json.loads(base64.urlsafe_b64decode(body + pad))  # type: ignore[no-any-return]


def test_seed_forces_a_refresh_and_holds_the_old_marker_verbatim() -> None:
    now = int(time.time())
    seed = json.loads(dynamic.seeded_auth("PROFILEC-CANARY-SECRET-ab", now))
    assert seed["auth_mode"] == "chatgpt"
    assert seed["tokens"]["refresh_token"] == "PROFILEC-CANARY-SECRET-ab"
    assert seed["tokens"]["account_id"]
    assert _claims(seed["tokens"]["access_token"])["exp"] == now - 3600  # expired
    assert "https://api.openai.com/auth" in _claims(seed["tokens"]["id_token"])
    reply = json.loads(dynamic.token_reply("PROFILEC-CANARY-NEW-cd", now))
    assert reply["refresh_token"] == "PROFILEC-CANARY-NEW-cd"
    assert _claims(reply["access_token"])["exp"] == now + 3600


def test_classify_race_names_the_channel() -> None:
    t = _target(Path("/x"))
    m = "PROFILEC-CANARY-NEW-1"
    assert classify_race("LOOP-READY\nN /x/vault/auth.json\nLOOP-END 9", t, [m]) == []
    assert classify_race(f'S /x/home/auth.json   "refresh_token": "{m}"', t, [m]) == [
        "refresh-leak"
    ]
    assert classify_race(f'F /x/vault/.auth-Ab12Cd   "k": "{m}"', t, [m]) == ["temp-leak"]
    # Listing or opening the writer's temp file is caught even before its bytes are written.
    assert classify_race("N /x/vault/.auth-Ab12Cd", t, [m]) == ["temp-leak"]
    assert classify_race("O /x/vault/.auth-Ab12Cd", t, [m]) == ["temp-leak"]
    # A marker line that is not one of this run's markers is not a leak of it.
    assert classify_race("S /x/home/auth.json PROFILEC-CANARY-OTHER", t, [m]) == []


def test_condense_keeps_markers_and_temp_names_and_counts_the_rest() -> None:
    out = "LOOP-READY\nN /h/a.sqlite\nO /h/a.sqlite\nN /h/b\nN /v/.auth-XyZ\nO /v/.auth-XyZ\n"
    out += "S /v/auth.json M\nLOOP-END 3\n"
    assert condense(out).split("\n") == [
        "LOOP-READY",
        "N /v/.auth-XyZ",
        "O /v/.auth-XyZ",
        "S /v/auth.json M",
        "LOOP-END 3",
        "(3 other names listed or opened)",
    ]


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
def test_race_loop_reads_spellings_lists_dirs_and_stops(tmp_path: Path) -> None:
    t = _target(tmp_path)
    os.makedirs(t.vault)
    os.makedirs(t.home)
    # Markers made at run time, never a token-shaped literal in the repository.
    old = f"PROFILEC-CANARY-SECRET-{secrets.token_hex(6)}"
    new = f"PROFILEC-CANARY-NEW-{secrets.token_hex(6)}"
    Path(t.secret).write_text(f'{{\n  "refresh_token": "{old}"\n}}\n')
    os.symlink(t.secret, t.link)
    stop = tmp_path / "stop"
    proc = subprocess.Popen(
        ["sh", "-c", race_loop(t.spellings, t.dirs, str(stop))],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "LOOP-READY\n"
    # The first pass is under way once it prints a marker line (an event, not a sleep).
    first = proc.stdout.readline()
    assert first.startswith("S "), first
    # Whole at its first appearance (a loop that opens it while still empty would see nothing,
    # which made this test flaky under load): written aside, renamed in.
    staged = tmp_path / "staged"
    staged.write_text(f"{new}\n")
    os.rename(staged, Path(t.vault, ".auth-Q1w2E3"))
    stop.touch()  # the loop makes one more whole pass once it sees the stop file
    out = first + proc.stdout.read()  # communicate() would drop what readline() buffered
    assert proc.wait(timeout=10) == 0
    lines = out.split("\n")
    assert f'S {t.link}   "refresh_token": "{old}"' in lines
    assert f'S {t.secret}   "refresh_token": "{old}"' in lines
    assert f"N {t.vault}/.auth-Q1w2E3" in lines
    assert f"O {t.vault}/.auth-Q1w2E3" in lines
    assert f"F {t.vault}/.auth-Q1w2E3 {new}" in lines
    # Each distinct line once, however many passes ran.
    assert len([ln for ln in lines if ln.startswith("S ")]) == 2
    assert lines[-2].startswith("LOOP-END ") and int(lines[-2].split()[1]) > 1
    markers = [old, new]
    assert classify_race(out, t, markers) == ["refresh-leak", "temp-leak"]


def test_lock_hold_script_tries_every_lock_and_reports() -> None:
    locks = ("/v/auth.json.lock", "/h/auth.lock")
    script = dynamic.lock_hold(("/f/ld.so", "/f/flock"), locks, "/s")
    assert script.count("-n -x") == 2
    assert "HELD /v/auth.json.lock" in script and "NOT-HELD /h/auth.lock" in script
    assert script.rstrip("; }").endswith("echo LOCK-END")


def test_lock_hold_reports_tried_only_after_every_attempt(tmp_path: Path) -> None:
    """LOCKS-TRIED comes after one line per lock, however slow an attempt is (the fixed
    `sleep 1` it replaces let the trusted save start first on a loaded machine)."""
    if shutil.which("flock") is None or shutil.which("busybox") is None:
        pytest.skip("needs flock and busybox (usleep) on this host")
    slow = tmp_path / "slowflock"
    slow.write_text('#!/bin/sh\nsleep 1.5\nexec flock "$@"\n')
    slow.chmod(0o755)
    locks = (str(tmp_path / "a.lock"), str(tmp_path / "b.lock"))
    for lock in locks:
        Path(lock).touch()
    stop = tmp_path / "stop"
    script = dynamic.lock_hold((str(slow),), locks, str(stop))
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    (tmp_path / "usleep").symlink_to(shutil.which("busybox") or "busybox")
    proc = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    seen: list[str] = []
    for line in proc.stdout:
        seen.append(line.rstrip("\n"))
        if seen[-1] == "LOCKS-TRIED":
            break
    stop.touch()
    rest, _ = proc.communicate(timeout=10)
    assert [x.split(" ")[0] for x in seen] == ["HELD", "HELD", "LOCKS-TRIED"], seen
    assert rest.split("\n")[-2] == "LOCK-END"


def test_flock_mounts_are_read_only_and_start_through_the_loader() -> None:
    if shutil.which("flock") is None:
        pytest.skip("no flock on this host")
    volumes, argv = dynamic.flock_mounts()
    assert all(v["mode"] == "ro" for v in volumes.values())
    assert argv[-1] == f"{dynamic.FLOCK_MOUNT}/flock"
    assert {v["bind"] for v in volumes.values()} >= {f"{dynamic.FLOCK_MOUNT}/flock"}
